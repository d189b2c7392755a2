-- The ledger's identity: a random id made once, by the migration that
-- creates this table, and never changed; a copy of the schema keeps it. A
-- provider's store records the ids of the ledgers it served (the sandbox
-- file does), so a provider file that never served this ledger is told
-- apart from this ledger's own. (SQLite's migration 7, kept in step: the
-- same 32 lowercase hex digits.)
CREATE TABLE ledger_meta (
    one       BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    ledger_id TEXT    NOT NULL CHECK (length(ledger_id) = 32)
);
INSERT INTO ledger_meta (ledger_id) VALUES (replace(gen_random_uuid()::text, '-', ''));
