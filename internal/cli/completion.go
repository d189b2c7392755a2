package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/retrysafe/retrysafe/model"
)

// runCompletion prints a completion script for bash or zsh. The commands,
// subcommands and flags come from the commands themselves (their -h), so
// the script cannot drift from the binary that wrote it.
func runCompletion(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("completion", stderr)
	if code, ok := parseFlags(fs, nil, stdout, stderr); !ok {
		return code
	}
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		printHelp(stdout, fs, "completion")
		return exitOK
	}
	if len(args) != 1 {
		return fail(stderr, model.Errorf(model.CodeInvalid, "completion needs one shell: bash or zsh"))
	}
	words := completionWords()
	switch args[0] {
	case "bash":
		fmt.Fprint(stdout, bashCompletion(words))
	case "zsh":
		fmt.Fprint(stdout, "#compdef retrysafe\n\nautoload -U +X bashcompinit && bashcompinit\n"+bashCompletion(words))
	default:
		return fail(stderr, model.Errorf(model.CodeInvalid, "completion for %q is not available (bash or zsh)", args[0]))
	}
	return exitOK
}

// completionWords maps "" (top level), each command and each group's
// subcommand ("ops list", "tokens create") to the words that may follow it.
func completionWords() map[string][]string {
	words := map[string][]string{}
	groups := map[string]bool{}
	for _, h := range commandHelp() {
		if group, sub, ok := strings.Cut(h.name, " "); ok {
			groups[group] = true
			words[group] = append(words[group], sub)
		}
	}
	for _, h := range commandHelp() {
		if h.name != "" && !strings.Contains(h.name, " ") {
			words[""] = append(words[""], h.name)
		}
		if groups[h.name] || h.name == "completion" || h.name == "" {
			continue
		}
		var buf bytes.Buffer
		argv := append(strings.Fields(h.name), "-h")
		Run(argv, &buf, &buf)
		words[h.name] = flagNames(buf.String())
	}
	var console bytes.Buffer
	Run([]string{"-h"}, &console, &console)
	words[""] = append(words[""], "console")
	words[""] = append(words[""], flagNames(console.String())...)
	words["console"] = flagNames(console.String())
	words["completion"] = []string{"bash", "zsh"}
	return words
}

func bashCompletion(words map[string][]string) string {
	var keys []string
	for k := range words {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// The groups (ops, tokens, sandbox): their second word names the
	// subcommand whose flags follow.
	var groups []string
	for _, k := range keys {
		if g, _, ok := strings.Cut(k, " "); ok && (len(groups) == 0 || groups[len(groups)-1] != g) {
			groups = append(groups, g)
		}
	}
	var b strings.Builder
	b.WriteString(`# bash completion for retrysafe (retrysafe completion bash)
_retrysafe() {
    local cur="${COMP_WORDS[COMP_CWORD]}" cmd="" i w
    for ((i = 1; i < COMP_CWORD; i++)); do
        w="${COMP_WORDS[i]}"
        [[ "$w" == -* ]] && continue
        if [[ -z "$cmd" ]]; then cmd="$w"; else
            case "$cmd" in
                ` + strings.Join(groups, "|") + `) cmd="$cmd $w"; break ;;
            esac
        fi
    done
    local words=""
    case "$cmd" in
`)
	for _, k := range keys {
		fmt.Fprintf(&b, "        %q) words=%q ;;\n", k, strings.Join(words[k], " "))
	}
	b.WriteString(`    esac
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _retrysafe retrysafe
`)
	return b.String()
}
