package dev.idemkit.app.crash;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.Map;
import net.bytebuddy.agent.ByteBuddyAgent;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import software.amazon.awssdk.services.sqs.model.SendMessageRequest;

/**
 * Weaves {@link CrashProbe} calls into the adapters of a crash child, between two broker calls that production
 * code makes back to back, so the harness can SIGKILL the process exactly there. Nothing in the production
 * classes knows: the child starts with {@code -javaagent:byte-buddy-agent.jar} (for the {@link Instrumentation}
 * only) and this registers a class file transformer before any adapter class is loaded, which adds one static call
 * in front of every normal return of the methods below (a method that throws reaches no probe).
 *
 * <ul>
 *   <li>RabbitMQ: after {@code ConfirmingPublisher.publish} returned (the broker confirmed the copy) and before
 *       the original's ack: a retry ({@code Q.retry.*}) or a dead letter ({@code Q.dlq.hold});
 *   <li>RabbitMQ: after the redrive's confirmed publish and before the dead letter's ack;
 *   <li>SQS: after a confirmed {@code SendMessage} to a DLQ and before the original's delete, or of a redrive
 *       copy (it carries the approval) and before the dead letter's delete;
 *   <li>Kafka: after {@code KafkaMessageTransport.sendAndWait} returned (the broker acked the copy): a retry copy or a
 *       dead letter before the original's offset is settled, a redrive copy before its id is recorded as redriven.
 *   <li>Kafka share groups: after the acknowledgement callback returned (the broker answered; only the broken
 *       ack-first child uses it, to wait until its premature acknowledgement is final);
 *   <li>PostgreSQL: after the inbox store's {@code runOnce} or {@code runBatch} (with positions) returned, its
 *       transaction committed, and before the flow settles anything with the broker;
 *   <li>The payments API: after {@code PaymentCharger.created} (the ledger charged; the response is not stored with
 *       the key) and after {@code RedisIdempotencyRecords.complete} returned (stored; the client has no answer).
 * </ul>
 *
 * <p>Plain ASM on purpose: the child loads a few dozen classes for it, where an agent built with Byte Buddy loaded
 * some 1,500 and cost each child about a second of its start.
 */
public final class CrashAgent {
    private static final String HOOKS = Type.getInternalName(CrashAgent.class);

    /** Per class (internal name), per method (name + descriptor), the hook to call with which arguments. */
    private static final Map<String, Map<String, Hook>> TARGETS = Map.of(
            "dev/idemkit/adapters/rabbit/ConfirmingPublisher", Map.of(
                    // the one publish every caller reaches (a producer's and a settle's copy, which passes whether its
                    // delivery is still held)
                    "publish(Ljava/lang/String;Lcom/rabbitmq/client/AMQP$BasicProperties;[B"
                            + "Ljava/util/function/BooleanSupplier;)V",
                    new Hook("rabbitPublished", "(Ljava/lang/String;)V", 0)),
            "dev/idemkit/adapters/rabbit/RabbitDeadLetterQueue", Map.of(
                    "publishConfirmed(Lcom/rabbitmq/client/Channel;Ljava/lang/String;"
                            + "Lcom/rabbitmq/client/AMQP$BasicProperties;[B)V",
                    new Hook("redrivePublished", "()V", -1)),
            "software/amazon/awssdk/services/sqs/DefaultSqsClient", Map.of(
                    "sendMessage(Lsoftware/amazon/awssdk/services/sqs/model/SendMessageRequest;)"
                            + "Lsoftware/amazon/awssdk/services/sqs/model/SendMessageResponse;",
                    new Hook("sqsSent", "(Lsoftware/amazon/awssdk/services/sqs/model/SendMessageRequest;)V", 0)),
            "dev/idemkit/adapters/kafka/KafkaMessageTransport", Map.of(
                    "sendAndWait(Lorg/apache/kafka/clients/producer/KafkaProducer;"
                            + "Lorg/apache/kafka/clients/producer/ProducerRecord;Ljava/time/Duration;)V",
                    new Hook("kafkaSent", "(Lorg/apache/kafka/clients/producer/ProducerRecord;)V", 1)),
            // the broker answered a share consumer's acknowledgements (the broken ack-first child waits for its own)
            "dev/idemkit/adapters/kafka/KafkaShareSubscription", Map.of(
                    "acknowledgementsCommitted(Ljava/util/Map;Ljava/lang/Exception;)V",
                    new Hook("shareAcknowledged", "(Ljava/util/Map;Ljava/lang/Exception;)V", 0, 1)),
            // the inbox's transaction committed, returned to the flow, before any settle (offsets in the database)
            "dev/idemkit/adapters/postgres/PostgresInboxStore", Map.of(
                    "runOnce(Ldev/idemkit/domain/inbox/InboxKey;Ldev/idemkit/domain/Fingerprint;Ljava/util/List;"
                            + "Ldev/idemkit/ports/out/Effect;)Ldev/idemkit/ports/out/Guarded;",
                    new Hook("inboxCommitted", "()V", -1),
                    "runBatch(Ljava/util/List;Ljava/util/List;Ldev/idemkit/ports/out/BatchEffect;)Ljava/util/List;",
                    new Hook("inboxCommitted", "()V", -1)),
            "dev/idemkit/app/payments/PaymentCharger", Map.of(
                    "created(Ldev/idemkit/app/payments/Payment;)Ldev/idemkit/domain/httpkey/StoredResponse;",
                    new Hook("paymentCharged", "()V", -1)),
            "dev/idemkit/adapters/redis/RedisIdempotencyRecords", Map.of(
                    "complete(Ldev/idemkit/domain/httpkey/ScopedKey;Ldev/idemkit/domain/httpkey/KeyRecord$InProgress;"
                            + "Ldev/idemkit/adapters/redis/RedisUnitOfWork;Ldev/idemkit/domain/httpkey/StoredResponse;"
                            + "Ljava/time/Duration;)Z", new Hook("paymentStored", "()V", -1),
                    // the completion without staged writes (a charge written on its own before it)
                    "complete(Ldev/idemkit/domain/httpkey/ScopedKey;Ldev/idemkit/domain/httpkey/KeyRecord$InProgress;"
                            + "Ldev/idemkit/domain/httpkey/StoredResponse;Ljava/time/Duration;)Z",
                    new Hook("paymentStored", "()V", -1)));

    /**
     * A static method of this class, called with the method's reference arguments number {@code argument} and
     * {@code second} (-1: none).
     */
    private record Hook(String name, String descriptor, int argument, int second) {
        Hook(String name, String descriptor, int argument) {
            this(name, descriptor, argument, -1);
        }
    }

    private CrashAgent() {}

    /** Registers the transformer; call first thing in the child's main, before any adapter class is loaded. */
    public static void install() {
        Instrumentation inst = ByteBuddyAgent.getInstrumentation();
        inst.addTransformer(new ClassFileTransformer() {
            @Override
            public byte[] transform(ClassLoader loader, String className, Class<?> redefined, ProtectionDomain domain,
                    byte[] classfile) {
                Map<String, Hook> methods = className == null ? null : TARGETS.get(className);
                return methods == null ? null : weave(classfile, methods);
            }
        });
    }

    private static byte[] weave(byte[] classfile, Map<String, Hook> methods) {
        ClassReader reader = new ClassReader(classfile);
        ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                    String[] exceptions) {
                MethodVisitor mv = super.visitMethod(access, name, descriptor, signature, exceptions);
                Hook hook = methods.get(name + descriptor);
                if (hook == null) {
                    return mv;
                }
                // the arguments (all references or one-slot values here) follow {@code this} unless the method is static
                int self = (access & Opcodes.ACC_STATIC) != 0 ? 0 : 1;
                int slot = hook.argument() < 0 ? -1 : hook.argument() + self;
                int second = hook.second() < 0 ? -1 : hook.second() + self;
                return new MethodVisitor(Opcodes.ASM9, mv) {
                    @Override
                    public void visitInsn(int opcode) {
                        if (opcode >= Opcodes.IRETURN && opcode <= Opcodes.RETURN) {
                            if (slot >= 0) {
                                super.visitVarInsn(Opcodes.ALOAD, slot);
                            }
                            if (second >= 0) {
                                super.visitVarInsn(Opcodes.ALOAD, second);
                            }
                            super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, hook.name(), hook.descriptor(), false);
                        }
                        super.visitInsn(opcode);
                    }
                };
            }
        }, 0);
        return writer.toByteArray();
    }

    /** A confirmed RabbitMQ publish returned. */
    public static void rabbitPublished(String queue) {
        CrashProbe.published(queue);
    }

    /** A redrive's confirmed RabbitMQ publish returned. */
    public static void redrivePublished() {
        CrashProbe.reached(CrashPoint.REDRIVE_PUBLISHED_BEFORE_REMOVAL);
    }

    /** An SQS SendMessage returned. */
    public static void sqsSent(SendMessageRequest request) {
        CrashProbe.sqsSent(request.queueUrl(), request.messageAttributes().containsKey("x-idemkit-redrive-approved-by"));
    }

    /** The PostgreSQL inbox's transaction committed; nothing is settled with the broker yet. */
    public static void inboxCommitted() {
        CrashProbe.reached(CrashPoint.AFTER_COMMIT_IN_STORE);
    }

    /** The payments ledger charged; the response is not stored yet. */
    public static void paymentCharged() {
        CrashProbe.reached(CrashPoint.PAYMENT_CHARGED_BEFORE_STORED);
    }

    /** An Idempotency-Key record's completion returned. */
    public static void paymentStored() {
        CrashProbe.reached(CrashPoint.PAYMENT_STORED_BEFORE_ANSWER);
    }

    /** The broker answered a share consumer's acknowledgements; without an error they are final. */
    public static void shareAcknowledged(Map<?, ? extends java.util.Collection<?>> offsets, Exception error) {
        if (error == null) {
            CrashProbe.shareAcknowledged(offsets.values().stream().mapToInt(java.util.Collection::size).sum());
        }
    }

    /** A Kafka send was acked. */
    public static void kafkaSent(ProducerRecord<?, ?> record) {
        CrashProbe.kafkaSent(record.topic(), record.headers().lastHeader("x-idemkit-redrive-approved-by") != null);
    }
}
