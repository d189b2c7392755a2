-- Provider findings: a lookup by downstream key (ops check, the console's c,
-- a triage run) is recorded as a `lookup` attempt with what it found. The
-- attempt outcome's CHECK gains 'lookup'; PostgreSQL swaps the constraint in
-- place (no table rebuild), the rows, ids and numbers stay as they are.
-- (SQLite's migration 5, kept in step.)
ALTER TABLE attempts DROP CONSTRAINT attempts_outcome_check;
ALTER TABLE attempts ADD CONSTRAINT attempts_outcome_check
    CHECK (outcome IN ('created','replayed','conflict','in_progress','dispatched','applied','failed','not_applied','timed_out','late_result','refused','expired','lease_expired','redispatched','lookup'));
-- a lookup's finding and the provider's words (or why it cannot tell)
ALTER TABLE attempts ADD COLUMN finding TEXT CONSTRAINT attempts_finding_check
    CHECK (finding IN ('has_it','has_nothing','cannot_tell'));
ALTER TABLE attempts ADD COLUMN detail TEXT;
ALTER TABLE attempts ADD CONSTRAINT attempts_lookup_has_finding
    CHECK ((outcome = 'lookup') = (finding IS NOT NULL));
-- The latest finding of an operation (the console's FINDING column, the
-- filter by finding) is one step down this small index.
CREATE INDEX attempts_lookup ON attempts (operation_id, seq) WHERE outcome = 'lookup';
