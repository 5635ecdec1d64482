package dev.idemkit.app.config;

/** A setting is missing, malformed or unusable; the message names the setting and where it can be set. */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String setting;

    public ConfigException(String setting, String message) {
        super("invalid setting '" + setting + "' (flag " + flag(setting) + ", environment "
                + Sources.envName(setting) + "): " + message);
        this.setting = setting;
    }

    /** The command-line flag of a setting: {@code pg.url} is {@code --pg-url}; {@code api.keys} is the repeatable {@code --api-key}. */
    static String flag(String setting) {
        return setting.equals("api.keys") ? "--api-key" : setting.equals("operator.keys") ? "--operator-key"
                : "--" + setting.replace('.', '-');
    }

    public String setting() {
        return setting;
    }
}
