package sandbox

import (
	"path/filepath"
	"testing"

	"github.com/retrysafe/retrysafe/provider"
)

// A sandbox provider says where its requests go — the sandbox, its
// dispatches and lookups alike — the same for every name and file (a
// ledger keeps which file it sent through apart), and not what a provider
// that says nothing reads as.
func TestASandboxProvidersIdentity(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d, l := provider.IdentityOf(s.Provider("a", false))
	d2, l2 := provider.IdentityOf(s.Provider("b", true))
	want := (provider.Target{Kind: "sandbox"}).Digest()
	if d != want || l != want || d2 != d || l2 != l {
		t.Errorf("IdentityOf = %q %q, %q %q; want %q for both", d, l, d2, l2, want)
	}
}
