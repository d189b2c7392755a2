-- Compaction (a sweep turning expired receipts into tombstones) looks up,
-- for every operation it compacts, the operations that point at it: its
-- chain (superseded_by_id), the links it clears (supersedes_id,
-- superseded_by_id), and the foreign-key checks of its DELETE, which look
-- for rows still referring to it through either column. Without an index
-- each was a scan of every operation: a sweep grew with the square of the
-- ledger and held the writer meanwhile. Most operations have neither
-- link: the indexes hold only the rows that have one. A sweep also drops
-- the tombstones past their window: forget_at is indexed for it.
CREATE INDEX operations_supersedes ON operations (supersedes_id) WHERE supersedes_id IS NOT NULL;
CREATE INDEX operations_superseded_by ON operations (superseded_by_id) WHERE superseded_by_id IS NOT NULL;
CREATE INDEX tombstones_forget ON tombstones (forget_at);
