/** Assembly: the adapters chosen by configuration, embedded real engines where nothing is configured, and the guarantee they add up to. */
package dev.idemkit.app.wiring;
