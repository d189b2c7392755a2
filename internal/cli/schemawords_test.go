package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// A schema refusal on the command line reads as over HTTP and MCP
// (gateway's TestSchemaRefusalsReadAlikeOverHTTPAndMCP): "argument to: …"
// at the top level as inside an object, exit 2, nothing written.
func TestSchemaRefusalsReadAlikeOnTheCommandLine(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{`{"to":3,"body":"disk full"}`, `send_notification: argument to: must be a string, got a number`},
		{`{"to":" ","body":"disk full"}`, `send_notification: argument to: must not be empty`},
		{`{"to":"` + strings.Repeat("x", 321) + `","body":"disk full"}`, `send_notification: argument to: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…" is 321 characters; at most 320`},
	} {
		db := filepath.Join(t.TempDir(), "ledger.db")
		out, errText, code := cli(t, callArgs(db, "t", "k", "send_notification", tc.args)...)
		if code != 2 || !strings.Contains(errText, tc.want) {
			t.Errorf("call %s: exit %d %s%s; want 2 saying %q", tc.args, code, out, errText, tc.want)
		}
	}
}
