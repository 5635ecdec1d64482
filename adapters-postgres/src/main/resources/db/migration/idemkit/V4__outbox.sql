-- The transactional outbox: a message appended in the same transaction as the effect that emits it, published by the
-- relay after the commit. id is the message id on the wire (a republish after a crash carries the same id); seq is
-- the order: appends of one ordering_key hold a transaction-scoped advisory lock on the key until they end, so seq
-- order within a key is commit order.
CREATE TABLE outbox_messages (
    seq             bigint      GENERATED ALWAYS AS IDENTITY,
    id              uuid        NOT NULL,
    destination     text        NOT NULL,
    ordering_key    text        NOT NULL,
    headers         jsonb       NOT NULL,
    body            bytea       NOT NULL,
    appended_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    attempt         integer     NOT NULL DEFAULT 1 CHECK (attempt >= 1),
    failed_at       timestamptz[] NOT NULL DEFAULT '{}',
    failed_errors   text[]      NOT NULL DEFAULT '{}',
    next_attempt_at timestamptz NULL,
    sent_at         timestamptz NULL,
    parked_at       timestamptz NULL,
    park_reason     text        NULL,
    redrive         text        NULL,
    CONSTRAINT outbox_messages_pkey PRIMARY KEY (seq),
    CONSTRAINT outbox_messages_id_key UNIQUE (id),
    CONSTRAINT outbox_messages_names CHECK (length(destination) BETWEEN 1 AND 255 AND length(ordering_key) BETWEEN 1 AND 1024),
    CONSTRAINT outbox_messages_parked_has_reason CHECK (parked_at IS NULL OR park_reason IS NOT NULL),
    CONSTRAINT outbox_messages_failures_aligned CHECK (cardinality(failed_at) = cardinality(failed_errors))
);

-- The relay's scan: the keys with unsent rows, each key's oldest first (a loose index scan hops from key to key), and
-- the unsent rows of the keys it holds. Appends touch it, the primary key (ever increasing) and the id's (time-ordered
-- UUIDs, so mostly at the right edge too).
CREATE INDEX outbox_messages_key_unsent_idx ON outbox_messages (ordering_key, seq) WHERE sent_at IS NULL;
-- Retention deletes sent rows by age in small batches.
CREATE INDEX outbox_messages_sent_at_idx ON outbox_messages (sent_at) WHERE sent_at IS NOT NULL;
