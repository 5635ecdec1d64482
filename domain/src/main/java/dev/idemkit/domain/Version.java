package dev.idemkit.domain;

/** A monotonic per-aggregate version carried by an event; the versioned strategy applies only newer ones. */
public record Version(long value) implements Comparable<Version> {
    public Version {
        if (value < 0) {
            throw new IllegalArgumentException("version is " + value + " (rule: >= 0)");
        }
    }

    public static Version of(long value) {
        return new Version(value);
    }

    public boolean isNewerThan(Version other) {
        return value > other.value;
    }

    @Override
    public int compareTo(Version o) {
        return Long.compare(value, o.value);
    }
}
