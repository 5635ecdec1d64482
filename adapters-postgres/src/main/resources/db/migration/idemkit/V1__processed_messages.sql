-- The inbox: one row per (consumer, message id) processed. The primary key is what makes a
-- redelivery harmless: INSERT ... ON CONFLICT DO NOTHING inserts 0 rows for a duplicate.
CREATE TABLE processed_messages (
    consumer     text        NOT NULL,
    message_id   text        NOT NULL,
    fingerprint  text        NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    result       jsonb       NULL,
    CONSTRAINT processed_messages_pkey PRIMARY KEY (consumer, message_id)
);

-- Retention deletes by age in small batches.
CREATE INDEX processed_messages_processed_at_idx ON processed_messages (processed_at);
