-- The ledger marks itself in the SQLite header (bytes 68-71), so that Open
-- can tell its own files from any other program's before it writes a byte:
-- 0x52534C47, "RSLG". store.go's applicationID is the same number.
PRAGMA application_id = 1381190727;
