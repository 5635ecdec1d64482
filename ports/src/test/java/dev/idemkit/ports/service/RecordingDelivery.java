package dev.idemkit.ports.service;

import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.Delivery;
import java.time.Duration;
import java.util.List;

/** A delivery that remembers how it was settled, for unit tests of the consumer runtime. */
class RecordingDelivery implements Delivery {
    enum Settlement { ACK, RETRY, DEAD_LETTER }

    private final Message message;
    private final int attempt;
    Settlement settlement;
    int settlements;
    Duration retryDelay;
    String deadLetterReason;
    AttemptRecord failed;

    RecordingDelivery(Message message, int attempt) {
        this.message = message;
        this.attempt = attempt;
    }

    @Override
    public Message message() {
        return message;
    }

    @Override
    public int attempt() {
        return attempt;
    }

    @Override
    public List<AttemptRecord> history() {
        return List.of();
    }

    @Override
    public boolean redelivered() {
        return attempt > 1;
    }

    @Override
    public void ack() {
        settle(Settlement.ACK);
    }

    @Override
    public void retryAfter(Duration delay, AttemptRecord failed) {
        settle(Settlement.RETRY);
        this.retryDelay = delay;
        this.failed = failed;
    }

    @Override
    public void deadLetter(String reason, AttemptRecord failed) {
        settle(Settlement.DEAD_LETTER);
        this.deadLetterReason = reason;
        this.failed = failed;
    }

    private void settle(Settlement s) {
        settlement = s;
        settlements++;
    }
}
