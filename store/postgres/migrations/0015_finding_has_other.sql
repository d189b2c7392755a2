-- A lookup's finding may be has_other: the provider holds something under
-- the downstream key and reports what request it was — another tool or
-- other arguments than the operation's (a copy of the ledger, or a key
-- reused after its tombstone was forgotten, sent it under the same key).
-- Never evidence either way (model.FindingHasOther). The function the
-- attempts CHECK calls (migration 10) accepts it; the constraint itself is
-- unchanged, and every row already satisfies the new function.
-- (SQLite's migration 15, kept in step.)
CREATE OR REPLACE FUNCTION attempt_row_valid(outcome TEXT, finding TEXT) RETURNS BOOLEAN LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN (outcome IN ('created','replayed','conflict','in_progress','dispatched','applied','failed','not_applied',
            'timed_out','late_result','refused','expired','lease_expired','redispatched','lookup')) IS NOT FALSE
        AND (finding IN ('has_it','has_nothing','cannot_tell','has_other')) IS NOT FALSE
        AND ((outcome = 'lookup') = (finding IS NOT NULL)) IS NOT FALSE;
END $$;
