-- How far this ledger has seen its provider file go, per provider name:
-- the sequence number of the newest delivery it saw the file hold (at a
-- dispatch or a lookup through it) and a check of that delivery's content
-- (provider/sandbox Mark). A file restored from an older backup keeps its
-- file id but no longer holds that delivery (or holds another under its
-- number): its "has nothing" is then no evidence (ledger/open.go). Reset
-- when the ledger moves to another file.
ALTER TABLE provider_files ADD COLUMN seen_seq INTEGER NOT NULL DEFAULT 0 CHECK (seen_seq >= 0);
ALTER TABLE provider_files ADD COLUMN seen_check TEXT NOT NULL DEFAULT '';
