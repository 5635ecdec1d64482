package dev.idemkit.app.crash;

import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.lang.instrument.Instrumentation;
import net.bytebuddy.agent.ByteBuddyAgent;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import org.apache.kafka.clients.producer.ProducerRecord;
import software.amazon.awssdk.services.sqs.model.SendMessageRequest;

/**
 * Weaves {@link CrashProbe} calls into the adapters of a crash child, between two broker calls that production
 * code makes back to back, so the harness can SIGKILL the process exactly there. Nothing in the production
 * classes knows: the child starts with {@code -javaagent:byte-buddy-agent.jar} and this installs the advice
 * before any adapter class is loaded.
 *
 * <ul>
 *   <li>RabbitMQ: after {@code ConfirmingPublisher.publish} returned (the broker confirmed the copy) and before
 *       the original's ack: a retry ({@code Q.retry.*}) or a dead letter ({@code Q.dlq.hold});
 *   <li>RabbitMQ: after the redrive's confirmed publish and before the dead letter's ack;
 *   <li>SQS: after a confirmed {@code SendMessage} to a DLQ and before the original's delete, or of a redrive
 *       copy (it carries the approval) and before the dead letter's delete;
 *   <li>Kafka: after {@code KafkaMessageTransport.sendAndWait} returned (the broker acked the copy): a retry copy or a
 *       dead letter before the original's offset is settled, a redrive copy before its id is recorded as redriven.
 * </ul>
 */
public final class CrashAgent {
    private static final String SQS_CLIENT = "software.amazon.awssdk.services.sqs.DefaultSqsClient";

    private CrashAgent() {}

    /** Installs the advice; call first thing in the child's main. */
    public static void install() {
        Instrumentation inst = ByteBuddyAgent.getInstrumentation();
        // installed before any adapter class is loaded: no loaded class to retransform, and every class loaded
        // later is matched by its name alone (nothing else is parsed), which keeps the child's start-up short
        new AgentBuilder.Default()
                .disableClassFormatChanges()
                .with(AgentBuilder.RedefinitionStrategy.DISABLED)
                .with(AgentBuilder.PoolStrategy.Default.FAST)
                .ignore(not(nameStartsWith("dev.idemkit.adapters.").or(named(SQS_CLIENT))))
                .type(named("dev.idemkit.adapters.rabbit.ConfirmingPublisher"))
                .transform((builder, type, loader, module, domain) -> builder.visit(
                        Advice.to(RabbitPublishAdvice.class).on(named("publish").and(takesArguments(3)))))
                .type(named("dev.idemkit.adapters.rabbit.RabbitDeadLetterQueue"))
                .transform((builder, type, loader, module, domain) -> builder.visit(
                        Advice.to(RabbitRedriveAdvice.class).on(named("publishConfirmed"))))
                .type(named(SQS_CLIENT))
                .transform((builder, type, loader, module, domain) -> builder.visit(
                        Advice.to(SqsSendAdvice.class).on(named("sendMessage")
                                .and(takesArguments(SendMessageRequest.class)))))
                .type(named("dev.idemkit.adapters.kafka.KafkaMessageTransport"))
                .transform((builder, type, loader, module, domain) -> builder.visit(
                        Advice.to(KafkaSendAdvice.class).on(named("sendAndWait"))))
                .installOn(inst);
    }

    /** Advice: a confirmed RabbitMQ publish returned. */
    public static final class RabbitPublishAdvice {
        private RabbitPublishAdvice() {}

        @Advice.OnMethodExit(onThrowable = Throwable.class)
        public static void exit(@Advice.Argument(0) String queue, @Advice.Thrown Throwable thrown) {
            if (thrown == null) {
                CrashProbe.published(queue);
            }
        }
    }

    /** Advice: a redrive's confirmed publish returned. */
    public static final class RabbitRedriveAdvice {
        private RabbitRedriveAdvice() {}

        @Advice.OnMethodExit(onThrowable = Throwable.class)
        public static void exit(@Advice.Thrown Throwable thrown) {
            if (thrown == null) {
                CrashProbe.reached(CrashPoint.REDRIVE_PUBLISHED_BEFORE_REMOVAL);
            }
        }
    }

    /** Advice: a Kafka send was acked. */
    public static final class KafkaSendAdvice {
        private KafkaSendAdvice() {}

        @Advice.OnMethodExit(onThrowable = Throwable.class)
        public static void exit(@Advice.Argument(1) ProducerRecord<?, ?> record, @Advice.Thrown Throwable thrown) {
            if (thrown == null) {
                CrashProbe.kafkaSent(record.topic(),
                        record.headers().lastHeader("x-idemkit-redrive-approved-by") != null);
            }
        }
    }

    /** Advice: an SQS SendMessage returned. */
    public static final class SqsSendAdvice {
        private SqsSendAdvice() {}

        @Advice.OnMethodExit(onThrowable = Throwable.class)
        public static void exit(@Advice.Argument(0) SendMessageRequest request, @Advice.Thrown Throwable thrown) {
            if (thrown == null) {
                CrashProbe.sqsSent(request.queueUrl(),
                        request.messageAttributes().containsKey("x-idemkit-redrive-approved-by"));
            }
        }
    }
}
