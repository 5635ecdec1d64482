/** Driven ports: what the core needs from the outside, named after the need, never after a technology. */
package dev.idemkit.ports.out;
