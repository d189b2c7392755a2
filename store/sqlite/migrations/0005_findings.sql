-- Provider findings: a lookup by downstream key (ops check, the console's c,
-- a triage run) is recorded as a `lookup` attempt with what it found. The
-- attempt outcome's CHECK gains 'lookup', which SQLite can only do by
-- rebuilding the table; the rows, their ids and numbers are kept as they are.
CREATE TABLE attempts_new (
    id            INTEGER PRIMARY KEY,
    operation_id  INTEGER NOT NULL REFERENCES operations(id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    outcome       TEXT    NOT NULL CHECK (outcome IN ('created','replayed','conflict','in_progress','dispatched','applied','failed','not_applied','timed_out','late_result','refused','expired','lease_expired','redispatched','lookup')),
    fingerprint   TEXT    NOT NULL,
    trace_id      TEXT,
    worker_id     TEXT,
    provider_ref  TEXT,
    error         TEXT,
    started_at    INTEGER NOT NULL,
    duration_us   INTEGER NOT NULL DEFAULT 0,
    -- a lookup's finding and the provider's words (or why it cannot tell)
    finding       TEXT    CHECK (finding IN ('has_it','has_nothing','cannot_tell')),
    detail        TEXT,
    UNIQUE (operation_id, seq),
    CHECK ((outcome = 'lookup') = (finding IS NOT NULL))
);
INSERT INTO attempts_new (id, operation_id, seq, outcome, fingerprint, trace_id, worker_id, provider_ref,
    error, started_at, duration_us)
SELECT id, operation_id, seq, outcome, fingerprint, trace_id, worker_id, provider_ref,
    error, started_at, duration_us FROM attempts;
DROP TABLE attempts;
ALTER TABLE attempts_new RENAME TO attempts;
CREATE INDEX attempts_trace ON attempts (trace_id) WHERE trace_id IS NOT NULL;
-- The latest finding of an operation (the console's FINDING column, the
-- filter by finding) is one step down this small index.
CREATE INDEX attempts_lookup ON attempts (operation_id, seq) WHERE outcome = 'lookup';
