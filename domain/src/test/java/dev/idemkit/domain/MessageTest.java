package dev.idemkit.domain;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MessageTest {

    private static final String SECRET = "{\"card\":\"4111111111111111\",\"name\":\"Ana Lima\"}";

    @Test
    void toStringNeverIncludesTheBody() {
        Message m = new Message("m-1", SECRET.getBytes(StandardCharsets.UTF_8), Map.of("h", "v"), "orders");
        String shown = m.toString();

        assertThat(shown).doesNotContain("4111").doesNotContain("Ana").doesNotContain("card");
        assertThat(shown).contains("m-1").contains("orders").contains("bytes=" + SECRET.length());
    }

    @Test
    void aMessageWithoutAUsableIdHasNoId() {
        assertThat(Message.of(null, new byte[0], "q").id()).isEmpty();
        assertThat(Message.of("", new byte[0], "q").id()).isEmpty();
        assertThat(Message.of("has space", new byte[0], "q").id()).isEmpty();
        assertThat(Message.of("m-1", new byte[0], "q").id()).contains(MessageId.of("m-1"));
    }

    @Test
    void theBodyIsKeptUntouchedAndCannotBeChangedFromOutside() {
        byte[] body = "hello".getBytes(StandardCharsets.UTF_8);
        Message m = Message.of("m-1", body, "orders");
        body[0] = 'J';
        m.body()[1] = 'A';

        assertThat(m.body()).isEqualTo("hello".getBytes(StandardCharsets.UTF_8));
        assertThat(m.fingerprint()).isEqualTo(Fingerprint.of("hello"));
        assertThat(m).isEqualTo(Message.of("m-1", "hello".getBytes(StandardCharsets.UTF_8), "orders"))
                .hasSameHashCodeAs(Message.of("m-1", "hello".getBytes(StandardCharsets.UTF_8), "orders"));
    }
}
