-- The ledger: operations, their attempts, operator decisions, tombstones,
-- and the local effect tables of the demo tools. Times are Unix milliseconds.

CREATE TABLE operations (
    id               INTEGER PRIMARY KEY,
    tenant           TEXT    NOT NULL CHECK (length(tenant) BETWEEN 1 AND 512),
    op_key           TEXT    NOT NULL CHECK (length(op_key) BETWEEN 1 AND 1024),
    tool             TEXT    NOT NULL,
    payload_version  INTEGER NOT NULL CHECK (payload_version >= 1),
    args             TEXT    NOT NULL,
    summary          TEXT    NOT NULL DEFAULT '',
    fingerprint      TEXT    NOT NULL CHECK (length(fingerprint) = 64),
    state            TEXT    NOT NULL CHECK (state IN ('in_progress','applied','failed','not_applied','unknown','superseded','authorized')),
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
    CHECK (state NOT IN ('applied','failed') OR receipt IS NOT NULL),
    CHECK (state <> 'in_progress' OR lease_until IS NOT NULL)
);
CREATE INDEX operations_state_id ON operations (state, id);
CREATE INDEX operations_tenant_state_id ON operations (tenant, state, id);
CREATE INDEX operations_lease ON operations (lease_until) WHERE state = 'in_progress';
CREATE INDEX operations_expires ON operations (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX operations_contradicted ON operations (id) WHERE contradicted = 1;

-- Live counts by (tenant, state), kept by triggers in the same transaction as
-- every write so the console never counts a million rows.
CREATE TABLE state_counts (
    tenant TEXT    NOT NULL,
    state  TEXT    NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (tenant, state)
) WITHOUT ROWID;

CREATE TRIGGER operations_count_insert AFTER INSERT ON operations BEGIN
    INSERT INTO state_counts (tenant, state, n) VALUES (NEW.tenant, NEW.state, 1)
    ON CONFLICT (tenant, state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER operations_count_update AFTER UPDATE OF state ON operations
WHEN OLD.state <> NEW.state BEGIN
    UPDATE state_counts SET n = n - 1 WHERE tenant = OLD.tenant AND state = OLD.state;
    INSERT INTO state_counts (tenant, state, n) VALUES (NEW.tenant, NEW.state, 1)
    ON CONFLICT (tenant, state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER operations_count_delete AFTER DELETE ON operations BEGIN
    UPDATE state_counts SET n = n - 1 WHERE tenant = OLD.tenant AND state = OLD.state;
END;

CREATE TABLE attempts (
    id            INTEGER PRIMARY KEY,
    operation_id  INTEGER NOT NULL REFERENCES operations(id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    outcome       TEXT    NOT NULL CHECK (outcome IN ('created','replayed','conflict','in_progress','dispatched','applied','failed','not_applied','timed_out','late_result','refused','expired','lease_expired','redispatched')),
    fingerprint   TEXT    NOT NULL,
    trace_id      TEXT,
    worker_id     TEXT,
    provider_ref  TEXT,
    error         TEXT,
    started_at    INTEGER NOT NULL,
    duration_us   INTEGER NOT NULL DEFAULT 0,
    UNIQUE (operation_id, seq)
);
-- Search by the caller's trace id (e.g. a model's tool-call id) finds any
-- attempt that carried it, by exact id or prefix.
CREATE INDEX attempts_trace ON attempts (trace_id) WHERE trace_id IS NOT NULL;

CREATE TABLE decisions (
    id            INTEGER PRIMARY KEY,
    operation_id  INTEGER NOT NULL REFERENCES operations(id) ON DELETE CASCADE,
    operator      TEXT    NOT NULL CHECK (length(operator) >= 1),
    action        TEXT    NOT NULL CHECK (action IN ('mark_applied','mark_not_applied','authorize_new_key')),
    reason        TEXT    NOT NULL CHECK (length(reason) >= 1),
    evidence      TEXT,
    from_state    TEXT    NOT NULL,
    to_state      TEXT    NOT NULL,
    from_version  INTEGER NOT NULL,
    new_key       TEXT,
    at            INTEGER NOT NULL
);
CREATE INDEX decisions_operation ON decisions (operation_id);

-- After the replay window an operation is compacted to a tombstone, kept so a
-- late retry is told "expired — reconcile" instead of creating a second effect.
CREATE TABLE tombstones (
    tenant       TEXT    NOT NULL,
    op_key       TEXT    NOT NULL,
    tool         TEXT    NOT NULL,
    fingerprint  TEXT    NOT NULL,
    final_state  TEXT    NOT NULL CHECK (final_state IN ('in_progress','applied','failed','not_applied','unknown','superseded','authorized')),
    expired_at   INTEGER NOT NULL,
    forget_at    INTEGER NOT NULL,
    PRIMARY KEY (tenant, op_key)
) WITHOUT ROWID;

-- Local effects of the demo tools. operation_id is UNIQUE: one effect per
-- operation is a constraint, not a hope.
CREATE TABLE tasks (
    id            INTEGER PRIMARY KEY,
    tenant        TEXT    NOT NULL,
    subject       TEXT    NOT NULL,
    status        TEXT    NOT NULL DEFAULT 'open',
    operation_id  INTEGER NOT NULL UNIQUE,
    created_at    INTEGER NOT NULL
);
CREATE TABLE report_jobs (
    id            INTEGER PRIMARY KEY,
    tenant        TEXT    NOT NULL,
    report        TEXT    NOT NULL,
    status        TEXT    NOT NULL DEFAULT 'queued',
    operation_id  INTEGER NOT NULL UNIQUE,
    created_at    INTEGER NOT NULL
);
