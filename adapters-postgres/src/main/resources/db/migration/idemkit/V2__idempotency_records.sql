-- HTTP Idempotency-Key records, scoped per client: (client_id, idem_key) is the identity.
CREATE TABLE idempotency_records (
    client_id   text        NOT NULL,
    idem_key    text        NOT NULL,
    fingerprint text        NOT NULL,
    state       text        NOT NULL CHECK (state IN ('in_progress', 'completed')),
    status      integer     NULL CHECK (status BETWEEN 100 AND 599),
    headers     jsonb       NULL,
    body        bytea       NULL,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    CONSTRAINT idempotency_records_pkey PRIMARY KEY (client_id, idem_key),
    CONSTRAINT idempotency_records_completed_has_response
        CHECK (state = 'in_progress' OR (status IS NOT NULL AND headers IS NOT NULL AND body IS NOT NULL))
);

CREATE INDEX idempotency_records_expires_at_idx ON idempotency_records (expires_at);
