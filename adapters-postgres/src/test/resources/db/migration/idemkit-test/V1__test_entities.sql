-- Business tables of the TEST entities (the seed's examples); the adapter's main code has none.
CREATE TABLE accounts (
    id      text   PRIMARY KEY,
    balance bigint NOT NULL DEFAULT 0
);

CREATE TABLE inventory_reservations (
    order_id    text        PRIMARY KEY,
    items       integer     NOT NULL,
    reserved_at timestamptz NOT NULL
);

-- a versioned entity: the price of a product, replaced only by a newer version
CREATE TABLE product_prices (
    id      text   PRIMARY KEY,
    version bigint NOT NULL,
    price   bigint NOT NULL
);

-- an entity created once per natural key
CREATE TABLE shipments (
    order_id text PRIMARY KEY,
    address  text NOT NULL
);
