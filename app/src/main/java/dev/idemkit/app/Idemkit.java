package dev.idemkit.app;

import dev.idemkit.app.config.ConfigException;
import dev.idemkit.ports.out.TopologyMismatchException;
import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code idemkit} command. Exit codes: 0 success, 1 a demo criterion failed or the work failed,
 * 2 bad usage or configuration (one clear message naming the setting, no stack trace; also a broker queue that
 * exists with other arguments than the settings want), 3 a service
 * could not be reached.
 */
@Command(name = "idemkit", mixinStandardHelpOptions = true, version = "idemkit 0.1.0",
        description = "Idempotent processing under at-least-once delivery.",
        subcommands = {ServeCommand.class, DemoCommand.class, DlqCommand.class, OutboxCommand.class, PublishCommand.class})
public final class Idemkit implements Runnable {
    static final int EXIT_FAILED = 1;
    static final int EXIT_CONFIG = 2;
    static final int EXIT_UNREACHABLE = 3;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is required: serve, demo, dlq"
                + " or publish");
    }

    public static void main(String[] args) {
        System.exit(execute(args, System.getenv(), new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the command line; returns the exit code instead of exiting (for tests). */
    public static int execute(String[] args, Map<String, String> env, PrintWriter out, PrintWriter err) {
        CommandLine cli = new CommandLine(new Idemkit(), new EnvironmentFactory(env));
        cli.setOut(out);
        cli.setErr(err);
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            Throwable root = e;
            if (root instanceof ConfigException) {
                err.println("idemkit: " + root.getMessage());
                return EXIT_CONFIG;
            }
            if (root instanceof TopologyMismatchException) {
                // the broker holds a queue the settings do not match: a configuration problem, not a retryable one
                err.println("idemkit: " + root.getMessage());
                return EXIT_CONFIG;
            }
            if (root instanceof Unreachable u) {
                err.println("idemkit: " + u.getMessage());
                return EXIT_UNREACHABLE;
            }
            err.println("idemkit: " + describe(root));
            return EXIT_FAILED;
        });
        return cli.execute(args);
    }

    static String describe(Throwable t) {
        StringBuilder s = new StringBuilder(t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage());
        for (Throwable c = t.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            if (c.getMessage() != null && !s.toString().contains(c.getMessage())) {
                s.append(" (").append(c.getMessage()).append(')');
                break;
            }
        }
        return s.toString();
    }

    /** A service named in the configuration did not answer; the message names it and its address. */
    static final class Unreachable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Unreachable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Gives every command the process environment (or a test's). */
    static final class EnvironmentFactory implements CommandLine.IFactory {
        private final Map<String, String> env;

        EnvironmentFactory(Map<String, String> env) {
            this.env = Map.copyOf(env);
        }

        @Override
        public <K> K create(Class<K> cls) throws Exception {
            K instance = CommandLine.defaultFactory().create(cls);
            if (instance instanceof AppCommand c) {
                c.environment = env;
            }
            return instance;
        }
    }
}
