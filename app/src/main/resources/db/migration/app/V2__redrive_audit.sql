-- The dead-letter console's audit: a redrive is recorded when it starts, each dead letter's result as it is done,
-- and how it ended; one interrupted (the process killed) stays 'running' with what it did until then.
CREATE TABLE redrive_audit (
    id          bigserial   PRIMARY KEY,
    at          timestamptz NOT NULL,
    operator    text        NOT NULL,
    approver    text        NOT NULL,
    reason      text        NOT NULL,
    queue       text        NOT NULL,
    dry_run     boolean     NOT NULL,
    ids         integer     NOT NULL,
    results     jsonb       NOT NULL DEFAULT '[]'::jsonb,
    state       text        NOT NULL DEFAULT 'running',
    error       text
);
