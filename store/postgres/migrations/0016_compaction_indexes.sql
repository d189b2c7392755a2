-- Compaction (a sweep turning expired receipts into tombstones) looks up,
-- for every operation it compacts, the operations that point at it: the
-- links it clears (supersedes_id; superseded_by_id has its partial index
-- since migration 1) and the foreign-key checks of its DELETE, which look
-- for rows still referring to it through either column. Without an index
-- on supersedes_id each was a scan of every operation: a sweep grew with
-- the square of the ledger. Most operations have no link: the index holds
-- only the rows that have one. A sweep also drops the tombstones past
-- their window: forget_at is indexed for it. (SQLite's migration 16, kept
-- in step.)
CREATE INDEX operations_supersedes ON operations (supersedes_id) WHERE supersedes_id IS NOT NULL;
CREATE INDEX tombstones_forget ON tombstones (forget_at);
