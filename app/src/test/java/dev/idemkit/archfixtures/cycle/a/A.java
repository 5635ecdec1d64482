package dev.idemkit.archfixtures.cycle.a;

import dev.idemkit.archfixtures.cycle.b.B;

/** One half of a package cycle. */
public class A {
    public B b() {
        return new B();
    }
}
