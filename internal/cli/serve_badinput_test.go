package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serve with an address it cannot listen on fails with one line and
// creates nothing: no ledger, no provider file beside it.
func TestServeOnAnAddressItCannotListenOnCreatesNoLedger(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "new.db")
	for _, addr := range []string{"256.0.0.1:1", "127.0.0.1:notaport"} {
		_, errText, code := cli(t, "serve", "--db", db, "--listen", addr)
		if code == 0 || !strings.Contains(oneErrorLine(t, addr, errText), addr) {
			t.Errorf("--listen %s: exit %d %q; want one line naming the address", addr, code, errText)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Fatalf("--listen %s failed but left %v behind", addr, names)
		}
	}
}
