package dev.idemkit.domain;

/**
 * Text from the wire (ids, reasons, errors, header values), made safe for a log line or a terminal: no
 * control or format characters, so no escape sequence reaches an operator's terminal and no forged line
 * break reaches a log; bounded in length. Pure functions.
 */
public final class Printable {
    private static final int MAX_ID = 80;

    private Printable() {}

    /** An id: visible ASCII only (anything else as {@code ?}), at most 80 characters then {@code ...}; {@code -} for null. */
    public static String id(String raw) {
        if (raw == null) {
            return "-";
        }
        String cut = raw.length() > MAX_ID ? raw.substring(0, MAX_ID) + "..." : raw;
        StringBuilder out = new StringBuilder(cut.length());
        for (int i = 0; i < cut.length(); i++) {
            char c = cut.charAt(i);
            out.append(c >= 0x21 && c <= 0x7E ? c : '?');
        }
        return out.toString();
    }

    /**
     * Free text (a reason, an error message, a body shown on request): letters, digits, punctuation and spaces of
     * any script are kept; every control or format character (ESC, CR, LF, BEL, bidi overrides...) is written as
     * {@code \\uXXXX}; at most {@code max} characters of the input, then {@code ...}. {@code -} for null.
     */
    public static String text(String raw, int max) {
        return raw == null ? "-" : escape(raw, max, false);
    }

    /**
     * As {@link #text}, keeping line feeds and tabs (a body shown as text on a page, where lines matter); every other
     * control or format character is written as {@code \\uXXXX}.
     */
    public static String lines(String raw, int max) {
        return raw == null ? "-" : escape(raw, max, true);
    }

    private static String escape(String raw, int max, boolean keepLines) {
        StringBuilder out = new StringBuilder(Math.min(raw.length(), max) + 8);
        int i = 0;
        for (int kept = 0; i < raw.length() && kept < max; kept++) {
            int cp = raw.codePointAt(i);
            if (safe(cp) || keepLines && (cp == '\n' || cp == '\t')) {
                out.appendCodePoint(cp);
            } else {
                for (char c : Character.toChars(cp)) {
                    out.append(String.format("\\u%04x", (int) c));
                }
            }
            i += Character.charCount(cp);
        }
        if (i < raw.length()) {
            out.append("...");
        }
        return out.toString();
    }

    private static boolean safe(int codePoint) {
        return switch (Character.getType(codePoint)) {
            case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.UNASSIGNED,
                    Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR, Character.PRIVATE_USE -> false;
            default -> true;
        };
    }
}
