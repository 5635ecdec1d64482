package dev.idemkit.archfixtures.domain;

/** Violates "libraries do not print". */
public class PrintsToStdout {
    public void shout() {
        System.out.println("decided");
    }
}
