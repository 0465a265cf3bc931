-- Accounts hold their balance in cents; entries are the double-entry journal.
CREATE TABLE accounts (
    id            BIGSERIAL PRIMARY KEY,
    owner         TEXT    NOT NULL,
    balance_cents BIGINT  NOT NULL DEFAULT 0,
    closed        BOOLEAN NOT NULL DEFAULT FALSE
);

CREATE TABLE entries (
    id           BIGSERIAL PRIMARY KEY,
    account_id   BIGINT      NOT NULL REFERENCES accounts (id),
    amount_cents BIGINT      NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE INDEX entries_account_id_idx ON entries (account_id);
