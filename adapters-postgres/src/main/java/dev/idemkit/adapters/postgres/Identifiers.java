package dev.idemkit.adapters.postgres;

import java.util.regex.Pattern;

/**
 * SQL identifiers (tables, columns, schemas) given by users of the mapping records. Only plain
 * lowercase identifiers pass, and they are double-quoted when put into SQL, so an identifier can
 * never carry SQL of its own. Values are never put into SQL text: they are always bound.
 */
final class Identifiers {
    private static final Pattern PLAIN = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

    private Identifiers() {}

    /** @throws IllegalArgumentException naming the identifier and the rule */
    static String requireValid(String what, String identifier) {
        if (identifier == null || !PLAIN.matcher(identifier).matches()) {
            throw new IllegalArgumentException(what + " must match [a-z_][a-z0-9_]{0,62}, got "
                    + (identifier == null ? "null" : "\"" + printable(identifier) + "\""));
        }
        return identifier;
    }

    /** A table name, optionally schema-qualified ({@code schema.table}), each part valid. */
    static String requireValidTable(String table) {
        if (table == null) {
            throw new IllegalArgumentException("table must not be null");
        }
        String[] parts = table.split("\\.", -1);
        if (parts.length > 2) {
            throw new IllegalArgumentException("table must be name or schema.name, got \"" + printable(table) + "\"");
        }
        for (String p : parts) {
            requireValid("table", p);
        }
        return table;
    }

    /** The identifier double-quoted (safe: validated identifiers hold no quote). */
    static String quote(String validated) {
        StringBuilder out = new StringBuilder();
        for (String part : validated.split("\\.")) {
            if (out.length() > 0) {
                out.append('.');
            }
            out.append('"').append(part).append('"');
        }
        return out.toString();
    }

    private static String printable(String s) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < Math.min(s.length(), 80); i++) {
            char c = s.charAt(i);
            out.append(c < 0x20 || c > 0x7e ? '?' : c);
        }
        return out.toString();
    }
}
