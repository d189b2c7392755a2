-- retry_not_before (Unix ms): when the operation's provider, answering
-- busy with a Retry-After (seconds or an HTTP date), asked to be sent it
-- again at the soonest — the answer's time plus the wait, at most five
-- minutes. Until then no call of its key and no sweep sends it again: each
-- is told the wait still left. NULL: none asked (every other answer clears
-- it), or recorded before this migration. Only an operation with a
-- provider records it.
ALTER TABLE operations ADD COLUMN retry_not_before BIGINT
    CONSTRAINT operations_retry_not_before_check CHECK (retry_not_before IS NULL OR provider IS NOT NULL);
