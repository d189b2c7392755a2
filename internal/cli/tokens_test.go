package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

func TestTokensAreShownOnceKeptAsHashesAndRevoked(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ledger.db")
	// Bad input: one line, exit 2, no ledger created.
	for _, args := range [][]string{
		{"tokens", "create", "--db", db},
		{"tokens", "create", "--db", db, "--tenant", " padded"},
		{"tokens", "create", "--db", db, "--tenant", "acme", "--name", "bell\a"},
		{"tokens", "revoke", "--db", db},
		{"tokens", "frobnicate"},
	} {
		_, errOut, code := cli(t, args...)
		if code != 2 || strings.TrimSpace(errOut) == "" {
			t.Fatalf("%v: exit %d %q", args, code, errOut)
		}
		if _, err := os.Stat(db); err == nil {
			t.Fatalf("%v created the ledger", args)
		}
	}
	secret, errOut, code := cli(t, "tokens", "create", "--db", db, "--tenant", "acme", "--name", "support-agent")
	secret = strings.TrimSpace(secret)
	if code != 0 || !model.LooksLikeToken(secret) || !strings.Contains(errOut, "shown once") {
		t.Fatalf("create: %d %q %q", code, secret, errOut)
	}
	list, _, code := cli(t, "tokens", "list", "--db", db)
	hint := "rst_…" + model.HashToken(secret)[:8]
	if code != 0 || !strings.Contains(list, "support-agent") || !strings.Contains(list, hint) || !strings.Contains(errOut, hint) {
		t.Fatalf("list shows %q (create said %q), want the hint %s", list, errOut, hint)
	}
	for _, out := range []string{list, errOut} {
		if leaked := secretPiece(secret, out); leaked != "" {
			t.Fatalf("%q shows %q of the secret", out, leaked)
		}
	}
	// The ledger file holds the hash, never the token.
	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(db + "-wal")
	if strings.Contains(string(raw)+string(wal), secret) {
		t.Fatal("the token itself is in the ledger file")
	}
	if !strings.Contains(string(raw)+string(wal), model.HashToken(secret)) {
		t.Fatal("the token's hash is not in the ledger file")
	}
	if out, errOut, code := cli(t, "tokens", "revoke", "--db", db, "--id", "1"); code != 0 || !strings.Contains(out, "revoked token #1") {
		t.Fatalf("revoke: %d %q %q", code, out, errOut)
	}
	if _, errOut, code := cli(t, "tokens", "revoke", "--db", db, "--id", "1"); code != 2 || !strings.Contains(errOut, "already revoked") {
		t.Fatalf("second revoke: %d %q", code, errOut)
	}
	if _, errOut, code := cli(t, "tokens", "revoke", "--db", db, "--id", "99"); code != 2 || !strings.Contains(errOut, "no token #99") {
		t.Fatalf("unknown id: %d %q", code, errOut)
	}
	list, _, _ = cli(t, "tokens", "list", "--db", db, "--tenant", "acme")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 2 || strings.HasSuffix(strings.TrimSpace(lines[1]), "-") {
		t.Fatalf("list after revoke shows no revocation time: %q", list)
	}
}

// secretPiece is the first 5-character piece of the secret (after its
// public "rst_" prefix) found in out, or "".
func secretPiece(secret, out string) string {
	body := strings.TrimPrefix(secret, "rst_")
	for i := 0; i+5 <= len(body); i++ {
		if strings.Contains(out, body[i:i+5]) {
			return body[i : i+5]
		}
	}
	return ""
}

// A ledger made when the hint was the secret's first characters: lists
// (text and JSON) show the hash's hint instead.
func TestTokensListNeverShowsAnOldStoredHint(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ledger.db")
	secret, tok, err := model.NewToken("acme", "old", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	tok.Hint = secret[:10] + "…" // what older versions stored
	st, err := sqlite.Open(db, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateToken(context.Background(), &tok); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, args := range [][]string{{"tokens", "list", "--db", db}, {"tokens", "list", "--db", db, "--json"}} {
		out, errOut, code := cli(t, args...)
		if code != 0 || !strings.Contains(out, model.TokenHint(model.HashToken(secret))) {
			t.Fatalf("%v: %d %q %q", args, code, out, errOut)
		}
		if leaked := secretPiece(secret, out); leaked != "" {
			t.Fatalf("%v shows %q of the secret: %q", args, leaked, out)
		}
	}
}
