package cli

import (
	"bytes"
	"encoding/json"
	stdlog "log"
	"strings"
	"testing"
)

// What the standard library logs while serve or mcp runs — net/http's
// "Unsolicited response received on idle HTTP channel" when a provider
// writes on an idle connection — is a record of the server's log (JSON,
// level WARN, sanitized), not a raw line on stderr beside it; after the
// server stops it goes where it went before.
func TestTheStandardLibrarysLogGoesThroughTheServersLog(t *testing.T) {
	var out, before bytes.Buffer
	prev := stdlog.Writer()
	stdlog.SetOutput(&before)
	defer stdlog.SetOutput(prev)
	log, err := newLogger(&out, "info")
	if err != nil {
		t.Fatal(err)
	}
	stop := routeStdLog(log)
	stdlog.Printf("Unsolicited response received on idle HTTP channel starting with %s; err=%v", "HTTP/1.1 200 OK\x1b[31m\u202e", nil)
	stop()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d lines: %q; want one record", len(lines), out.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("not a JSON record: %q: %v", lines[0], err)
	}
	if rec["level"] != "WARN" || !strings.Contains(rec["msg"].(string), "Unsolicited response received on idle HTTP channel") {
		t.Fatalf("record %v; want level WARN and the message", rec)
	}
	if strings.ContainsAny(out.String(), "\x1b\u202e") {
		t.Fatalf("a control character reached the log: %q", out.String())
	}
	stdlog.Print("after")
	if !strings.Contains(before.String(), "after") || strings.Contains(out.String(), "after") {
		t.Fatalf("after the server stopped: log %q, before %q; want the line where it went before", out.String(), before.String())
	}
}
