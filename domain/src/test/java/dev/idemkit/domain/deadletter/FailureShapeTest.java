package dev.idemkit.domain.deadletter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class FailureShapeTest {

    @Test
    void theSameFailureForTwoAccountsIsOneShape() {
        FailureShape a = FailureShape.of("gave up after 3 attempts: IllegalStateException: insufficient funds for"
                + " account 42");
        FailureShape b = FailureShape.of("gave up after 5 attempts: IllegalStateException: insufficient funds for"
                + " account 7");
        assertThat(a).isEqualTo(b);
        assertThat(a.text()).isEqualTo("gave up after <n> attempts: IllegalStateException: insufficient funds for"
                + " account <n>");
        assertThat(a.exceptionType()).contains("IllegalStateException");
    }

    @Test
    void twoExceptionTypesWithTheSameMessageAreTwoShapes() {
        FailureShape state = FailureShape.of("gave up after 3 attempts: IllegalStateException: insufficient funds");
        FailureShape argument = FailureShape.of("gave up after 3 attempts: IllegalArgumentException: insufficient"
                + " funds");
        assertThat(state).isNotEqualTo(argument);
        assertThat(argument.exceptionType()).contains("IllegalArgumentException");
        assertThat(FailureShape.of("non-retryable: IllegalStateException: insufficient funds"))
                .as("the disposition is part of the shape").isNotEqualTo(state);
    }

    @Test
    void variablePartsBecomePlaceholders() {
        assertThat(FailureShape.of("java.net.SocketTimeoutException: no answer from 'ledger-7' at"
                + " 2026-12-01T10:15:30.123Z for order 123e4567-e89b-12d3-a456-426614174000 (ana@example.org),"
                + " trace 4bf92f3577b34da6, lock 0x7f after 3000 ms").text())
                .isEqualTo("java.net.SocketTimeoutException: no answer from <str> at <time> for order <uuid>"
                        + " (<email>), trace <hex>, lock <hex> after <n> ms");
        assertThat(FailureShape.of("java.net.SocketTimeoutException: x").exceptionType())
                .contains("java.net.SocketTimeoutException");
    }

    @Test
    void namesAndGluedDigitsAreKept() {
        FailureShape s3 = FailureShape.of("S3Exception: bucket sha256 mismatch in order42, acc-42");
        assertThat(s3.text()).isEqualTo("S3Exception: bucket sha256 mismatch in order42, acc-<n>");
        assertThat(s3.exceptionType()).contains("S3Exception");
        assertThat(FailureShape.of("gave up: payment provider timed out").exceptionType()).isEmpty();
        assertThat(FailureShape.of("can't reach the ledger").text()).isEqualTo("can't reach the ledger");
    }

    @Test
    void whitespaceIsCollapsedAndControlCharactersEscaped() {
        assertThat(FailureShape.of("  boom:\n\tline 2\r\n\u001b[31mred  ").text())
                .isEqualTo("boom: line <n> \\u001b[<n>mred");
    }

    @Test
    void aLongReasonIsCutAtASpaceWithinTheBound() {
        String reason = "IllegalStateException: " + "lorem ipsum ".repeat(100);
        String text = FailureShape.of(reason).text();
        assertThat(text).hasSizeLessThanOrEqualTo(FailureShape.MAX_LENGTH).endsWith("m ...")
                .startsWith("IllegalStateException: lorem ipsum");
        assertThat(FailureShape.of("x".repeat(10_000)).text()).hasSize(FailureShape.MAX_LENGTH).endsWith("x ...");
    }

    @Test
    void onlyAShapeNamesAGroup() {
        assertThatThrownBy(() -> new FailureShape("insufficient funds for account 42"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("not a failure shape (its own shape is \"insufficient funds for account <n>\")");
        assertThatThrownBy(() -> FailureShape.of(" ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a failure shape needs a reason");
        assertThat(new FailureShape("insufficient funds for account <n>").text())
                .isEqualTo("insufficient funds for account <n>");
    }

    /**
     * Chains of a few thousand characters (a reason comes from the wire) shape on a small stack: with the groups
     * repeated by backtracking quantifiers, "1.1.1..." and "x@a.a.a..." overflowed a 512 KiB stack from about 1,500
     * characters.
     */
    @Test
    void longChainsShapeWithoutOverflowingASmallStack() throws Exception {
        String numbers = "1" + ".1".repeat(2_040);
        String address = "x@a" + ".a".repeat(2_040);
        String[] shapes = new String[2];
        Throwable[] failure = new Throwable[1];
        Thread t = new Thread(null, () -> {
            try {
                shapes[0] = FailureShape.of("timeout after " + numbers).text();
                shapes[1] = FailureShape.of("no mailbox " + address).text();
            } catch (Throwable e) {
                failure[0] = e;
            }
        }, "small-stack", 256 * 1024);
        t.start();
        t.join();
        assertThat(failure[0]).as("no StackOverflowError").isNull();
        assertThat(shapes).containsExactly("timeout after <n>", "no mailbox <email>");
    }
}
