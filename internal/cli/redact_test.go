package cli

import (
	"bufio"
	"bytes"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/internal/reexec"
)

// withPassword is a test ledger's URL with a password in its user part
// (the test server trusts its socket, so the password is never checked —
// only whether it is printed).
func withPassword(t *testing.T, secret string) string {
	t.Helper()
	u, err := url.Parse(pgURL(t))
	if err != nil {
		t.Fatal(err)
	}
	name := "postgres"
	if u.User != nil {
		name = u.User.Username()
	}
	u.User = url.UserPassword(name, secret)
	return u.String()
}

// A ledger URL's password never reaches a terminal or a log: sweep's line
// names the ledger without it.
func TestSweepDoesNotPrintTheLedgerURLsPassword(t *testing.T) {
	const secret = "s3cret-sweep-pw"
	db := withPassword(t, secret)
	if _, errText, code := cli(t, callArgs(db, "acme", "k", "create_support_task", taskArgs("x"))...); code != 0 {
		t.Fatalf("setup: exit %d %s", code, errText)
	}
	out, errText, code := cli(t, "sweep", "--db", db)
	if code != 0 || !strings.Contains(out, "swept postgres://") {
		t.Fatalf("sweep: exit %d\n%s%s", code, out, errText)
	}
	if strings.Contains(out+errText, secret) {
		t.Errorf("sweep printed the ledger URL's password:\n%s%s", out, errText)
	}
}

// serve's address line (stdout, which scripts read) and its "listening"
// log line (stderr) name the ledger without the URL's password.
func TestServeDoesNotPrintTheLedgerURLsPassword(t *testing.T) {
	const secret = "s3cret-serve-pw"
	db := withPassword(t, secret)
	pdb := filepath.Join(t.TempDir(), "provider.db") // not SCHEMA.provider.db in the package directory
	cmd := reexec.Command(t, asCLI, nil, "serve", "--db", db, "--provider-db", pdb, "--listen", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "listening on") {
		t.Fatalf("serve printed no address: %q %v", line, err)
	}
	if strings.Contains(line, secret) {
		t.Errorf("serve's address line has the ledger URL's password: %q", line)
	}
	// The log line follows the address line; read up to it.
	var seen bytes.Buffer
	sc := bufio.NewScanner(logs)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), `"msg":"listening"`) {
			break
		}
	}
	if !strings.Contains(seen.String(), `"msg":"listening"`) {
		t.Fatalf("no listening log line: %v\n%s", sc.Err(), seen.String())
	}
	if strings.Contains(seen.String(), secret) {
		t.Errorf("serve logged the ledger URL's password: %s", seen.String())
	}
}
