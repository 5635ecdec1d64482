package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.spring.quickstart.CreditService;
import dev.idemkit.spring.quickstart.ImportedCredits;
import dev.idemkit.testsupport.Names;
import dev.idemkit.testsupport.TestRabbit;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

/**
 * The root README's Spring Boot quick start, run: the service is {@code spring/quickstart}'s three classes and
 * {@code quickstart.properties}, which the README shows verbatim ({@link StarterReadmeTest}). Only what must differ
 * on a shared machine is overridden: the database's schema, the queue's name and the server addresses. Whatever Boot
 * auto-configures from the class path is left as a new user would get it.
 */
@org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
@SpringBootTest(classes = CreditService.class)
@TestPropertySource(locations = "classpath:quickstart.properties")
class QuickStartIT {
    private static final String RUN = Names.tag(12);
    private static final URI RABBIT = URI.create(TestRabbit.URI);
    private static final String SCHEMA = "idemkit_quickstart_" + RUN;
    private static final String QUEUE = "idemkit.quickstart.credits." + RUN;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        SampleServiceProperties.servers(registry, SCHEMA, RABBIT);
        registry.add("credits.queue", () -> QUEUE);
    }

    @Autowired
    JdbcTemplate jdbc;
    @Autowired
    RabbitTemplate rabbit;
    @Autowired
    ImportedCredits imported;

    @BeforeEach
    void accounts() {
        jdbc.execute("CREATE TABLE IF NOT EXISTS accounts (id text PRIMARY KEY, balance bigint NOT NULL)");
    }

    @AfterAll
    static void dropSchemaAndQueues() {
        SampleServiceProperties.dropSchemaAndQueue(SCHEMA, QUEUE, RABBIT);
    }

    @Test
    void theListenerCreditsEachMessageOnceWhateverTheBrokerRedelivers() {
        String account = SampleAccounts.account(jdbc);
        SplittableRandom random = new SplittableRandom(7);
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            // 30 % of the stream repeats an earlier message, as a redelivery or a producer's retry would
            String id = !sent.isEmpty() && random.nextDouble() < 0.3 ? sent.get(random.nextInt(sent.size()))
                    : "credit-" + RUN + "-" + i;
            sent.add(id);
            SampleAccounts.send(rabbit, QUEUE, id, account + ":1");
        }
        long unique = sent.stream().distinct().count();

        Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> keys() == unique && ready() == 0);

        assertThat(SampleAccounts.balance(jdbc, account)).isEqualTo(unique);
        assertThat(unique).isLessThan(300);
    }

    @Test
    void aMessageTheListenerCannotReadIsDeadLetteredWithTheReasonAndTheRestGoOn() {
        String account = SampleAccounts.account(jdbc);
        SampleAccounts.send(rabbit, QUEUE, "bad-" + RUN, account + ":not-a-number");
        SampleAccounts.send(rabbit, QUEUE, "good-" + RUN, account + ":5");

        Message dead = rabbit.receive(QUEUE + ".dlq", 30_000);

        assertThat(dead).isNotNull();
        assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo(account + ":not-a-number");
        assertThat(String.valueOf(dead.getMessageProperties().getHeaders().get("x-idemkit-dead-letter-reason")))
                .contains("NumberFormatException");
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> SampleAccounts.balance(jdbc, account) == 5);
    }

    @Test
    void theInboxInTheServicesOwnTransactionCreditsOnce() {
        String account = SampleAccounts.account(jdbc);
        String id = "imported-" + RUN;

        assertThat(imported.credit(id, "a:7", account, 7).effectRan()).isTrue();
        assertThat(imported.credit(id, "a:7", account, 7).effectRan()).isFalse();

        assertThat(SampleAccounts.balance(jdbc, account)).isEqualTo(7);
    }

    @Test
    void theRootReadmeShowsTheStartUpLinesThisServicePrinted(
            org.springframework.boot.test.system.CapturedOutput output) throws Exception {
        // the service started while the capture ran (it began before the test context was loaded); the capture may
        // also hold services other test classes started in this JVM, at the same time on another thread: this one's
        // lines are its starting thread's, from its inbox's line to the next service that thread starts
        List<String> all = output.getAll().lines().filter(l -> l.contains(" : idemkit ")).toList();
        String inbox = all.stream().filter(l -> l.contains("schema " + SCHEMA + ":")).findFirst().orElseThrow();
        String thread = inbox.substring(inbox.indexOf('['), inbox.indexOf(']') + 1);
        List<String> lines = new ArrayList<>();
        for (String l : all.subList(all.indexOf(inbox), all.size())) {
            if (!l.contains(thread)) {
                continue; // another test class's service
            }
            String said = l.substring(l.indexOf(" : idemkit ") + 3);
            if (said.startsWith("idemkit inbox joins") && !lines.isEmpty()) {
                break; // the next service this thread started
            }
            lines.add(said.replace(SCHEMA, "public"));
        }
        String readme = java.nio.file.Files.readString(java.nio.file.Path.of("../README.md"), StandardCharsets.UTF_8);

        assertThat(lines).anyMatch(l -> l.startsWith("idemkit inbox joins"))
                .anyMatch(l -> l.startsWith("idemkit idempotent @RabbitListeners"));
        assertThat(lines).allSatisfy(l -> assertThat(readme).contains(l));
    }

    private long keys() {
        Long n = jdbc.queryForObject("SELECT count(*) FROM processed_messages WHERE consumer = ? AND message_id LIKE ?",
                Long.class, "rabbit-listener/" + QUEUE, "credit-" + RUN + "-%");
        return n == null ? 0 : n;
    }

    private long ready() {
        return rabbit.execute(ch -> ch.queueDeclarePassive(QUEUE).getMessageCount());
    }
}
