package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Each command's help says its own flags with a name for their values
// (FILE, URL, KEY, DURATION, N — never the flag package's "value"), its
// real exit codes, and every flag in its usage line; a group (ops, tokens,
// sandbox) called alone asks which one (L13).
func TestHelpNamesFlagValuesExitCodesAndSubcommands(t *testing.T) {
	valuePlaceholder := regexp.MustCompile(`(?m)^  --\S+ value$`)
	generic := strings.Join(commonExits(), "\n")
	for _, h := range commandHelp() {
		name := h.name
		if name == "" {
			name = "console"
		}
		t.Run(name, func(t *testing.T) {
			args := append(strings.Fields(h.name), "-h")
			out, _, _ := cli(t, args...)
			if m := valuePlaceholder.FindAllString(out, -1); len(m) > 0 {
				t.Errorf("%s -h names a flag's value \"value\": %q", name, m)
			}
			switch h.name {
			case "demo", "sandbox", "tokens", "sweep", "mcp", "tokens create", "tokens list", "tokens revoke":
				if strings.Join(h.exits, "\n") == generic {
					t.Errorf("%s has the generic exit codes, not its own", name)
				}
			}
			switch h.name {
			case "ops", "tokens", "sandbox":
				if !strings.Contains(out, "\nFlags:\n") {
					t.Errorf("%s -h has no Flags section:\n%s", name, out)
				}
				_, errText, code := cli(t, h.name)
				if code != exitInvalid || !strings.HasPrefix(errText, "retrysafe "+h.name+": which one? ") {
					t.Errorf("%s alone: exit %d, %q; want 2 and which one?", name, code, errText)
				}
			}
		})
	}
	for _, c := range []struct{ cmd, flag string }{
		{"ops resolve", "--within-grace"}, {"ops supersede", "--within-grace"}, {"lab", "--db"},
	} {
		h, _ := helpFor(c.cmd)
		if !strings.Contains(h.synopsis, c.flag) {
			t.Errorf("%s's usage line lacks %s: %s", c.cmd, c.flag, h.synopsis)
		}
	}
	for _, sub := range []string{"resolve", "supersede"} {
		if !strings.Contains(opsUsageLine(t, "ops "+sub), "--within-grace") {
			t.Errorf("ops -h's usage of ops %s lacks --within-grace", sub)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(l, "retrysafe ops resolve   --tenant T --key K --as not-applied") && !strings.Contains(l, "--within-grace") {
			t.Errorf("README's ops synopsis has no --within-grace: %s", l)
		}
	}
}

// opsUsageLine is the text of ops -h from sub's line to the next command's.
func opsUsageLine(t *testing.T, sub string) string {
	t.Helper()
	out, _, _ := cli(t, "ops", "-h")
	var b strings.Builder
	in := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "retrysafe ") {
			in = strings.HasPrefix(strings.TrimSpace(l), "retrysafe "+sub+" ")
		}
		if in {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
