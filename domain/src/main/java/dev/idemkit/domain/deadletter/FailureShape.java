package dev.idemkit.domain.deadletter;

import dev.idemkit.domain.Printable;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The shape of a dead letter's reason: what its failure has in common with others of the same cause. A hundred dead
 * letters saying "insufficient funds for account 42", "... 7", "... 1093" are one failure to an operator, not a hundred;
 * grouping them by shape lets the console show one row with a count and redrive it on one approval.
 *
 * <p>The shape is the reason with its variable parts written as placeholders, in this order: quoted strings
 * ({@code 'x'}, {@code "x"}: {@code <str>}), ISO-8601 timestamps and dates ({@code <time>}), UUIDs ({@code <uuid>}),
 * e-mail addresses ({@code <email>}), hexadecimal ids of six or more digits holding a digit and a letter, or with
 * {@code 0x} ({@code <hex>}), and numbers not glued to a letter ({@code <n>}: {@code order 42} and {@code acc-42} become
 * {@code order <n>} and {@code acc-<n>}, {@code S3Exception} and {@code sha256} stay as they are, so a type name keeps
 * its digits); control characters escaped ({@link Printable#text}), runs of whitespace as one space, at most
 * {@link #MAX_LENGTH} characters (cut at a space where one is near, then {@code " ..."}). Everything else, the exception
 * type above all, is kept: two exception types with the same message are two shapes. The reason's leading disposition
 * ({@code gave up after <n> attempts: }, {@code non-retryable: }) is part of the shape.
 *
 * <p>Idempotent: the shape of a shape is itself ({@code of(of(r).text()).equals(of(r))}), so the text the console
 * shows is the name a client sends back to redrive the group, and {@link #FailureShape(String)} accepts exactly the
 * texts that are shapes.
 */
public record FailureShape(String text) {
    /** The longest shape, in characters: a group's name, shown in a table cell and sent back in a request. */
    public static final int MAX_LENGTH = 300;
    /** How much of a reason is read: its shape is cut to MAX_LENGTH anyway, and the patterns' work stays linear in it. */
    static final int MAX_READ = 4096;

    private static final String ELLIPSIS = " ...";
    /** A quote opens after the start, a space or an opening punctuation, and closes before the end, a space or closing punctuation. */
    private static final Pattern QUOTED = Pattern.compile(
            "(?<=^|[\\s(\\[{=:,])(?:'[^']*'|\"[^\"]*\")(?=$|[\\s)\\]},.;:!?])");
    private static final Pattern TIME = Pattern.compile(
            "(?<![\\w.])\\d{4}-\\d{2}-\\d{2}(?:[T ]\\d{2}:\\d{2}(?::\\d{2}(?:[.,]\\d+)?)?(?:Z|[+-]\\d{2}(?::?\\d{2})?)?)?"
                    + "(?![\\w])");
    private static final Pattern UUID = Pattern.compile(
            "(?<![\\w])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![\\w])");
    private static final Pattern EMAIL = Pattern.compile("(?<![\\w.+-])[\\w.+-]++@[\\w-]++(?:\\.[\\w-]++)++(?![\\w])");
    private static final Pattern HEX = Pattern.compile(
            "(?<![\\w])(?:0[xX][0-9a-fA-F]+|(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{6,})(?![\\w])");
    private static final Pattern NUMBER = Pattern.compile("(?<![\\p{L}_\\d])\\d++(?:[.,]\\d++)*+");
    // EMAIL and NUMBER repeat their groups possessively: the same matches (each piece is followed by what it cannot
    // take), and no backtracking state per repetition, which overflowed the stack on a chain such as "1.1.1..." of a few
    // thousand characters (a reason is read from the wire)
    private static final Pattern SPACE = Pattern.compile("\\s+");
    /** An exception type: a Java class name ending in Exception, Error or Throwable, or one with a package. */
    private static final Pattern TYPE = Pattern.compile("(?:^|: )((?:[a-z_$][\\w$]*\\.)*[A-Z][\\w$]*"
            + "(?:Exception|Error|Throwable)|(?:[a-z_$][\\w$]*\\.)+[A-Z][\\w$]*)(?=: |$)");

    /** Rejects a text that is not a shape (not the shape of itself): a group is named by a shape, nothing else. */
    public FailureShape {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("a failure shape is a non-blank text");
        }
        if (!normalize(text).equals(text)) {
            throw new IllegalArgumentException("not a failure shape (its own shape is \"" + normalize(text) + "\")");
        }
    }

    /** The shape of a dead letter's reason. */
    public static FailureShape of(String reason) {
        if (reason == null || reason.isBlank()) {
            throw new IllegalArgumentException("a failure shape needs a reason");
        }
        return new FailureShape(normalize(reason.length() > MAX_READ ? reason.substring(0, MAX_READ) : reason));
    }

    /**
     * The exception type the shape names, as the reason wrote it (simple or qualified): the first Java class name ending
     * in {@code Exception}, {@code Error} or {@code Throwable}, or carrying a package, that opens the shape or follows a
     * {@code ": "}, and is followed by one or ends it ({@code "gave up after <n> attempts: IllegalStateException:
     * insufficient funds"} names {@code IllegalStateException}). Empty when the reason names none.
     */
    public Optional<String> exceptionType() {
        Matcher m = TYPE.matcher(text);
        return m.find() ? Optional.of(m.group(1)) : Optional.empty();
    }

    /**
     * The reason's text to its fixed point: each round escapes, collapses, replaces and cuts; a cut can expose a new
     * last token (a hex id whose tail was a letter), so the rounds go on until nothing changes. The replacements only
     * shorten or keep what they replace except a short number ({@code 7} to {@code <n>}), and the cut keeps the text
     * within the bound, so a few rounds suffice; the bound on the rounds is a guard, and the property test holds
     * idempotence over texts built to hit every rule.
     */
    static String normalize(String reason) {
        String s = reason;
        for (int round = 0; round < 8; round++) {
            String next = round(s);
            if (next.equals(s)) {
                return s;
            }
            s = next;
        }
        return s;
    }

    private static String round(String s) {
        s = Printable.text(SPACE.matcher(s).replaceAll(" ").strip(), Integer.MAX_VALUE);
        s = QUOTED.matcher(s).replaceAll("<str>");
        s = TIME.matcher(s).replaceAll("<time>");
        s = UUID.matcher(s).replaceAll("<uuid>");
        s = EMAIL.matcher(s).replaceAll("<email>");
        s = HEX.matcher(s).replaceAll("<hex>");
        s = NUMBER.matcher(s).replaceAll("<n>");
        return cut(s);
    }

    /** At most MAX_LENGTH characters: cut at the last space of the final quarter if there is one, then " ...". */
    private static String cut(String s) {
        if (s.length() <= MAX_LENGTH) {
            return s;
        }
        int limit = MAX_LENGTH - ELLIPSIS.length();
        int space = s.lastIndexOf(' ', limit);
        int at = space >= limit * 3 / 4 ? space : limit;
        if (Character.isHighSurrogate(s.charAt(at - 1))) {
            at--;
        }
        return s.substring(0, at).stripTrailing() + ELLIPSIS;
    }

    @Override
    public String toString() {
        return text;
    }
}
