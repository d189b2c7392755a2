-- A state tab sorted by tool walks this index instead of the whole tool
-- index: at 1,000,000 operations the unknown tab sorted by tool took 1-2 s
-- for its first page, where every unknown operation is a send_notification
-- (last in that order) and the planner walked operations_tool_id past
-- 992,713 other rows; with this, 0.2 ms. Partial: a local call's operation
-- is applied when it is inserted, and applied is the one state a tab sorts
-- well through operations_tool_id (nearly every row is applied), so the
-- hot path inserts no entry here; the index holds only the few rows in the
-- other states (the driver spells a tab's state as a literal, so that every
-- plan, a prepared statement's generic one too, can prove the predicate).
CREATE INDEX operations_state_tool_id ON operations (state, tool COLLATE "C", id) WHERE state <> 'applied';
-- The same CHECKs, each table's as one call of a function: PostgreSQL
-- reads a table's CHECK expressions back from their stored text and
-- prepares them again for every INSERT or UPDATE statement, and for the
-- IN lists of operations.state and attempts.outcome that was 15-25 µs of
-- server CPU per statement, a tenth of a new call's; a function call's
-- stored form is a few nodes, and the function's own expressions are
-- prepared once per connection. Each function says exactly what the
-- constraints it replaces said (a NULL argument passes as it did there).
CREATE FUNCTION operation_row_valid(tenant TEXT, op_key TEXT, payload_version INTEGER, fingerprint TEXT,
    state TEXT, receipt TEXT, lease_until BIGINT) RETURNS BOOLEAN LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN (length(tenant) BETWEEN 1 AND 512) IS NOT FALSE
        AND (length(op_key) BETWEEN 1 AND 1024) IS NOT FALSE
        AND (payload_version >= 1) IS NOT FALSE
        AND (length(fingerprint) = 64) IS NOT FALSE
        AND (state IN ('in_progress','applied','failed','not_applied','unknown','superseded','authorized')) IS NOT FALSE
        AND (state NOT IN ('applied','failed') OR receipt IS NOT NULL) IS NOT FALSE
        AND (state <> 'in_progress' OR lease_until IS NOT NULL) IS NOT FALSE;
END $$;
CREATE FUNCTION attempt_row_valid(outcome TEXT, finding TEXT) RETURNS BOOLEAN LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN (outcome IN ('created','replayed','conflict','in_progress','dispatched','applied','failed','not_applied',
            'timed_out','late_result','refused','expired','lease_expired','redispatched','lookup')) IS NOT FALSE
        AND (finding IN ('has_it','has_nothing','cannot_tell')) IS NOT FALSE
        AND ((outcome = 'lookup') = (finding IS NOT NULL)) IS NOT FALSE;
END $$;
ALTER TABLE operations
    DROP CONSTRAINT operations_tenant_check, DROP CONSTRAINT operations_op_key_check,
    DROP CONSTRAINT operations_payload_version_check, DROP CONSTRAINT operations_fingerprint_check,
    DROP CONSTRAINT operations_state_check, DROP CONSTRAINT operations_check, DROP CONSTRAINT operations_check1,
    ADD CONSTRAINT operations_row_check CHECK (operation_row_valid(tenant, op_key, payload_version, fingerprint, state, receipt, lease_until));
ALTER TABLE attempts
    DROP CONSTRAINT attempts_outcome_check, DROP CONSTRAINT attempts_finding_check, DROP CONSTRAINT attempts_lookup_has_finding,
    ADD CONSTRAINT attempts_row_check CHECK (attempt_row_valid(outcome, finding));
