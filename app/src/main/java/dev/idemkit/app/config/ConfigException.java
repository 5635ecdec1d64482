package dev.idemkit.app.config;

/** A setting is missing, malformed or unusable; the message names the setting and where it can be set. */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String setting;

    public ConfigException(String setting, String message) {
        super("invalid setting '" + setting + "' (flag --" + setting.replace('.', '-') + ", environment "
                + Sources.envName(setting) + "): " + message);
        this.setting = setting;
    }

    public String setting() {
        return setting;
    }
}
