-- The enum CHECKs of the two tables every call writes, spelled as OR
-- chains instead of IN lists: same meaning (a NULL finding still passes), but
-- SQLite codes a CHECK's IN list of more than two constants as a temporary
-- b-tree that it builds anew for every row it checks (no OP_Once inside a
-- constraint: EXPLAIN of the attempt INSERT showed OpenEphemeral and 18
-- IdxInserts for its 15 outcomes and 3 findings, the operation INSERT 7
-- more), about 7 µs of the one writer's time per CHECK on this machine; an
-- OR chain is a few comparisons. Every new operation writes both tables,
-- every replay the attempt.
--
-- A CHECK cannot be altered in place, and rebuilding operations inside the
-- migration's transaction is not possible: with foreign_keys on (it cannot
-- be turned off inside a transaction) dropping the old table would cascade
-- to every attempt and decision. So the tables' schema text is rewritten,
-- SQLite's documented way to change CHECK constraints
-- (https://www.sqlite.org/lang_altertable.html, "removing CHECK ...
-- constraints"): the rows are untouched and already satisfy the new CHECKs,
-- which accept exactly what the old ones did. The texts below are the
-- tables' texts before, but for the CHECKs (store/sqlite's
-- TestMigration9KeepsTheTablesAsTheyWere compares them). RESET reloads the
-- schema on this connection; creating and dropping the guard table moves
-- the schema cookie, so every other connection reloads it too, and makes
-- SQLite parse the new texts before the migration commits.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = 'CREATE TABLE "attempts" (
    id            INTEGER PRIMARY KEY,
    operation_id  INTEGER NOT NULL REFERENCES operations(id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    outcome       TEXT    NOT NULL CHECK (outcome = ''created'' OR
                            outcome = ''replayed'' OR
                            outcome = ''conflict'' OR
                            outcome = ''in_progress'' OR
                            outcome = ''dispatched'' OR
                            outcome = ''applied'' OR
                            outcome = ''failed'' OR
                            outcome = ''not_applied'' OR
                            outcome = ''timed_out'' OR
                            outcome = ''late_result'' OR
                            outcome = ''refused'' OR
                            outcome = ''expired'' OR
                            outcome = ''lease_expired'' OR
                            outcome = ''redispatched'' OR
                            outcome = ''lookup''),
    fingerprint   TEXT    NOT NULL,
    trace_id      TEXT,
    worker_id     TEXT,
    provider_ref  TEXT,
    error         TEXT,
    started_at    INTEGER NOT NULL,
    duration_us   INTEGER NOT NULL DEFAULT 0,
    -- a lookup''s finding and the provider''s words (or why it cannot tell)
    finding       TEXT    CHECK (finding = ''has_it'' OR
                            finding = ''has_nothing'' OR
                            finding = ''cannot_tell''),
    detail        TEXT,
    UNIQUE (operation_id, seq),
    CHECK ((outcome = ''lookup'') = (finding IS NOT NULL))
)'
WHERE type = 'table' AND name = 'attempts';
UPDATE sqlite_schema SET sql = 'CREATE TABLE operations (
    id               INTEGER PRIMARY KEY,
    tenant           TEXT    NOT NULL CHECK (length(tenant) BETWEEN 1 AND 512),
    op_key           TEXT    NOT NULL CHECK (length(op_key) BETWEEN 1 AND 1024),
    tool             TEXT    NOT NULL,
    payload_version  INTEGER NOT NULL CHECK (payload_version >= 1),
    args             TEXT    NOT NULL,
    summary          TEXT    NOT NULL DEFAULT '''',
    fingerprint      TEXT    NOT NULL CHECK (length(fingerprint) = 64),
    state            TEXT    NOT NULL CHECK (state = ''in_progress'' OR
                               state = ''applied'' OR
                               state = ''failed'' OR
                               state = ''not_applied'' OR
                               state = ''unknown'' OR
                               state = ''superseded'' OR
                               state = ''authorized''),
    version          INTEGER NOT NULL DEFAULT 1,
    claim_no         INTEGER NOT NULL DEFAULT 0,
    receipt          TEXT,
    provider         TEXT,
    downstream_key   TEXT,
    provider_ref     TEXT,
    lease_owner      TEXT,
    lease_until      INTEGER,
    contradicted     INTEGER NOT NULL DEFAULT 0 CHECK (contradicted IN (0,1)),
    supersedes_id    INTEGER REFERENCES operations(id),
    superseded_by_id INTEGER REFERENCES operations(id),
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    expires_at       INTEGER,
    UNIQUE (tenant, op_key),
    -- a final or settled state always carries what a replay returns
    CHECK (state NOT IN (''applied'',''failed'') OR receipt IS NOT NULL),
    CHECK (state <> ''in_progress'' OR lease_until IS NOT NULL)
)'
WHERE type = 'table' AND name = 'operations';
PRAGMA writable_schema = RESET;
CREATE TABLE migration_0009_guard (one INTEGER);
DROP TABLE migration_0009_guard;
