-- A lookup's finding may be has_other: the provider holds something under
-- the downstream key and reports what request it was — another tool or
-- other arguments than the operation's (a copy of the ledger, or a key
-- reused after its tombstone was forgotten, sent it under the same key).
-- Never evidence either way (model.FindingHasOther).
--
-- The attempts table's finding CHECK gains the value the way migration 9
-- changed it (a CHECK cannot be altered in place; rebuilding the table
-- would cascade to nothing here, but writable_schema keeps every row,
-- index and id as it is): its schema text is rewritten, the old CHECK
-- replaced by the new one, which accepts everything the old one did. The
-- guard table refuses to commit a migration whose text did not change
-- (a schema text this build did not expect), and moves the schema cookie
-- so every other connection reloads it.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql,
'CHECK (finding = ''has_it'' OR
                            finding = ''has_nothing'' OR
                            finding = ''cannot_tell'')',
'CHECK (finding = ''has_it'' OR
                            finding = ''has_nothing'' OR
                            finding = ''cannot_tell'' OR
                            finding = ''has_other'')')
WHERE type = 'table' AND name = 'attempts';
PRAGMA writable_schema = RESET;
CREATE TABLE migration_0015_guard (ok INTEGER NOT NULL CHECK (ok = 1));
INSERT INTO migration_0015_guard SELECT instr(sql, 'finding = ''has_other''') > 0 FROM sqlite_schema WHERE type = 'table' AND name = 'attempts';
DROP TABLE migration_0015_guard;
