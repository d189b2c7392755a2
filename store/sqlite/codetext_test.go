package sqlite

import (
	"strings"
	"testing"

	sqlite3 "modernc.org/sqlite/lib"
)

// An error names SQLite's result code in words, with the code's name in
// balanced parentheses: "cannot open X: Unable to open the database file
// (SQLITE_CANTOPEN" lost its closing one (the words end in a parenthesis,
// and it was trimmed off).
func TestCodeTextIsBalanced(t *testing.T) {
	for _, code := range []int{sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_FULL,
		sqlite3.SQLITE_IOERR, sqlite3.SQLITE_PERM, sqlite3.SQLITE_IOERR_WRITE, sqlite3.SQLITE_CONSTRAINT_UNIQUE} {
		s := codeText(code)
		if strings.Count(s, "(") != strings.Count(s, ")") || !strings.Contains(s, "SQLITE_") {
			t.Errorf("code %d: %q; want the words with the code's name in balanced parentheses", code, s)
		}
	}
}
