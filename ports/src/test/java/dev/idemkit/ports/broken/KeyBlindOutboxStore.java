package dev.idemkit.ports.broken;

import dev.idemkit.ports.memory.InMemoryOutboxStore;

/**
 * Broken on purpose: hands out the rows of a key even while another relay holds it, so two relays publish one key at
 * once and its order is lost.
 */
public class KeyBlindOutboxStore extends InMemoryOutboxStore {
    @Override
    protected boolean respectsHeldKeys() {
        return false;
    }
}
