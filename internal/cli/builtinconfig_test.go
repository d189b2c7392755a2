package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// A call of a tool the config does not know, with no --config and no
// $RETRYSAFE_CONFIG, says that the built-in demo tools were used and how
// to name your own (L15); with a config given, it does not.
func TestAnUnknownToolSaysWhenTheBuiltInDemoToolsWereUsed(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tools.toml")
	writeMailerConfig(t, cfg, "[providers.dispatch]\nurl = \"http://127.0.0.1:1/send\"\n")
	for _, tc := range []struct {
		name    string
		env     string
		extra   []string
		builtin bool
	}{
		{"no config at all", "", nil, true},
		{"--config", "", []string{"--config", cfg}, false},
		{"$RETRYSAFE_CONFIG", cfg, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("RETRYSAFE_CONFIG", tc.env)
			db := filepath.Join(t.TempDir(), "l.db")
			_, errText, code := cli(t, callArgs(db, "acme", "k", "send_invoice_email", `{"to":"a@example.com"}`, tc.extra...)...)
			if code != 2 || !strings.Contains(errText, `unknown tool "send_invoice_email"`) {
				t.Fatalf("exit %d: %s", code, errText)
			}
			said := strings.Contains(errText, "built-in demo tools") && strings.Contains(errText, "--config FILE") && strings.Contains(errText, "RETRYSAFE_CONFIG")
			if said != tc.builtin {
				t.Errorf("says the built-in demo tools were used: %v, want %v: %s", said, tc.builtin, errText)
			}
		})
	}
}
