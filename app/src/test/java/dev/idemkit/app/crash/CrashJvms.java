package dev.idemkit.app.crash;

import dev.idemkit.testsupport.ChildJvm;
import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import net.bytebuddy.agent.ByteBuddyAgent;

/**
 * The crash tests' child JVMs: this test's class path, the Byte Buddy agent (so that {@link CrashAgent} can arm its
 * crash points in the child), logs under {@code target/crash-logs}.
 */
public final class CrashJvms {
    private CrashJvms() {}

    /** Starts {@code mainClass} with the system properties {@code props} and the test's environment plus {@code env}. */
    public static ChildJvm start(String mainClass, Map<String, String> props, Map<String, String> env, String logName)
            throws IOException {
        return start(mainClass, List.of(), props, env, logName);
    }

    /** As above, with command-line arguments. */
    public static ChildJvm start(String mainClass, List<String> args, Map<String, String> props,
            Map<String, String> env, String logName) throws IOException {
        return ChildJvm.of(mainClass).jvmOptions("-javaagent:" + agentJar()).properties(props).env(env).args(args)
                .log(Path.of("target", "crash-logs"), logName).start();
    }

    private static String agentJar() {
        try {
            return new File(ByteBuddyAgent.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getPath();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
