package dev.idemkit.app.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * Where a setting's value comes from, highest first: a command-line flag ({@code --pg-url}), an
 * environment variable ({@code IDEMKIT_PG_URL}), a properties file ({@code pg.url=...}, given by
 * {@code --config} or {@code IDEMKIT_CONFIG}), then the default.
 */
public final class Sources {
    private final Map<String, String> flags;
    private final Map<String, String> env;
    private final Properties file;

    public Sources(Map<String, String> flags, Map<String, String> env, Properties file) {
        this.flags = new HashMap<>(flags);
        this.env = Map.copyOf(env);
        this.file = file;
    }

    /** Reads the properties file named by the {@code config} flag or {@code IDEMKIT_CONFIG}, if any. */
    public static Sources of(Map<String, String> flags, Map<String, String> env) {
        Properties file = new Properties();
        String path = flags.getOrDefault("config", env.get(envName("config")));
        if (path != null) {
            Path p = Path.of(path);
            if (!Files.isReadable(p)) {
                throw new ConfigException("config", "properties file " + p + " does not exist or is not readable");
            }
            try (Reader r = Files.newBufferedReader(p)) {
                file.load(r);
            } catch (IOException | IllegalArgumentException e) {
                throw new ConfigException("config", "properties file " + p + " could not be read: " + e.getMessage());
            }
        }
        return new Sources(flags, env, file);
    }

    public static String envName(String setting) {
        return "IDEMKIT_" + setting.replace('.', '_').replace('-', '_').toUpperCase(Locale.ROOT);
    }

    public Optional<String> get(String setting) {
        String v = flags.get(setting);
        if (v == null) {
            v = env.get(envName(setting));
        }
        if (v == null) {
            v = file.getProperty(setting);
        }
        return Optional.ofNullable(v).map(String::strip).filter(s -> !s.isEmpty());
    }

    /** The environment variables whose names start with {@code prefix} (another library's own, such as OTEL_*). */
    public Map<String, String> environmentStartingWith(String prefix) {
        Map<String, String> out = new HashMap<>();
        env.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                out.put(k, v);
            }
        });
        return out;
    }
}
