package dev.idemkit.spring.sample;

import dev.idemkit.spring.IdempotentInbox;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.stereotype.Component;

/**
 * A plain {@code @RabbitListener}: body "account:amount". It knows nothing of idemkit; with
 * {@code idemkit.rabbit.idempotent-listeners=true} the starter runs it in a transaction, through the inbox, with
 * retries and a dead-letter queue. Bodies with a prefix misbehave the ways listeners do in the field:
 * "poison" always throws; "until-fixed:" throws until its id is in {@link #FIXED}; "swallow:" credits, then swallows a failed statement; "slow:" takes 50 ms, then credits; "doomed:" credits, then swallows the
 * failure of a participating {@code @Transactional} method (the transaction is rollback-only); "inner:" credits
 * through {@link IdempotentInbox} itself, keyed by the queue's name and the message id.
 */
@Component
public class CreditListener {
    private final JdbcTemplate jdbc;
    private final Credits credits;
    private final IdempotentInbox inbox;
    private final String queue;

    public CreditListener(JdbcTemplate jdbc, Credits credits, IdempotentInbox inbox, @Value("${sample.queue}") String queue) {
        this.jdbc = jdbc;
        this.credits = credits;
        this.inbox = inbox;
        this.queue = queue;
    }

    /** Per message id: how often a "flaky:" message met the store failing, and whether its last delivery was a redelivery. */
    public static final java.util.Map<String, Integer> FLAKY_CALLS = new java.util.concurrent.ConcurrentHashMap<>();
    public static final java.util.Map<String, Boolean> FLAKY_REDELIVERED = new java.util.concurrent.ConcurrentHashMap<>();
    /** Every call's message id, in the order the calls began. */
    public static final java.util.Queue<String> CALLS = new java.util.concurrent.ConcurrentLinkedQueue<>();
    /** Ids of "until-fixed:" messages whose downstream problem an operator fixed: they credit from then on. */
    public static final java.util.Set<String> FIXED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** Per message id: the "tenant" header each call saw (null when it had none). */
    public static final java.util.Map<String, java.util.List<String>> TENANTS = new java.util.concurrent.ConcurrentHashMap<>();

    @RabbitListener(id = "credits", queues = "${sample.queue}")
    public void onCredit(String body, @Header(name = AmqpHeaders.MESSAGE_ID, required = false) String messageId,
            @Header(name = "tenant", required = false) String tenant, org.springframework.amqp.core.Message raw) {
        if (messageId != null) {
            CALLS.add(messageId);
            TENANTS.computeIfAbsent(messageId, id -> new java.util.concurrent.CopyOnWriteArrayList<>())
                    .add(String.valueOf(tenant));
        }
        Boolean redelivered = raw.getMessageProperties().isRedelivered();
        if (body.startsWith("poison")) {
            throw new IllegalStateException("cannot process this credit");
        }
        String[] parts = body.split(":");
        if (parts[0].equals("swallow")) {
            credit(parts[1], parts[2]);
            try {
                jdbc.execute("SELECT 1/0");
            } catch (DataAccessException swallowed) {
                // the transaction is aborted now
            }
        } else if (parts[0].equals("doomed")) {
            credit(parts[1], parts[2]);
            try {
                credits.creditThenFail("doomed-" + messageId, body, parts[1], 1);
            } catch (IllegalStateException swallowed) {
                // the participating method marked the transaction rollback-only
            }
        } else if (parts[0].equals("flaky")) {
            FLAKY_REDELIVERED.put(messageId, Boolean.TRUE.equals(redelivered));
            // the database is down for two calls: the third and last attempt finds it back
            if (FLAKY_CALLS.merge(messageId, 1, Integer::sum) <= 2) {
                throw new dev.idemkit.ports.out.StoreUnavailableException("simulated: the database is unreachable", null);
            }
            credit(parts[1], parts[2]);
        } else if (parts[0].equals("until-fixed")) {
            if (!FIXED.contains(messageId)) {
                throw new IllegalStateException("the downstream service refuses it until it is fixed");
            }
            credit(parts[1], parts[2]);
        } else if (parts[0].equals("slow")) {
            try {
                Thread.sleep(50); // a stream that lasts: some work a listener does besides its credit
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
            credit(parts[1], parts[2]);
        } else if (parts[0].equals("inner")) {
            inbox.runOnce(queue, messageId, body, () -> credit(parts[1], parts[2]));
        } else {
            credit(parts[0], parts[1]);
        }
    }

    private void credit(String account, String amount) {
        jdbc.update("UPDATE accounts SET balance = balance + ? WHERE id = ?", Long.parseLong(amount), account);
    }
}
