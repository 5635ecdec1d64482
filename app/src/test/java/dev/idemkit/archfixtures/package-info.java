/**
 * Test fixtures that break the architecture rules on purpose, under a root of their own
 * ({@code dev.idemkit.archfixtures}) so that each rule can be shown to fail on them while the real
 * code ({@code dev.idemkit}) passes. Never imported by the production check.
 */
package dev.idemkit.archfixtures;
