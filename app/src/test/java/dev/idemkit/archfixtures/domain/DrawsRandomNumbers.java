package dev.idemkit.archfixtures.domain;

/** Violates "no randomness except through an injected source". */
public class DrawsRandomNumbers {
    public double jitter() {
        return Math.random();
    }
}
