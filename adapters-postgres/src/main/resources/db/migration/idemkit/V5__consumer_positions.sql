-- Offsets in the database (docs/ARCHITECTURE.md section 14): where a Kafka consumer group stands in each partition,
-- written in the same transaction as the inbox keys and effects it covers, so that committing an effect commits its
-- offset. Every record of (topic, partition) before next_offset is settled, in the log log_id names (Kafka's topic
-- id: a topic deleted and created again is another log). Within one log a row only moves forward; a write for another
-- log replaces it. The consumer seeks here when it is given the partition, unless the log differs or Kafka's own
-- committed offset is further.
CREATE TABLE consumer_positions (
    consumer_group text        NOT NULL,
    topic          text        NOT NULL,
    partition_id   integer     NOT NULL,
    next_offset    bigint      NOT NULL,
    log_id         text        NOT NULL,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT consumer_positions_pkey PRIMARY KEY (consumer_group, topic, partition_id)
);
