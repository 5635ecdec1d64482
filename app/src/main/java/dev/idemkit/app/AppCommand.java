package dev.idemkit.app;

import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.wiring.Assembly;
import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;

/** A subcommand that assembles the configured adapters; prints what it uses and the guarantee first. */
abstract class AppCommand implements Callable<Integer> {
    @Mixin
    GlobalOptions options;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    Map<String, String> environment = System.getenv();

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    AppSettings settings() {
        return options.resolve(environment);
    }

    /**
     * @throws Idemkit.Unreachable when a configured service does not answer
     */
    Assembly assemble(AppSettings settings) {
        try {
            Assembly assembly = Assembly.start(settings);
            assembly.banner().forEach(line -> out().println("idemkit " + line));
            return assembly;
        } catch (dev.idemkit.app.config.ConfigException | dev.idemkit.ports.out.TopologyMismatchException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new Idemkit.Unreachable("could not start with " + settings.store().kind().name().toLowerCase()
                    + " store and " + settings.transport().kind().name().toLowerCase() + " transport: "
                    + Idemkit.describe(e), e);
        }
    }
}
