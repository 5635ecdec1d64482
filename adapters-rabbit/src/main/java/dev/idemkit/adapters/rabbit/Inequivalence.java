package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.ShutdownSignalException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * One argument in which an existing queue differs from a declaration, read from the broker's refusal: RabbitMQ
 * closes the channel with {@code 406 PRECONDITION_FAILED - inequivalent arg 'x-queue-type' for queue 'q' in vhost
 * '/': received the value 'quorum' of type 'longstr' but current is none}. Each side is {@code none}, {@code 'V'}
 * (the same type as the other side) or {@code the value 'V' of type 'T'}.
 *
 * @param argument the queue argument, e.g. {@code x-queue-type}
 * @param wanted what the declaration asked for, as the broker printed it ({@code null}: not set)
 * @param current what the queue has ({@code null}: not set)
 * @param currentType the broker's type name of {@code current} when it printed one ({@code longstr}, {@code signedint},
 *     {@code long}, {@code bool}); {@code null} when the same type as {@code wanted}
 * @param cutReply the broker's reply when it was cut before the values (RabbitMQ cuts reply texts at 255 bytes, which
 *     long queue names reach): the argument is known, the values are not; {@code null} otherwise
 */
record Inequivalence(String argument, String wanted, String current, String currentType, String cutReply) {
    Inequivalence(String argument, String wanted, String current, String currentType) {
        this(argument, wanted, current, currentType, null);
    }

    private static final String SIDE = "(none|the value '(.*?)' of type '(\\w+)'|'(.*?)')";
    private static final Pattern TEXT = Pattern.compile(
            "inequivalent arg '([^']+)' for queue '(.*)' in vhost '(.*)': received " + SIDE + " but current is " + SIDE,
            Pattern.DOTALL);
    private static final Pattern ARGUMENT = Pattern.compile("inequivalent arg '([^']+)'");

    private static final java.util.Comparator<Inequivalence> TYPE_FIRST = java.util.Comparator
            .comparing((Inequivalence i) -> !i.argument().equals(RabbitTopology.QUEUE_TYPE))
            .thenComparing(Inequivalence::argument);

    /** The broker's refusal in {@code failure}'s causes, if it is an inequivalent-argument one. */
    static Optional<Inequivalence> of(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ShutdownSignalException s && s.getReason() instanceof AMQP.Channel.Close close
                    && close.getReplyCode() == 406) {
                return parse(close.getReplyText());
            }
        }
        return Optional.empty();
    }

    static Optional<Inequivalence> parse(String replyText) {
        Matcher m = TEXT.matcher(replyText == null ? "" : replyText);
        if (!m.find()) {
            Matcher cut = ARGUMENT.matcher(replyText == null ? "" : replyText);
            return cut.find() ? Optional.of(new Inequivalence(cut.group(1), null, null, null, replyText))
                    : Optional.empty();
        }
        String wanted = m.group(4).equals("none") ? null : m.group(5) != null ? m.group(5) : m.group(7);
        String current = m.group(8).equals("none") ? null : m.group(9) != null ? m.group(9) : m.group(11);
        return Optional.of(new Inequivalence(m.group(1), wanted, current, m.group(10)));
    }

    /**
     * Sets {@code probe}'s argument to the queue's current value, so that the next declaration gets past it.
     *
     * @return false when that is not possible (a type not known here) or changes nothing (the probe would loop)
     */
    boolean adoptInto(Map<String, Object> probe) {
        if (cutReply != null) {
            return false;
        }
        if (current == null) {
            return probe.remove(argument) != null;
        }
        Object value;
        try {
            value = typed(current, currentType != null ? currentType : typeOf(probe.get(argument)));
        } catch (IllegalArgumentException e) {
            return false;
        }
        if (value == null || value.equals(probe.get(argument))) {
            return false;
        }
        probe.put(argument, value);
        return true;
    }

    private static String typeOf(Object value) {
        if (value instanceof Integer) {
            return "signedint";
        }
        if (value instanceof Long) {
            return "long";
        }
        if (value instanceof Boolean) {
            return "bool";
        }
        return "longstr";
    }

    private static Object typed(String text, String type) {
        return switch (type) {
            case "longstr" -> text;
            case "signedint", "short", "byte", "unsignedbyte", "unsignedshort" -> Integer.valueOf(text);
            case "long", "unsignedint", "timestamp" -> Long.valueOf(text);
            case "bool" -> Boolean.valueOf(text);
            default -> null;
        };
    }

    /** One message naming each queue, every differing argument with both values, and what to do. */
    static String describe(Map<String, List<Inequivalence>> differing, RabbitTopology.Shape shape) {
        String each = differing.entrySet().stream().map(e -> "queue '" + e.getKey() + "' has "
                + e.getValue().stream().sorted(TYPE_FIRST).map(Inequivalence::sentence).collect(Collectors.joining(", ")))
                .collect(Collectors.joining("; "));
        return (differing.size() == 1 ? "a queue" : differing.size() + " queues") + " already exist"
                + (differing.size() == 1 ? "s" : "") + " with other arguments than idemkit's settings want (queue type "
                + shape.type().label() + (shape.quorum() ? ", delivery limit " + shape.deliveryLimit() : "") + "): "
                + each + ". RabbitMQ cannot change the arguments of an existing queue, and idemkit does not redeclare"
                + " it: set IDEMKIT_RABBIT_QUEUE_TYPE / IDEMKIT_RABBIT_DELIVERY_LIMIT (rabbit.queue-type,"
                + " rabbit.delivery-limit) to what the queue has, or move the queue to the new arguments (adapters-rabbit"
                + " README, 'Moving a classic deployment to quorum queues')";
    }

    private String sentence() {
        if (cutReply != null) {
            return argument + " different from what the settings want (RabbitMQ cut its reply before the values: \""
                    + cutReply + "\"; rabbitmqctl list_queues name arguments shows them)";
        }
        String has = current == null ? "none" : "'" + current + "'";
        if (argument.equals(RabbitTopology.QUEUE_TYPE) && current == null) {
            has = "none (a classic queue)";
        }
        return argument + " " + has + " where the settings want "
                + (wanted == null ? "none" : "'" + wanted + "'");
    }
}
