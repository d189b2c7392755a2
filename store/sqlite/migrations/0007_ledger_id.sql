-- The ledger's identity: a random id made once, by the migration that
-- creates this table (when the ledger is created, or first opened by a
-- retrysafe that knows it), and never changed. A copy of the file keeps it:
-- a copy is the same history. A provider's store records the ids of the
-- ledgers it served (the sandbox file does), so a provider file that never
-- served this ledger — another ledger's, or an empty one made elsewhere —
-- is told apart from this ledger's own, and its "has nothing" is not
-- taken for evidence. (PostgreSQL's migration 6, kept in step.)
CREATE TABLE ledger_meta (
    one       INTEGER PRIMARY KEY CHECK (one = 1),
    ledger_id TEXT    NOT NULL CHECK (length(ledger_id) = 32)
);
INSERT INTO ledger_meta (one, ledger_id) VALUES (1, lower(hex(randomblob(16))));
