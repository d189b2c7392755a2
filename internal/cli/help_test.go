package cli

import (
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
		if h.name == "" || h.name == "ops" || h.name == "tokens" || h.name == "sandbox" || h.name == "completion" {
			continue
		}
		_, text, code := cli(t, append(strings.Fields(h.name), "-h")...)
		if code != 0 {
			t.Errorf("%s -h: exit %d", h.name, code)
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
		script := out + `
COMP_WORDS=(retrysafe sweep --tomb); COMP_CWORD=2; _retrysafe; echo "${COMPREPLY[@]}"`
		got, err := exec.Command(bash, "-c", script).CombinedOutput()
		if err != nil || strings.TrimSpace(string(got)) != "--tombstone-window" {
			t.Errorf("bash completion of 'sweep --tomb' = %q %v", got, err)
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
