package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.idemkit.ports.out.TopologyMismatchException;
import dev.idemkit.ports.out.TransportException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;

/**
 * Declares {@link RabbitTopology} once per queue (and once per retry bucket) per process, each time on
 * a short-lived channel, so that a refused declaration closes only that channel. Declarations are idempotent, so two
 * processes declaring at once is fine.
 *
 * <p>A queue that already exists with another type or other arguments is never redeclared nor retried in a loop: the
 * broker refuses the declaration ({@code PRECONDITION_FAILED}, naming ONE argument), so the refused argument is
 * taken at the broker's value and the declaration tried again on a fresh channel until the broker accepts it; then
 * ONE {@link TopologyMismatchException} names the queue and every differing argument with both values
 * ({@link Inequivalence}). Such a probe declares a queue that exists, so it changes nothing; only if the queue were
 * deleted between two probes would one create it, with the arguments it had, and the exception is still thrown.
 */
final class Declarations {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Declarations.class);

    @FunctionalInterface
    interface ChannelWork<T> {
        T run(Channel channel) throws IOException;
    }

    /** More than RabbitMQ compares for a queue (about a dozen arguments). */
    private static final int MAX_PROBES = 24;

    private final Connection connection;
    private final int retriesDeclaredUpFront;
    private final RabbitTopology.Shape shape;
    private final Set<String> declared = ConcurrentHashMap.newKeySet();
    /** Queues whose settle paths alone were declared (their work queue is someone else's). */
    private final Set<String> settlePathsDeclared = ConcurrentHashMap.newKeySet();

    Declarations(Connection connection, RabbitSettings settings) {
        this.connection = connection;
        this.retriesDeclaredUpFront = Math.max(0, settings.maxAttemptsHint() - 1);
        this.shape = new RabbitTopology.Shape(settings.queueType(), settings.deliveryLimit(),
                brokerMajor(connection.getServerProperties().get("version")));
    }

    RabbitTopology.Shape shape() {
        return shape;
    }

    /**
     * @throws TopologyMismatchException if one of the topology's queues exists with another type or other arguments
     * @throws TransportException if the broker cannot be reached or refuses for another reason
     */
    void ensureQueue(String queue) {
        ensure(queue, WorkQueue.DECLARED);
    }

    /**
     * The settle paths of {@code queue} (retry buckets, hold queue, dead-letter exchange and queue), leaving the work
     * queue itself to whoever owns it (a Spring service declares its listeners' queues): it is used as it is, with
     * whatever arguments it has.
     */
    void ensureSettlePaths(String queue) {
        ensure(queue, WorkQueue.OWNED_ELSEWHERE);
    }

    /**
     * The topology of {@code queue} for a redrive: a work queue that exists is used as it is (its consumer checked it,
     * or it is a queue another consumer owns); a missing one is declared with the whole topology.
     */
    void ensureForRedrive(String queue) {
        if (declared.contains(queue) || settlePathsDeclared.contains(queue)) {
            return;
        }
        boolean exists;
        try (Channel ch = connection.createChannel()) {
            ch.queueDeclarePassive(queue);
            exists = true;
        } catch (IOException | TimeoutException | RuntimeException e) {
            exists = false; // 404 (the broker closed that channel), or unreachable: the declaration below says which
        }
        ensure(queue, exists ? WorkQueue.OWNED_ELSEWHERE : WorkQueue.DECLARED);
    }

    /** Whether a topology's work queue is declared with it. */
    private enum WorkQueue { DECLARED, OWNED_ELSEWHERE }

    private void ensure(String queue, WorkQueue work) {
        RabbitTopology.requireUsableName(queue);
        Set<String> done = work == WorkQueue.DECLARED ? declared : settlePathsDeclared;
        if (!done.contains(queue)) {
            withChannel("declare the dead-letter exchange of " + queue, ch -> {
                ch.exchangeDeclare(RabbitTopology.deadLetterExchange(queue), BuiltinExchangeType.DIRECT, true);
                return null;
            });
            Map<String, List<Inequivalence>> differing = new LinkedHashMap<>();
            RabbitTopology.queues(queue, shape).forEach((name, args) -> {
                if (work == WorkQueue.OWNED_ELSEWHERE && name.equals(queue)) {
                    return;
                }
                List<Inequivalence> found = new ArrayList<>(declareOrCompare(name, args));
                if (name.equals(RabbitTopology.deadLetterQueue(queue)) && found.removeIf(Declarations::onlyRabbit4sLimit)) {
                    LOG.warn("decision=dead-letter-queue-with-broker-default-limit queue={} detail=\"declared before the"
                            + " broker ran RabbitMQ 4, so it has RabbitMQ 4's default delivery limit of 20: every"
                            + " inspection returns what it read, which counts, so a dead letter inspected 20 times would"
                            + " be dropped. Set a policy with delivery-limit -1 on it (rabbitmqctl set_policy)\"", name);
                }
                if (!found.isEmpty()) {
                    differing.put(name, found);
                }
            });
            if (!differing.isEmpty()) {
                throw new TopologyMismatchException(queue, Inequivalence.describe(differing, shape), null);
            }
            withChannel("bind the dead-letter queue of " + queue, ch -> {
                ch.queueBind(RabbitTopology.deadLetterQueue(queue), RabbitTopology.deadLetterExchange(queue),
                        RabbitTopology.deadLetterQueue(queue));
                return null;
            });
            for (int bucket : RabbitTopology.bucketsUpFront(retriesDeclaredUpFront)) {
                ensureRetryBucket(queue, bucket);
            }
            done.add(queue);
        }
    }

    /** Forgets that {@code queue}'s topology was declared (the broker deleted it), so the next use declares it again. */
    void forget(String queue) {
        declared.removeIf(name -> name.equals(queue) || name.startsWith(queue + ".retry."));
        settlePathsDeclared.remove(queue);
    }

    /** A DLQ declared on 3.x lacks the {@code x-delivery-limit=-1} a 4.x broker gets: a warning, not a refusal. */
    private static boolean onlyRabbit4sLimit(Inequivalence i) {
        return i.argument().equals(RabbitTopology.DELIVERY_LIMIT) && "-1".equals(i.wanted()) && i.current() == null;
    }

    /** Forgets every declaration (after a connection recovery), so that each queue's next use declares it again. */
    void forgetAll() {
        declared.clear();
        settlePathsDeclared.clear();
    }

    void ensureRetryBucket(String queue, int bucketSeconds) {
        String name = RabbitTopology.retryQueue(queue, bucketSeconds);
        if (!declared.contains(name)) {
            declareQueue(name, shape.retryBucket(queue, bucketSeconds));
            declared.add(name);
        }
    }

    void delete(String queue) {
        withChannel("delete the topology of " + queue, ch -> {
            RabbitTopology.delete(ch, queue);
            return null;
        });
        forget(queue);
    }

    /** Declares one durable queue, or throws naming how the existing one differs (see the class comment). */
    void declareQueue(String name, Map<String, Object> wanted) {
        List<Inequivalence> found = declareOrCompare(name, wanted);
        if (!found.isEmpty()) {
            throw new TopologyMismatchException(name, Inequivalence.describe(Map.of(name, found), shape), null);
        }
    }

    /** Declares the queue; when it exists with other arguments, every argument that differs (nothing declared). */
    private List<Inequivalence> declareOrCompare(String name, Map<String, Object> wanted) {
        Map<String, Object> probe = new LinkedHashMap<>(wanted);
        List<Inequivalence> found = new ArrayList<>();
        for (int attempt = 0; attempt < MAX_PROBES; attempt++) {
            try (Channel ch = connection.createChannel()) {
                ch.queueDeclare(name, true, false, false, probe);
                return found;
            } catch (IOException | TimeoutException | RuntimeException e) {
                Inequivalence refused = Inequivalence.of(e).orElse(null);
                if (refused == null) {
                    if (found.isEmpty()) {
                        throw new TransportException("cannot declare queue " + name + ": " + rootMessage(e), e);
                    }
                    return found;
                }
                found.add(refused);
                if (!refused.adoptInto(probe)) {
                    return found;
                }
            }
        }
        return found;
    }

    /** Runs {@code work} on a fresh channel and closes it; broker and I/O errors become {@link TransportException}. */
    <T> T withChannel(String what, ChannelWork<T> work) {
        try (Channel ch = connection.createChannel()) {
            return work.run(ch);
        } catch (IOException | TimeoutException | RuntimeException e) {
            throw new TransportException("cannot " + what + ": " + rootMessage(e), e);
        }
    }

    private static String rootMessage(Throwable e) {
        return e.getCause() != null && e.getMessage() == null ? e.getCause().getMessage() : e.getMessage();
    }

    /** The major version the broker announces ({@code 3.10.8} gives 3); 0 when it says nothing readable. */
    static int brokerMajor(Object version) {
        String text = version == null ? "" : version.toString();
        int dot = text.indexOf('.');
        try {
            return Integer.parseInt(dot < 0 ? text : text.substring(0, dot));
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
