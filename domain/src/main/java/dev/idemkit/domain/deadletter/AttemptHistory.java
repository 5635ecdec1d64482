package dev.idemkit.domain.deadletter;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The attempts a message has been through, encoded as one header value so that the history travels
 * with the message through the broker (a crash while a retry waits loses nothing).
 *
 * <p>Format: one attempt per line, {@code number TAB ISO-8601-instant TAB error}, with backslash,
 * tab, newline and carriage return in the error escaped as {@code \\}, {@code \t}, {@code \n}, {@code \r}.
 */
public final class AttemptHistory {
    /** The header that carries the encoded history. */
    public static final String HEADER = DeadLetterHeaders.ATTEMPTS;
    /** Errors longer than this are cut, so that a header stays small. */
    public static final int MAX_ERROR_LENGTH = 500;

    private AttemptHistory() {}

    public static String encode(List<AttemptRecord> attempts) {
        StringBuilder out = new StringBuilder();
        for (AttemptRecord a : attempts) {
            if (out.length() > 0) {
                out.append('\n');
            }
            String error = a.error().length() > MAX_ERROR_LENGTH ? a.error().substring(0, MAX_ERROR_LENGTH) : a.error();
            out.append(a.number()).append('\t').append(a.at()).append('\t').append(escape(error));
        }
        return out.toString();
    }

    /**
     * @throws IllegalArgumentException when the text is not a history this class wrote
     */
    public static List<AttemptRecord> decode(String encoded) {
        List<AttemptRecord> attempts = new ArrayList<>();
        if (encoded == null || encoded.isEmpty()) {
            return attempts;
        }
        for (String line : encoded.split("\n", -1)) {
            String[] parts = line.split("\t", 3);
            if (parts.length != 3) {
                throw new IllegalArgumentException("not an attempt history line (number TAB instant TAB error)");
            }
            try {
                attempts.add(new AttemptRecord(Integer.parseInt(parts[0]), Instant.parse(parts[1]), unescape(parts[2])));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("not an attempt history line: " + e.getMessage(), e);
            }
        }
        return attempts;
    }

    public static List<AttemptRecord> append(List<AttemptRecord> history, AttemptRecord next) {
        List<AttemptRecord> out = new ArrayList<>(history);
        out.add(next);
        return List.copyOf(out);
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r");
    }

    private static String unescape(String s) {
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char n = s.charAt(++i);
                out.append(switch (n) {
                    case 't' -> '\t';
                    case 'n' -> '\n';
                    case 'r' -> '\r';
                    default -> n;
                });
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
