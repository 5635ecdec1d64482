package dev.idemkit.spring;

import dev.idemkit.domain.KeyRules;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.retry.FailureClass;
import dev.idemkit.domain.retry.FailureClassifier;
import dev.idemkit.domain.retry.RetryDecision;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.support.converter.MessageConversionException;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.UnexpectedRollbackException;
import org.springframework.messaging.handler.invocation.MethodArgumentResolutionException;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Makes every {@code @RabbitListener} of a container factory idempotent: added to the factory's advice chain, it
 * runs each delivery's listener method inside a transaction and idemkit's inbox, keyed by (the queue, the AMQP
 * {@code message_id}), with the semantics of idemkit's consumer runtime:
 * <ul>
 *   <li>a redelivered message (same id, same body) is acknowledged without calling the method;</li>
 *   <li>a failing method rolls back key and writes and is attempted again after the {@link RetryPolicy}'s backoff
 *       (exponential, full jitter), up to its {@code maxAttempts}; then the message goes to {@code <queue>.dlq} with
 *       the reason and every attempt in idemkit's dead-letter headers, and is acknowledged;</li>
 *   <li>no message id, an invalid one, a message id reused with another body, a body the method's parameters cannot
 *       be converted from, or a non-retryable failure ({@code IllegalArgumentException},
 *       {@code NonRetryableException}) goes to the dead-letter queue at once, with its reason.</li>
 * </ul>
 * The message is acknowledged only after its transaction committed or its dead letter was confirmed by the broker; a
 * crash before that leaves it unacknowledged, the broker redelivers it and the inbox makes the redelivery harmless.
 * The waits between attempts hold the listener's thread (like Spring's stateless retry); attempts are counted in
 * memory, so a redelivery after a crash starts counting again. Batch listeners are passed through untouched.
 */
public final class IdempotentListenerAdvice implements MethodInterceptor {
    private static final Logger LOG = LoggerFactory.getLogger(IdempotentListenerAdvice.class);

    private final IdempotentInbox inbox;
    private final TransactionTemplate transactions;
    private final RabbitDeadLetters deadLetters;
    private final RetryPolicy policy;
    private final Set<String> queues;
    private final Clock clock;
    private final java.util.concurrent.atomic.AtomicInteger storeFailures = new java.util.concurrent.atomic.AtomicInteger();

    IdempotentListenerAdvice(IdempotentInbox inbox, TransactionTemplate transactions, RabbitDeadLetters deadLetters,
            RetryPolicy policy, Set<String> queues, Clock clock) {
        this.inbox = Objects.requireNonNull(inbox, "inbox");
        this.transactions = Objects.requireNonNull(transactions, "transactions");
        this.deadLetters = Objects.requireNonNull(deadLetters, "deadLetters");
        this.policy = Objects.requireNonNull(policy, "policy").withClassifier(classifier(policy.classifier()));
        this.queues = Set.copyOf(queues);
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** A body the listener's parameters cannot be made from is malformed input: it will not get better. */
    private static FailureClassifier classifier(FailureClassifier base) {
        return failure -> {
            for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
                if (t instanceof MessageConversionException || t instanceof MethodArgumentResolutionException) {
                    return FailureClass.NON_RETRYABLE;
                }
            }
            return base.classify(failure);
        };
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object[] args = invocation.getArguments();
        if (args.length < 2 || !(args[1] instanceof Message message)) {
            return invocation.proceed(); // a batch listener: not handled here
        }
        String queue = message.getMessageProperties().getConsumerQueue();
        if (queue == null || !(queues.isEmpty() || queues.contains(queue))) {
            return invocation.proceed();
        }
        deadLetters.served(queue);
        String consumer = consumerOf(queue);
        String messageId = message.getMessageProperties().getMessageId();
        Optional<String> badId = KeyRules.violation("message id", messageId);
        if (badId.isPresent()) {
            deadLetters.deadLetter(queue, message, "malformed message: " + badId.get(), List.of());
            return null;
        }
        List<AttemptRecord> attempts = new ArrayList<>();
        int attempt = 1;
        while (true) {
            try {
                Outcome outcome = transactions.execute(status -> inbox.callOnce(consumer, messageId, message.getBody(),
                        () -> proceedOnce(invocation))).outcome();
                storeFailures.set(0);
                if (outcome instanceof Outcome.Rejected rejected) {
                    deadLetters.deadLetter(queue, message, rejected.reason(), attempts);
                } else if (!outcome.effectRan()) {
                    LOG.debug("queue={} message_id={} decision=duplicate", queue, messageId);
                }
                return null;
            } catch (RuntimeException e) {
                Throwable failure = unwrapListenerFailure(e instanceof ListenerThrew t ? t.getCause() : e);
                if (storeFailed(e, failure)) {
                    // the database, not the message: never a dead letter for it, and no attempt spent. The delivery
                    // stays in hand and is tried again once the pause is over, for as long as the store fails (a
                    // requeue would count against a quorum queue's delivery limit and could drop the message); the
                    // pause grows with the consecutive failures across messages
                    int streak = Math.min(storeFailures.incrementAndGet() - 1, 10);
                    Duration pause = policy.backoff().delay(streak, ThreadLocalRandom.current()::nextDouble);
                    LOG.warn("queue={} message_id={} decision=wait-for-store pause_ms={} error=\"{}\"", queue, messageId,
                            pause.toMillis(), RetryPolicy.describe(e));
                    pause(pause);
                    continue;
                }
                attempts.add(new AttemptRecord(attempt, clock.instant(), RetryPolicy.describe(failure)));
                RetryDecision decision = policy.decide(attempt, failure, ThreadLocalRandom.current()::nextDouble);
                if (decision instanceof RetryDecision.DeadLetter dead) {
                    deadLetters.deadLetter(queue, message, dead.reason(), attempts);
                    return null;
                }
                Duration delay = ((RetryDecision.RetryAfter) decision).delay();
                LOG.info("queue={} message_id={} decision=retry attempt={} delay_ms={} error=\"{}\"", queue, messageId,
                        attempt, delay.toMillis(), RetryPolicy.describe(failure));
                pause(delay);
                attempt++;
            }
        }
    }

    /** The listener method once more: an advice may call it again only through a clone of the invocation. */
    private static Object proceedOnce(MethodInvocation invocation) {
        try {
            if (invocation instanceof ProxyMethodInvocation proxy) {
                return proxy.invocableClone().proceed();
            }
            return invocation.proceed();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new ListenerThrew(t);
        }
    }

    /** Spring AMQP wraps what the method threw; the domain classifies and describes the method's own failure. */
    private static Throwable unwrapListenerFailure(Throwable failure) {
        Throwable t = failure;
        while (t.getClass().getName().equals("org.springframework.amqp.rabbit.support.ListenerExecutionFailedException")
                && t.getCause() != null && !(t.getCause() instanceof MessageConversionException)) {
            t = t.getCause();
        }
        return t;
    }

    /** A checked exception of the listener, carried through the inbox's effect. */
    static final class ListenerThrew extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ListenerThrew(Throwable cause) {
            super(cause);
        }
    }

    /**
     * The inbox consumer of a queue's idempotent listener: its own namespace, so that a listener calling
     * {@link IdempotentInbox} itself with the queue's name as consumer never meets the advice's own uncommitted key
     * (it would read it as a duplicate and skip its effect).
     */
    static String consumerOf(String queue) {
        return "rabbit-listener/" + queue;
    }

    /**
     * The store or the transaction infrastructure failed (not the listener): the message is not to blame. An
     * {@link UnexpectedRollbackException} is the listener's doing (it left the transaction rollback-only).
     */
    private static boolean storeFailed(RuntimeException thrown, Throwable failure) {
        if (thrown instanceof ListenerThrew || failure instanceof UnexpectedRollbackException) {
            return false;
        }
        // idemkit's own statements or the commit, or the listener's own database access failing for want of a
        // database (Spring AMQP wraps what the method threw; the failure is that unwrapped cause)
        return failure instanceof StoreUnavailableException || failure instanceof TransactionException
                || failure instanceof DataAccessResourceFailureException;
    }

    /** A wait between attempts; interrupted (shutdown), the message goes back to the broker unacknowledged. */
    private static void pause(Duration delay) {
        try {
            Thread.sleep(delay.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ImmediateRequeueAmqpException("idemkit: interrupted between attempts (shutting down)", e);
        }
    }
}
