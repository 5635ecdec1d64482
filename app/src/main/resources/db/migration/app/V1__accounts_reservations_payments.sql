-- The app's business tables (the seed document's names). idemkit's own tables come from the adapter.
CREATE TABLE accounts (
    id      text PRIMARY KEY,
    balance numeric(18, 2) NOT NULL DEFAULT 0
);

CREATE TABLE inventory_reservations (
    order_id    text PRIMARY KEY,
    customer_id text        NOT NULL,
    items       jsonb       NOT NULL,
    reserved_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE payments (
    id         text PRIMARY KEY,
    client_id  text           NOT NULL,
    account_id text           NOT NULL,
    amount     numeric(18, 2) NOT NULL,
    currency   char(3)        NOT NULL,
    created_at timestamptz    NOT NULL
);
CREATE INDEX payments_account ON payments (account_id);
