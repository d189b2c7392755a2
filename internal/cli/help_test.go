package cli

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

func TestHelpListsEveryCommandAndEachCommandExplainsItself(t *testing.T) {
	out, _, code := cli(t, "--help")
	if code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	for _, h := range commandHelp() {
		if h.name == "" || strings.Contains(h.name, " ") {
			continue
		}
		if !strings.Contains(out, "  "+h.name+" ") || !strings.Contains(out, h.summary) {
			t.Errorf("--help does not list %q with its line", h.name)
		}
	}
	if !strings.Contains(out, "--read-only") {
		t.Error("--help does not show the console's flags")
	}
	for _, h := range commandHelp() {
		if h.name == "" {
			continue
		}
		// Help asked for is the output (retrysafe call -h | less): stdout.
		text, errText, code := cli(t, append(strings.Fields(h.name), "-h")...)
		if code != 0 || errText != "" {
			t.Errorf("%s -h: exit %d, on stderr %q", h.name, code, errText)
		}
		for _, want := range []string{h.summary, "Usage:", "Examples:", "Exit codes:", "  0  "} {
			if !strings.Contains(text, want) {
				t.Errorf("%s -h lacks %q:\n%s", h.name, want, text)
			}
		}
		// Each default once: the flag package's "(default X)" is not
		// added to a usage that already says its default.
		for _, line := range strings.Split(text, "\n") {
			if strings.Count(line, "default") > 1 {
				t.Errorf("%s -h says a default twice: %q", h.name, line)
			}
		}
	}
}

func TestVersionAndCompletion(t *testing.T) {
	out, _, code := cli(t, "version")
	if code != 0 || !strings.HasPrefix(out, "retrysafe ") || !strings.Contains(out, "go1.") {
		t.Errorf("version: exit %d %q", code, out)
	}
	out, _, code = cli(t, "completion", "bash")
	if code != 0 || !strings.Contains(out, "complete -o default -F _retrysafe retrysafe") {
		t.Fatalf("completion bash: exit %d", code)
	}
	for _, want := range []string{`"call") words="--args`, `"ops") words="list show resolve supersede check decisions"`, "--tombstone-window", "--before"} {
		if !strings.Contains(out, want) {
			t.Errorf("bash completion lacks %q", want)
		}
	}
	if bash, err := exec.LookPath("bash"); err == nil {
		// The script is valid bash and completes a command's flags.
		// Every group's subcommands complete their own flags.
		for line, want := range map[string]string{
			"retrysafe sweep --tomb":           "--tombstone-window",
			"retrysafe ops resolve --again":    "--against-finding",
			"retrysafe tokens create --te":     "--tenant",
			"retrysafe tokens rev":             "revoke",
			"retrysafe sandbox serve --honour": "--honour-keys",
		} {
			words := strings.Fields(line)
			script := out + fmt.Sprintf(`
COMP_WORDS=(%s); COMP_CWORD=%d; _retrysafe; echo "${COMPREPLY[@]}"`, line, len(words)-1)
			got, err := exec.Command(bash, "-c", script).CombinedOutput()
			if err != nil || strings.TrimSpace(string(got)) != want {
				t.Errorf("bash completion of %q = %q %v; want %q", line, got, err, want)
			}
		}
	}
	out, _, code = cli(t, "completion", "zsh")
	if code != 0 || !strings.HasPrefix(out, "#compdef retrysafe") {
		t.Errorf("completion zsh: exit %d", code)
	}
	if _, _, code := cli(t, "completion", "fish"); code != 2 {
		t.Errorf("completion fish: exit %d; want 2", code)
	}
}

// $RETRYSAFE_DB may be a URL with a password: no command's help prints it
// as a default, and each says --db takes a file or a postgres:// URL.
func TestHelpNeverPrintsTheLedgerURLsPassword(t *testing.T) {
	t.Setenv("RETRYSAFE_DB", "postgres://app:s3cret@db.internal/ops")
	for _, h := range commandHelp() {
		args := append(strings.Fields(h.name), "-h")
		out, errText, _ := cli(t, args...)
		text := out + errText
		if strings.Contains(text, "s3cret") {
			t.Errorf("%v prints $RETRYSAFE_DB's password:\n%s", args, text)
		}
		if strings.Contains(text, "--db string\n      the ledger:") && !strings.Contains(text, "postgres://") {
			t.Errorf("%v: --db does not say it takes a URL", args)
		}
	}
}

// "retrysafe console" is what people type for the console: it is the bare
// command's alias, with the same flags, not an unknown command.
func TestConsoleIsTheBareCommandsAlias(t *testing.T) {
	bare, _, code := cli(t, "-h")
	if code != 0 {
		t.Fatalf("-h: exit %d", code)
	}
	named, errText, code := cli(t, "console", "-h")
	if code != 0 || errText != "" || !strings.Contains(named, "--read-only") {
		t.Fatalf("console -h: exit %d, stderr %q:\n%s", code, errText, named)
	}
	if !strings.Contains(bare, "retrysafe [console] [flags]") {
		t.Errorf("-h does not name the console command:\n%s", bare)
	}
	_, errText, code = cli(t, "console", "--no-such-flag")
	if code != 2 || strings.Contains(errText, "unknown command") {
		t.Errorf("console with a bad flag: exit %d, %q; want the console's own flag error", code, errText)
	}
}
