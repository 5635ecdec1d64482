package dev.idemkit.archfixtures.cycle.b;

import dev.idemkit.archfixtures.cycle.a.A;

/** The other half of a package cycle. */
public class B {
    public A a() {
        return new A();
    }
}
