-- The provider file this ledger dispatched through, per provider name: a
-- sandbox file's own random id (provider/sandbox FileID), recorded at the
-- ledger's first dispatch through it. A copy of a ledger keeps its
-- ledger_id, so a sandbox file's record of the ledgers it served cannot
-- tell two copies apart; this record can (ledger/open.go).
CREATE TABLE provider_files (
    provider TEXT PRIMARY KEY,
    file_id TEXT NOT NULL CHECK (length(file_id) = 32)
);
