package cli

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// help is what `retrysafe COMMAND -h` says beside the flags: one line of
// what it does, how it is called, examples and its exit codes. It is the
// one home of that text: the top-level usage and the shell completions are
// made from the same table.
type help struct {
	name     string // "call", "ops list"; "" is the console
	summary  string // one line
	synopsis string
	examples []string
	exits    []string
}

// commonExits are the exit codes of every command but call and lab.
func commonExits() []string {
	return []string{
		"0  done",
		"1  internal or storage failure (disk full, I/O error, ledger locked past the deadline): try again later",
		"2  refused: bad flags or input, no such ledger or operation, an illegal or stale decision — nothing was written",
	}
}

// commandHelp lists every command, in the order `retrysafe --help` shows
// them. It is a function, not a package variable: nothing at package level
// changes at run time, and nothing is built until someone asks for help.
func commandHelp() []help {
	exitsCommon := commonExits()
	return []help{
		{name: "", summary: "open the console to look at operations and settle unknown outcomes",
			synopsis: "retrysafe [--db FILE|URL] [--provider-db FILE] [--tenant T] [--operator NAME] [--read-only] [--log FILE]",
			examples: []string{"retrysafe --db ledger.db", "retrysafe --db ledger.db --tenant acme --read-only"},
			exits:    exitsCommon},
		{name: "call", summary: "make one idempotent tool call (the same key is safe to send again)",
			synopsis: "retrysafe call --tenant T --key K --tool NAME --args JSON|@FILE|- [flags]",
			examples: []string{
				`retrysafe call --tenant acme --key op-42 --tool create_support_task --args '{"subject":"printer on fire"}'`,
				`retrysafe call --tenant acme --key op-43 --tool send_notification --args @notify.json --retry`,
				`echo '{"report":"weekly"}' | retrysafe call --tenant acme --key op-44 --tool create_report_job --args -`,
			},
			exits: []string{
				"0  done: use the receipt (created or replayed)",
				"1  internal: the machine failed (disk full, I/O error, locked); retry the same key later",
				"2  invalid: fix the request (nothing was written)",
				"3  conflict: the key was used with other arguments; resend the original arguments (a new key only for a new action, and only once the first request's outcome is settled: not in progress, unknown or contradicted)",
				"4  in progress: another attempt holds the key; retry the same key later",
				"5  unknown: stop; a person reconciles it (retrysafe ops check / the console)",
				"6  superseded: an operator authorized a new key; use new_key",
				"7  expired: past the replay window; reconcile, do not retry under a fresh key",
				"8  failed: the provider rejected it for good; the stored failure replays",
			}},
		{name: "ops", summary: "inspect and settle operations: list, show, resolve, supersede, check, decisions",
			synopsis: "retrysafe ops list|show|resolve|supersede|check|decisions [flags]",
			examples: []string{"retrysafe ops list --state unknown", "retrysafe ops show --tenant acme --key op-42"},
			exits: []string{
				"0  done",
				"1  internal or storage failure (disk full, I/O error, ledger locked past the deadline): try again later",
				"2  refused: bad flags or input, no such ledger or operation, an illegal or stale decision — no decision was written; but ops check and resolve --check record the provider's finding even so, and a bulk resolve --yes keeps the decisions it wrote (see each one's -h)",
			}},
		{name: "ops list", summary: "list operations, newest first, a page at a time",
			synopsis: "retrysafe ops list [--state S] [--tenant T] [--tool X] [--search TEXT] [--finding F] [--limit N] [--before ID] [--json]",
			examples: []string{"retrysafe ops list --state unknown --tenant acme", "retrysafe ops list --state unknown --finding has-it   # what a triage run found", "retrysafe ops list --limit 100 --before 5120 --json"},
			exits:    exitsCommon},
		{name: "ops show", summary: "show one operation with its attempts, decisions and links",
			synopsis: "retrysafe ops show --tenant T --key K [--json]",
			examples: []string{"retrysafe ops show --tenant acme --key op-42"},
			exits:    exitsCommon},
		{name: "ops resolve", summary: "record an operator's decision (one operation, several keys or a filter): the effect was applied, or was not",
			synopsis: "retrysafe ops resolve (--tenant T --key K[@V]... | [--tenant T] --state S [--tool X] [--search TEXT] [--finding F]) --as applied|not-applied --reason TEXT [--evidence REF] [--check] [--against-finding[=DIGEST]] [--within-grace] [--provider-db FILE] [--dry-run | --yes] [--operator NAME] [--expect-version N] [--json]",
			examples: []string{
				`retrysafe ops resolve --tenant acme --key op-43 --as applied --evidence msg-7781 --reason "provider log shows delivery"`,
				`retrysafe ops resolve --tenant acme --key op-43 --as not-applied --evidence "INC-4471: provider dropped the batch" --reason "never sent" --expect-version 3   # asks the provider first: refused if it has it, unless --against-finding=DIGEST (the digest ops show, ops check or the refusal printed)`,
				`retrysafe ops resolve --tenant acme --key op-43 --as applied --reason "provider has it" --check`,
				`retrysafe ops resolve --tenant acme --state unknown --as not-applied --evidence INC-7 --reason "outage, nothing left" --dry-run   # then --yes`,
				`retrysafe ops resolve --state unknown --finding has-it --as applied --reason "triage: the provider has it" --dry-run   # each on its own reference; then --yes`,
			},
			exits: []string{
				"0  done: every decision written (or, with --dry-run, listed)",
				"1  internal or storage failure: try again later",
				"2  refused: bad flags or input, an illegal or stale decision, or a decision against the provider's finding without --against-finding (with --check, that finding is recorded even so) — against a \"has it\", only --against-finding=DIGEST naming the ones you saw (another one recorded since refuses the run, nothing written); or (several operations with --yes) not every one was written — those whose RESULT is written were, the rest were not",
			}},
		{name: "ops supersede", summary: "authorize a new key in place of an operation that must be sent again deliberately (its provider is asked first)",
			synopsis: "retrysafe ops supersede --tenant T --key K --reason TEXT [--evidence TEXT] [--new-key K2] [--against-finding[=DIGEST]] [--within-grace] [--provider-db FILE] [--operator NAME] [--expect-version N] [--json]",
			examples: []string{`retrysafe ops supersede --tenant acme --key op-43 --reason "customer asked for a resend"`},
			exits: []string{
				"0  the new key is authorized (printed on stdout); the provider was asked first unless a fresh finding said (a \"cannot tell\" is said on stderr: the key is authorized on your reason)",
				"1  internal or storage failure: try again later",
				"2  refused: bad flags or input, an illegal or stale decision, or the provider has the effect (its check now, recorded as a finding, or the latest recorded one) without --against-finding=DIGEST naming it (ops show and ops check print it; another one recorded since refuses it) — a new key would make it a second time",
			}},
		{name: "ops check", summary: "ask the provider what it holds under an operation's downstream key, and record the finding (it changes no state)",
			synopsis: "retrysafe ops check --tenant T --key K [--provider-db FILE] [--operator NAME] [--read-only] [--json]",
			examples: []string{"retrysafe ops check --tenant acme --key op-43", "retrysafe ops check --tenant acme --key op-43 --read-only   # shown, not recorded"},
			exits: []string{
				"0  the provider answered (has it, or has nothing)",
				"1  internal or storage failure: try again later",
				"2  refused (bad flags, no such operation, a local operation: nothing written), or the provider cannot tell — that finding is recorded (unless --read-only)",
			}},
		{name: "ops decisions", summary: "the audit log: every operator decision, newest first",
			synopsis: "retrysafe ops decisions [--tenant T] [--operator NAME] [--action applied|not-applied|new-key] [--limit N] [--json]",
			examples: []string{"retrysafe ops decisions --tenant acme", "retrysafe ops decisions --operator dana --json"},
			exits:    exitsCommon},
		{name: "sweep", summary: "end expired leases (unknown, or re-sent under the same downstream key) and compact old receipts",
			synopsis: "retrysafe sweep [--db FILE|URL] [--provider-db FILE] [--config FILE] [--lease D] [--tombstone-window D] [--json]",
			examples: []string{"retrysafe sweep --db ledger.db", "retrysafe sweep --tombstone-window 720h --json"},
			exits: []string{
				"0  done: every expired lease ended (unknown, or re-sent under its key) and old receipts compacted — also when some were not re-sent or not sent (said on stdout: not_resent, not_sent)",
				"1  internal or storage failure (disk full, I/O error, ledger locked past the deadline): run it again later; what it finished stays",
				"2  bad flags, no such ledger, or a --lease not longer than a provider's timeout — nothing was done",
			}},
		{name: "triage", summary: "ask the providers about every unknown operation (and every claim past its lease), record each finding; decides nothing",
			synopsis: "retrysafe triage [--db FILE|URL] [--tenant T] [--provider P] [--json] [--concurrency N] [--rate R] [--timeout D] [--operator NAME] [--provider-db FILE] [--read-only]",
			examples: []string{"retrysafe triage --db ledger.db", "retrysafe triage --tenant acme --rate 50 --json", "retrysafe triage --read-only   # shown, not recorded"},
			exits: []string{
				"0  every candidate got a conclusive finding (has it / has nothing), recorded (or shown, read-only)",
				"1  some findings could not be recorded (the ledger failed)",
				"2  bad flags, no such ledger or provider",
				"3  finished, but some providers could not tell: those operations still need a person (or another run)",
				"4  interrupted (SIGINT/SIGTERM): the rest were not asked; what was recorded stays",
			}},
		{name: "lab", summary: "reproduce lost replies and crashes with real worker processes and check the ledger after each",
			synopsis: "retrysafe lab [--db URL] [--json] [--keep DIR] [--quiet]",
			examples: []string{"retrysafe lab", "retrysafe lab --keep ./lab-ledgers --json"},
			exits:    []string{"0  every scenario held", "1  a scenario did not hold, or the lab could not run", "2  bad flags"}},
		{name: "demo", summary: "build a demo ledger through the real code paths and open the console on it",
			synopsis: "retrysafe demo [--db FILE|URL] [--fresh] [--no-console]",
			examples: []string{"retrysafe demo", "retrysafe demo --db /tmp/demo.db --fresh --no-console"},
			exits: []string{
				"0  the demo ledger was built (or reused), and the console closed",
				"1  the build failed, or was interrupted (SIGINT/SIGTERM): nothing half-built is left; run it again",
				"2  bad flags, a directory that does not exist, or a ledger the demo did not make (it neither reuses nor rebuilds yours)",
			}},
		{name: "bench", summary: "measure the call path against bare SQLite (or bare pgx) on the same disk, or a running gateway over HTTP",
			synopsis: "retrysafe bench (--db FILE|URL | --http URL --token T) [--workers W] [--ops N] [--rounds R] [--mix new|replay|conflict] [--fresh] [--json]",
			examples: []string{
				"retrysafe bench --db /tmp/bench.db --workers 8 --ops 5000",
				"retrysafe bench --db 'postgres://localhost/ops?search_path=bench' --fresh --mix new",
				"retrysafe bench --http http://127.0.0.1:8080 --token $TOKEN --workers 32 --mix new",
			},
			exits: exitsCommon},
		{name: "gen", summary: "generate a large ledger for console benchmarks",
			synopsis: "retrysafe gen --db FILE|URL --ops N [--tenants T] [--seed S]",
			examples: []string{"retrysafe gen --db /tmp/big.db --ops 1000000"},
			exits:    exitsCommon},
		{name: "serve", summary: "the gateway: tool calls over HTTP with Idempotency-Key semantics, and MCP at /mcp",
			synopsis: "retrysafe serve [--db FILE|URL] [--listen ADDR] [--max-in-flight N] [--call-timeout D] [--shutdown-timeout D] [--mcp-allowed-host NAME]...",
			examples: []string{
				"retrysafe serve --db ledger.db --listen 127.0.0.1:8080",
				`curl -H "Authorization: Bearer $TOKEN" -H "Idempotency-Key: op-42" -H "Content-Type: application/json" -d '{"subject":"printer on fire"}' http://127.0.0.1:8080/v1/tools/create_support_task`,
			},
			exits: []string{"0  stopped on SIGTERM or SIGINT after the calls in flight were answered", "1  the listener or the ledger failed, or --shutdown-timeout ended with requests still in flight: they were cut unanswered (how many is said on stderr)", "2  bad flags, no such ledger directory"}},
		{name: "mcp", summary: "an MCP server over stdio for one tenant (an MCP client starts it)",
			synopsis: "retrysafe mcp --tenant T [--db FILE|URL] [--call-timeout D]",
			examples: []string{"retrysafe mcp --db /srv/retrysafe/ledger.db --tenant acme"},
			exits: []string{
				"0  the client closed stdin, or SIGTERM/SIGINT: the calls in flight were answered",
				"1  the ledger or the transport failed",
				"2  bad flags, no such ledger, a bad --tenant, or a provider that cannot serve (nothing was started)",
			}},
		{name: "tokens", summary: "the gateway's bearer tokens: create (printed once), list, revoke",
			synopsis: "retrysafe tokens create|list|revoke [flags]",
			examples: []string{`retrysafe tokens create --tenant acme --name "support agent"`, "retrysafe tokens list", "retrysafe tokens revoke --id 3"},
			exits: []string{
				"0  done",
				"1  storage failure (disk full, I/O error, ledger locked past the deadline): try again later",
				"2  bad flags or input, no subcommand, no such ledger (list, revoke) or token (revoke) — nothing was written",
			}},
		{name: "tokens create", summary: "make a bearer token for one tenant; it is printed once, the ledger keeps only its hash",
			synopsis: "retrysafe tokens create --tenant T [--name N] [--db FILE|URL] [--json]",
			examples: []string{`retrysafe tokens create --tenant acme --name "support agent"`},
			exits: []string{
				"0  the token is made and printed (this once: keep it)",
				"1  storage failure: try again later (no token was made)",
				"2  bad flags, a bad tenant or name — nothing was written",
			}},
		{name: "tokens list", summary: "list the gateway's tokens (never the tokens themselves)",
			synopsis: "retrysafe tokens list [--tenant T] [--db FILE|URL] [--json]",
			examples: []string{"retrysafe tokens list --tenant acme"},
			exits: []string{
				"0  listed (an empty list too)",
				"1  storage failure: try again later",
				"2  bad flags, no such ledger",
			}},
		{name: "tokens revoke", summary: "revoke a token: the gateway answers 401 to it from then on",
			synopsis: "retrysafe tokens revoke --id N [--db FILE|URL] [--json]",
			examples: []string{"retrysafe tokens revoke --id 3"},
			exits: []string{
				"0  revoked",
				"1  storage failure: try again later (it was not revoked)",
				"2  bad flags, no --id, no such ledger or token — nothing was written",
			}},
		{name: "migrate", summary: "bring an older ledger's schema up to this retrysafe's, once after an upgrade",
			synopsis: "retrysafe migrate [--db FILE|URL] [--json]",
			examples: []string{"retrysafe migrate --db ledger.db", `retrysafe migrate --db "postgres://owner@db.internal/retrysafe?search_path=ledger"`},
			exits: []string{
				"0  migrated, or already current (it says which)",
				"1  storage failure (disk full, I/O error, ledger locked past the deadline), or PostgreSQL unavailable: try again later",
				"2  bad flags, no such ledger (it creates none), a ledger from a newer retrysafe, or a PostgreSQL role that may not change the schema (run it as the schema's owner) — nothing was changed",
			}},
		{name: "sandbox", summary: "the sandbox provider: a stand-in third party that takes idempotency keys",
			synopsis: "retrysafe sandbox serve [flags]",
			examples: []string{"retrysafe sandbox serve --listen 127.0.0.1:8025 --db sandbox.db"},
			exits:    []string{"0  stopped on SIGTERM or SIGINT", "1  the listener or its file failed", "2  bad flags, or no subcommand"}},
		{name: "sandbox serve", summary: "serve the sandbox provider over HTTP, with fault switches for demos and tests",
			synopsis: "retrysafe sandbox serve [--listen ADDR] [--db FILE] [--fault drop-after-apply|delay=D|reject|5xx|busy] [--honour-keys NAMES]",
			examples: []string{"retrysafe sandbox serve --listen 127.0.0.1:8025", "retrysafe sandbox serve --fault drop-after-apply"},
			exits:    []string{"0  stopped on SIGTERM or SIGINT", "1  the listener or its file failed", "2  bad flags"}},
		{name: "version", summary: "print the version, commit and Go toolchain of this binary",
			synopsis: "retrysafe version [--json]", examples: []string{"retrysafe version"}, exits: exitsCommon},
		{name: "completion", summary: "print a shell completion script (bash or zsh)",
			synopsis: "retrysafe completion bash|zsh",
			examples: []string{`source <(retrysafe completion bash)`, `retrysafe completion zsh > "${fpath[1]}/_retrysafe"`},
			exits:    exitsCommon},
	}
}

// helpFor returns the help of a command ("ops list"), or false.
func helpFor(name string) (help, bool) {
	for _, h := range commandHelp() {
		if h.name == name {
			return h, true
		}
	}
	return help{}, false
}

// topUsage is `retrysafe --help`: every command with its one line.
func topUsage() string {
	var b strings.Builder
	b.WriteString("retrysafe — safe retries for agent write tools, and a console to settle unknown outcomes\n\nUsage:\n")
	b.WriteString("  retrysafe [console] [flags]  open the console\n")
	b.WriteString("  retrysafe COMMAND [flags]\n\nCommands:\n")
	for _, h := range commandHelp() {
		if h.name == "" || strings.Contains(h.name, " ") {
			continue // the console, and subcommands (listed by their group's -h)
		}
		fmt.Fprintf(&b, "  %-11s %s\n", h.name, h.summary)
	}
	b.WriteString("\nThe ledger is --db, else $RETRYSAFE_DB, else ./retrysafe.db. The tools and providers\n")
	b.WriteString("are --config FILE, else $RETRYSAFE_CONFIG, else the built-in demo tools.\n")
	b.WriteString("Run 'retrysafe COMMAND -h' for a command's flags, examples and exit codes;\n")
	b.WriteString("'retrysafe -h' alone lists these commands and the console's flags below.\n")
	return b.String()
}

// groupHelp is `retrysafe GROUP -h` for a command made of subcommands (ops,
// tokens, sandbox): its line, the subcommands' usage, examples and exit
// codes, as every other command's help says them.
func groupHelp(name, usage string) string {
	h, _ := helpFor(name)
	var b strings.Builder
	fmt.Fprintf(&b, "retrysafe %s — %s\n\n%s", name, h.summary, usage)
	var subs []string
	for _, c := range commandHelp() {
		if sub, ok := strings.CutPrefix(c.name, name+" "); ok {
			subs = append(subs, sub)
		}
	}
	fmt.Fprintf(&b, "\nFlags:\n  each subcommand's own: retrysafe %s %s -h\n", name, strings.Join(subs, "|"))
	if len(h.examples) > 0 {
		b.WriteString("\nExamples:\n")
		for _, e := range h.examples {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	b.WriteString("\nExit codes:\n")
	for _, e := range h.exits {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	return b.String()
}

// printHelp writes a command's help with its flags, each default once.
func printHelp(w io.Writer, fs *flag.FlagSet, name string) {
	if name == "console" {
		name = ""
	}
	h, ok := helpFor(name)
	switch {
	case name == "":
		fmt.Fprint(w, topUsage())
	case ok:
		fmt.Fprintf(w, "retrysafe %s — %s\n\nUsage:\n  %s\n", name, h.summary, h.synopsis)
	}
	if flags := flagLines(fs); len(flags) > 0 {
		title := "Flags"
		if name == "" {
			title = "Console flags (retrysafe [flags])"
		}
		fmt.Fprintf(w, "\n%s:\n%s", title, strings.Join(flags, ""))
	}
	if !ok {
		return
	}
	if len(h.examples) > 0 {
		fmt.Fprint(w, "\nExamples:\n")
		for _, e := range h.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	fmt.Fprint(w, "\nExit codes:\n")
	for _, e := range h.exits {
		fmt.Fprintf(w, "  %s\n", e)
	}
}

// flagLines formats a flag set's flags, "--name TYPE  usage (default X)",
// saying the default once: only when the usage does not already.
func flagLines(fs *flag.FlagSet) []string {
	var out []string
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := placeholder(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		line += "\n      " + usage
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && !strings.Contains(usage, "default") {
			line += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		out = append(out, line+"\n")
	})
	sort.Strings(out)
	return out
}

// valueNames name the value of the string flags whose usage names none
// (a backquoted word, as flag.UnquoteUsage reads it), by flag name.
var valueNames = map[string]string{
	"db": "FILE|URL", "config": "FILE", "provider-db": "FILE", "log": "FILE", "cpuprofile": "FILE",
	"keep": "DIR", "baseline-dir": "DIR", "listen": "ADDR", "http": "URL", "token": "TOKEN",
	"tenant": "TENANT", "key": "KEY", "new-key": "KEY", "tool": "TOOL", "provider": "NAME",
	"operator": "NAME", "name": "NAME", "worker": "NAME", "trace-id": "ID", "args": "JSON|@FILE|-",
	"reason": "TEXT", "evidence": "TEXT", "search": "TEXT", "state": "STATE", "finding": "FINDING",
	"as": "applied|not-applied", "action": "ACTION", "fault": "FAULT", "mix": "MIX",
	"log-level": "LEVEL", "mcp-allowed-host": "HOST", "honour-keys": "NAMES", "durability": "MODE",
}

// placeholder is flag.UnquoteUsage of f — a backquoted word in its usage
// names its value — seen through the wrapper that refuses a flag given
// twice (onceValue, which the flag package would call "value"): else its
// type's name, DURATION or N, or for a string valueNames' word, else its
// name in capitals.
func placeholder(f *flag.Flag) (string, string) {
	v := f.Value
	if o, ok := v.(*onceValue); ok {
		v = o.Value
	}
	typ, usage := flag.UnquoteUsage(&flag.Flag{Name: f.Name, Usage: f.Usage, Value: v, DefValue: f.DefValue})
	if strings.Contains(f.Usage, "`") || typ == "" {
		return typ, usage
	}
	switch typ {
	case "duration":
		return "DURATION", usage
	case "int", "uint", "float", "int64", "uint64":
		return "N", usage
	}
	if n, ok := valueNames[f.Name]; ok {
		return n, usage
	}
	return strings.ToUpper(f.Name), usage
}

// flagNames lists a command's flags for completion, by parsing its help
// (the one place flags are declared is the command itself).
func flagNames(helpText string) []string {
	var out []string
	for _, l := range strings.Split(helpText, "\n") {
		if strings.HasPrefix(l, "  --") {
			out = append(out, strings.Fields(l)[0])
		}
	}
	return out
}
