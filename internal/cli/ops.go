package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

const opsUsage = `Usage:
  retrysafe ops list      [--state S] [--tenant T] [--tool X] [--search TEXT] [--finding F] [--limit N] [--before ID] [--json]
  retrysafe ops show      --tenant T --key K [--json]
  retrysafe ops resolve   --tenant T --key K --as applied|not-applied --reason TEXT [--evidence REF] [--operator NAME] [--expect-version N]
                          [--check [--provider-db F] [--against-finding[=DIGEST]]] [--within-grace] [--json]
  retrysafe ops resolve   --tenant T --key K1[@V] --key K2[@V] ... | --state S [--tenant T] [--tool X] [--search TEXT] [--finding F]
                          --as ... --reason ... [--evidence ...] [--provider-db F] [--against-finding[=DIGEST]] [--within-grace] --dry-run | --yes [--json]
  retrysafe ops supersede --tenant T --key K --reason TEXT [--evidence TEXT] [--new-key K2] [--against-finding[=DIGEST]] [--within-grace] [--provider-db FILE] [--operator NAME] [--expect-version N] [--json]
  retrysafe ops check     --tenant T --key K [--provider-db FILE] [--operator NAME] [--read-only] [--json]
  retrysafe ops decisions [--tenant T] [--operator NAME] [--action applied|not-applied|new-key] [--limit N] [--json]
Every one takes --db FILE|URL (a ledger file or a postgres:// URL; default $RETRYSAFE_DB, else ./retrysafe.db).
Contradicted ("contradicted": true, ! in the console: a provider answer or lookup disagrees with the state): a
failed one, a not_applied one (provider ignoring downstream keys) and a held new key (authorized) are not sent — their
calls get exit 5 until a person marks them applied (ops resolve --as applied --evidence REF; a held new key: the
replaced key's reference), or gives a failed or not_applied one a new key (ops supersede --against-finding=DIGEST); an applied
one replays its receipt and may get a new key the same way.
A decision against a provider's "has it" names it: ops show, ops check and --dry-run print the digest of the "has it"
findings they show and the command with --against-finding=DIGEST; a run whose operations have others now (another
operator's check recorded one since) is refused, nothing written. A bare --against-finding confirms no "has it".
`

func runOps(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprint(stdout, groupHelp("ops", opsUsage))
			return exitOK
		}
		fmt.Fprint(stderr, "retrysafe ops: which one? list, show, resolve, supersede, check or decisions\n\n"+opsUsage)
		return exitInvalid
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "list":
		return opsList(ctx, args, stdout, stderr)
	case "show":
		return opsShow(ctx, args, stdout, stderr)
	case "resolve":
		return opsResolve(ctx, args, stdout, stderr)
	case "supersede":
		return opsSupersede(ctx, args, stdout, stderr)
	case "check":
		return opsCheck(ctx, args, stdout, stderr)
	case "decisions":
		return opsDecisions(ctx, args, stdout, stderr)
	}
	fmt.Fprintf(stderr, "retrysafe ops: unknown subcommand %q\n\n%s", sub, opsUsage)
	return exitInvalid
}

func opsList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("ops list", stderr)
	db := fs.String("db", defaultDB(), dbUsage)
	state := fs.String("state", "", "only this state (unknown, in_progress, not_applied, failed, applied, superseded, authorized)")
	tenant := fs.String("tenant", "", "only this tenant")
	tool := fs.String("tool", "", "only this tool")
	cfgPath := configFlag(fs)
	search := fs.String("search", "", "key, subject/report/recipient or trace id contains TEXT")
	finding := fs.String("finding", "", "only operations whose FINDING column reads this — the finding that binds a decision (an earlier \"has it\" where a later lookup says less), else the latest: has-it, has-nothing, cannot-tell or not-checked")
	limit := fs.Int("limit", 50, "at most N operations, newest first")
	before := fs.Int64("before", 0, "the cursor: only operations older than this id (the next page's --before is printed when a page is full)")
	asJSON := fs.Bool("json", false, `one JSON object {"operations":[…],"truncated":bool,"next_before":id}, stable for scripts`)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	q := store.ListQuery{Tenant: *tenant, Tool: *tool, Search: *search, BeforeID: *before}
	if *state != "" {
		st, err := model.ParseState(*state)
		if err != nil {
			return fail(stderr, err)
		}
		q.State = st
	}
	ff, err := model.ParseFindingFilter(*finding)
	if err != nil {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--finding: %v", err))
	}
	q.Finding = ff
	cfg, code, ok := loadConfig(*cfgPath, stderr)
	if !ok {
		return code
	}
	if *tool != "" {
		if _, err := cfg.Tools.Lookup(*tool); err != nil {
			return fail(stderr, err)
		}
	}
	if *limit < 1 || *limit > store.MaxPage {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--limit must be between 1 and %d", store.MaxPage))
	}
	if *before < 0 {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--before must be an operation id (from a previous page), got %d", *before))
	}
	l, err := openLedger(context.Background(), *db, cfg, opening{store: store.Options{ReadOnly: true}})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	// One row more than the page says whether there is a next page (the
	// store reads up to store.MaxPage+1 rows as asked).
	q.Limit = *limit + 1
	ops, err := l.Store().List(ctx, q)
	if err != nil {
		return fail(stderr, err)
	}
	var page listPage
	if len(ops) > *limit {
		ops, page.Truncated = ops[:*limit], true
		page.NextBefore = ops[*limit-1].ID
	}
	// The clock a lease is compared with (lease_ended, "lease ended"):
	// the ledger's (on PostgreSQL the database server's), as the writes'.
	now := l.Store().Now()
	page.Operations = make([]opView, len(ops))
	for i, op := range ops {
		page.Operations[i] = viewOf(op, now)
	}
	if *asJSON {
		return printJSON(stdout, stderr, page)
	}
	if len(page.Operations) == 0 {
		fmt.Fprintln(stdout, "no operations match")
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCREATED\tTENANT\tKEY\tTOOL\tSTATE\tFINDING\tATTEMPTS\tPROVIDER REF\tSUMMARY")
	// ATTEMPTS: the calls of the key, as the console's ATT (each send,
	// replay or conflict) — a provider lookup (a check, a triage) asks
	// about the effect and is not one (--json has attempt_count and
	// lookup_count).
	for _, v := range page.Operations {
		op := v.Operation
		st := v.stateWords()
		if op.Contradicted {
			st += " (contradicted)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", op.ID, op.CreatedAt.Local().Format("2006-01-02 15:04:05"),
			show(op.Tenant), show(op.Key), show(op.Tool), st, findingCell(op, now), op.AttemptCount-op.LookupCount, show(dash(op.ProviderRef)), show(clip(op.Summary, 40)))
	}
	tw.Flush()
	if page.Truncated {
		fmt.Fprintf(stdout, "\nshowing the newest %d; more match — the next page: the same command with --before %d\n", len(page.Operations), page.NextBefore)
	}
	return exitOK
}

// findingCell is ops list's FINDING column, in the console's words: what
// the operation's latest provider lookup found (has it · its reference, has
// nothing, cannot tell), and how long ago; "stale:" first when an attempt
// that may have reached the provider came after it (a refused retry or a
// replay does not); "not checked" when no lookup was recorded; "-"
// for a local operation (there is no provider to ask); an earlier lookup
// that binds a decision where the latest says less, as "has it
// (earlier)" (model.Operation.Shown, what --finding selects by). The
// provider's reference is outside text: made inert, then cut short.
func findingCell(op model.Operation, now time.Time) string {
	f := op.Shown()
	switch {
	case f == nil && op.Provider == "":
		return "-"
	case f == nil:
		return "not checked"
	}
	return f.Line(clip(show(f.Ref), 24), ago(now, f.At))
}

// ago is how long before now t was, in one unit: 45s, 12m, 3h, 2d.
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return ""
	case d < time.Second:
		return "now"
	}
	return model.AgeWords(d) + " ago"
}

// opView is an operation as ops list and ops show give it: the ledger's
// row, and whether its lease has ended.
type opView struct {
	model.Operation
	// LeaseEnded: in_progress, and its lease ended before the command's
	// clock read now — no worker holds the claim (it died, or its claim
	// was released: ClaimReleased says which); a sweep or the next call
	// of its key settles it.
	LeaseEnded bool `json:"lease_ended"`
	// ClaimReleased: of those, one whose claim was released to be sent
	// again under its key (a lost reply, a re-send answered busy, not
	// sent or nothing applied) — not a worker that died holding it.
	ClaimReleased bool `json:"claim_released"`
	// held: its provider's Retry-After has not passed
	// (reconcile.HeldWords), "" when it has or none was asked — nothing
	// is sent before then. JSON has retry_not_before.
	held string
}

// viewOf is op as of now (the command's clock).
func viewOf(op model.Operation, now time.Time) opView {
	return opView{Operation: op, LeaseEnded: reconcile.LeaseEnded(op, now), ClaimReleased: reconcile.ClaimReleased(op, now), held: reconcile.HeldWords(op, now)}
}

// stateWords is the operation's state for the text output:
// "in_progress (lease ended)" when no worker holds it any more,
// "in_progress (released)" when its claim was released to be sent again.
func (v opView) stateWords() string {
	switch {
	case v.held != "":
		// Its provider asked to be left alone: nothing is sent before
		// then, so not "released" (to be sent again).
		return string(v.State) + " (held until " + v.RetryNotBefore.Local().Format("15:04:05") + ")"
	case v.ClaimReleased:
		return string(v.State) + " (released)"
	case v.LeaseEnded:
		return string(v.State) + " (lease ended)"
	}
	return string(v.State)
}

// listPage is `ops list --json`: one page, and where the next begins.
type listPage struct {
	Operations []opView `json:"operations"`
	// Truncated says more operations match than the page holds.
	Truncated bool `json:"truncated"`
	// NextBefore is the --before of the next page (0 when there is none).
	NextBefore int64 `json:"next_before,omitempty"`
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// printJSON writes v as indented JSON with every control, format and
// bidirectional character escaped (encoding/json leaves DEL, C1 and bidi
// controls raw), so a script's output shown on a terminal is inert too.
func printJSON(stdout, stderr io.Writer, v any) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fail(stderr, err)
	}
	stdout.Write(append(textsafe.JSON(b), '\n'))
	return exitOK
}

// jsonLine is v as one line of JSON, escaped like printJSON's.
func jsonLine(v any) string {
	b, _ := json.Marshal(v)
	return string(textsafe.JSON(b))
}

// keyFlags registers --db, --tenant and --key, shared by the per-operation
// commands.
type keyFlags struct{ db, tenant, key string }

func (k *keyFlags) register(fs interface {
	StringVar(*string, string, string, string)
}) {
	fs.StringVar(&k.db, "db", defaultDB(), dbUsage)
	fs.StringVar(&k.tenant, "tenant", "", "tenant (required)")
	fs.StringVar(&k.key, "key", "", "operation key (required)")
}

func (k *keyFlags) validate() error {
	if k.tenant == "" || k.key == "" {
		return model.Errorf(model.CodeInvalid, "--tenant and --key are required")
	}
	return model.ValidateIdentity(k.tenant, k.key)
}

func opsShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("ops show", stderr)
	var k keyFlags
	k.register(fs)
	// Taken so that the commands other commands print (ops show with the
	// flags of the call that printed it) run, and carried into the
	// commands this one prints: an ops check without the config would ask
	// no provider. Nothing is asked or opened here but the ledger.
	pdb := fs.String("provider-db", "", "sandbox provider file (default beside the ledger), carried into the commands it prints")
	cfgPath := configFlag(fs)
	asJSON := fs.Bool("json", false, "JSON, stable for scripts")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := k.validate(); err != nil {
		return fail(stderr, err)
	}
	cfg, code, ok := loadConfig(*cfgPath, stderr)
	if !ok {
		return code
	}
	flags := ledgerFlags(k.db, *pdb, *cfgPath)
	l, err := openLedger(context.Background(), k.db, cfg, opening{store: store.Options{ReadOnly: true}})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	d, err := l.Store().Detail(ctx, k.tenant, k.key)
	if model.IsCode(err, model.CodeNotFound) {
		// A key a sweep compacted is not "no operation": calls of it are
		// told "expired" until its tombstone is forgotten. A failed read
		// of the tombstone is that failure, never "no operation".
		ts, terr := l.Store().Tombstone(ctx, k.tenant, k.key)
		if terr == nil {
			return showTombstone(stdout, stderr, ts, *asJSON)
		}
		if !model.IsCode(terr, model.CodeNotFound) {
			return fail(stderr, terr)
		}
	}
	if err != nil {
		return fail(stderr, err)
	}
	// The digest of its "has it", for a decision against it to name
	// (--against-finding=DIGEST), and the commands that would.
	hs := hasIts([]model.Operation{d.Operation})
	dg := digestOf(hs)
	// The clock a lease is compared with: this command's.
	view := viewOf(d.Operation, l.Store().Now())
	if *asJSON {
		if d.Attempts == nil {
			d.Attempts = []model.Attempt{}
		}
		if d.Decisions == nil {
			d.Decisions = []model.Decision{}
		}
		return printJSON(stdout, stderr, struct {
			*model.Detail
			// Operation is the Detail's, with lease_ended (it hides the
			// embedded one: the shallower field wins).
			Operation opView `json:"operation"`
			// AgainstFindingDigest: --against-finding=DIGEST of a decision
			// against its "has it" (or receipt).
			AgainstFindingDigest string `json:"against_finding_digest,omitempty"`
			// Actions: what a person may do with it now (actionsOf).
			Actions []actionView `json:"actions"`
		}{d, view, dg, actionsOf(l.Service(), d, flags, l.Store().Now())})
	}
	writeDetail(stdout, d, view)
	if view.held != "" && d.Operation.State != model.StateInProgress {
		// A not_applied one: the next call would send it, but not yet.
		fmt.Fprintf(stdout, "\n%s\n", show(view.held))
	}
	if lines := inProgressWords(retryable(cfg, d.Operation), d, l.Service().GraceFrom(d.Operation, d.Attempts), flags, l.Store().Now()); len(lines) > 0 {
		fmt.Fprintln(stdout)
		for _, line := range lines {
			fmt.Fprintln(stdout, show(line))
		}
	}
	if lines := unknownWords(l.Service(), d, flags, l.Store().Now()); len(lines) > 0 {
		fmt.Fprintln(stdout)
		for _, line := range lines {
			fmt.Fprintln(stdout, show(line))
		}
	}
	if line := offer(hs, decideCommands(d.Operation, flags, dg, l.Store().Now())...); line != "" {
		fmt.Fprintf(stdout, "\n%s\n", show(line))
	}
	return exitOK
}

// unknownWords is what a person can do about an unknown operation, one
// line each (none for any other state), by the write's rules
// (reconcile.Offers, as --json's "actions"): ask the provider first, then
// each decision allowed now, with what it needs first (the grace, or the
// second confirmation against a finding) after it.
func unknownWords(svc *reconcile.Service, d *model.Detail, ledger string, now time.Time) []string {
	op := d.Operation
	if op.State != model.StateUnknown {
		return nil
	}
	keys := keyFlagsFor(op)
	lines := []string{"what you can do: its outcome is unknown, and nothing leaves unknown by itself — a person decides:"}
	if op.Provider != "" {
		lines = append(lines, "  retrysafe ops check"+ledger+keys+"   # ask the provider first; records its finding, decides nothing")
	}
	cmds := map[model.Action][2]string{
		model.ActionMarkApplied:    {"retrysafe ops resolve" + ledger + keys + ` --as applied --evidence REF --reason "…"`, ""},
		model.ActionMarkNotApplied: {"retrysafe ops resolve" + ledger + keys + ` --as not-applied --evidence "…" --reason "…"`, "asks the provider first"},
		model.ActionAuthorizeKey:   {"retrysafe ops supersede" + ledger + keys + ` --reason "…"`, "a new key; asks the provider first"},
	}
	for _, o := range svc.Offers(op, d.Attempts, now) {
		if !o.Allowed {
			continue
		}
		line, note := "  "+cmds[o.Action][0], cmds[o.Action][1]
		if why := o.Why(op); why != "" {
			note = strings.TrimPrefix(note+"; "+why, "; ")
		}
		if note != "" {
			line += "   # " + note
		}
		lines = append(lines, line)
	}
	return lines
}

// inProgressWords is what a person can do about an in_progress operation
// (R6 D3), one line each, none for any other: nothing while a worker holds its claim (its
// lease live); once nobody does — released, or its lease ended — settle
// it as an unknown one, with the commands to run (the grace named, when
// "not applied" and a new key must wait it out).
func inProgressWords(retry bool, d *model.Detail, g reconcile.RequestGrace, ledger string, now time.Time) []string {
	op := d.Operation
	if op.State != model.StateInProgress {
		return nil
	}
	if !reconcile.Unheld(op, now) {
		return []string{fmt.Sprintf("what you can do: no decision yet — claim %d is held by %s until %s, and a worker may be sending it now. If it is still in_progress after that, settle it as an unknown one (ops check, ops resolve, ops supersede).",
			op.ClaimNo, dash(op.LeaseOwner), fmtTime(op.LeaseUntil))}
	}
	how := "its lease ended " + fmtTime(op.LeaseUntil) + " with no result"
	held := reconcile.HeldWords(op, now)
	switch {
	case op.LeaseOwner == reconcile.LeaseReleased && held != "":
		// Not "to be sent again by a sweep or the next call": neither
		// sends anything before the provider's Retry-After.
		how = "its claim was released " + fmtTime(op.LeaseUntil) + " after a busy answer; " + held
	case op.LeaseOwner == reconcile.LeaseReleased:
		how = "its claim was released " + fmtTime(op.LeaseUntil) + " to be sent again under its key by a sweep or the next call (its reply was lost, or a re-send was answered busy, not sent or nothing applied)"
	}
	if other := op.Finding; other != nil && other.Kind == model.FindingHasOther {
		// Neither a sweep nor a call sends it again under a key that
		// holds another request: the provider would answer with that
		// request's result. Not offered.
		retry = false
		if op.LeaseOwner == reconcile.LeaseReleased {
			how = "its claim was released " + fmtTime(op.LeaseUntil)
		}
		how += "; the latest lookup found a different request under its downstream key, so neither a sweep nor the next call sends it again under that key (either makes it unknown) — to send it, authorize a new key (ops supersede)"
	}
	keys := keyFlagsFor(op)
	lines := []string{"what you can do: nobody holds its claim — " + how + ". A person may settle it as an unknown one:"}
	if op.LeaseOwner == reconcile.LeaseReleased && retry {
		// Sent again under its key, the provider answers with its first
		// result: the retry first, as ops check offers it.
		when := "retry the same key first"
		if held != "" {
			when = "after " + op.RetryNotBefore.UTC().Format(time.RFC3339) + " (its Retry-After), retry the same key first"
		}
		lines = append(lines, "  retrysafe call"+ledger+keys+" --tool "+textsafe.ShellWord(op.Tool)+" --args "+textsafe.ShellWord(string(op.Args))+
			"   # "+when+": provider "+op.Provider+" honours downstream keys, so it answers with its first result")
		lines[0] = "what you can do: nobody holds its claim — " + how + ". Retry it, or a person may settle it as an unknown one:"
	}
	lines = append(lines,
		"  retrysafe ops check"+ledger+keys+"   # ask the provider first",
		"  retrysafe ops resolve"+ledger+keys+` --as applied --evidence REF --reason "…"`,
		"  retrysafe ops resolve"+ledger+keys+` --as not-applied --evidence "…" --reason "…"   # asks the provider first`,
		"  retrysafe ops supersede"+ledger+keys+` --reason "…"   # a new key; asks the provider first`,
	)
	if g.Within(now) {
		lines = append(lines, fmt.Sprintf("  not applied and a new key are refused until %s (UTC): the provider may still apply the request sent at %s (--within-grace only if you know it dropped it)",
			g.Until.UTC().Format(time.RFC3339), g.Sent.UTC().Format(time.RFC3339)))
	}
	return lines
}

// retryable reports whether ops show offers a retry of op's key first: its
// claim recorded that its provider honours downstream keys, and so does
// cfg (ops show opens no provider, so where it sends is not compared
// here — a retry is: reconcile holds a claim it cannot send again safely).
func retryable(cfg *config.Config, op model.Operation) bool {
	if op.ClaimHonoursKeys == nil || !*op.ClaimHonoursKeys || op.ClaimDispatchID == "" {
		return false
	}
	for _, p := range cfg.Providers {
		if p.Name == op.Provider {
			return p.HonoursKeys
		}
	}
	return false
}

// actionView is one decision in `ops show --json`'s "actions": what a
// person may do with the operation now, by the write's own rules
// (reconcile.OfferOf) — the same the text's "what you can do" and the
// console's keys say.
type actionView struct {
	Action model.Action `json:"action"`
	// ConsoleKey is the console's key for it; Command the command that
	// makes it (fill in the "…").
	ConsoleKey string `json:"console_key"`
	Command    string `json:"command"`
	// Allowed: the write allows it now (else Reason says why: its state,
	// or a live lease until Until).
	Allowed bool `json:"allowed"`
	// Needs: what the write asks for first, when allowed: "within_grace"
	// (--within-grace, until Until: the provider may still apply the
	// latest request), "against_finding" (--against-finding=DIGEST: it
	// goes against the finding that binds it). Empty: nothing.
	Needs  []string   `json:"needs"`
	Until  *time.Time `json:"until,omitempty"`
	Reason string     `json:"reason,omitempty"`
}

// actionsOf is `ops show --json`'s "actions" of d at now: each decision
// (model.AllActions), by reconcile.OfferOf of its operation and attempts.
func actionsOf(svc *reconcile.Service, d *model.Detail, ledger string, now time.Time) []actionView {
	op := d.Operation
	keys := keyFlagsFor(op)
	cmds := map[model.Action][2]string{
		model.ActionMarkApplied:    {"a", "retrysafe ops resolve" + ledger + keys + ` --as applied --evidence REF --reason "…"`},
		model.ActionMarkNotApplied: {"n", "retrysafe ops resolve" + ledger + keys + ` --as not-applied --evidence "…" --reason "…"`},
		model.ActionAuthorizeKey:   {"s", "retrysafe ops supersede" + ledger + keys + ` --reason "…"`},
	}
	out := []actionView{}
	for _, o := range svc.Offers(op, d.Attempts, now) {
		v := actionView{Action: o.Action, ConsoleKey: cmds[o.Action][0], Command: cmds[o.Action][1], Allowed: o.Allowed, Needs: []string{}, Reason: o.Why(op)}
		if !o.HeldUntil.IsZero() {
			t := o.HeldUntil.UTC()
			v.Until = &t
		}
		if o.Grace != nil {
			t := o.Grace.Until.UTC()
			v.Needs, v.Until = append(v.Needs, "within_grace"), &t
		}
		if o.Against {
			v.Needs = append(v.Needs, "against_finding")
		}
		out = append(out, v)
	}
	return out
}

// leaseWords is ops show's lease row: what happened to the claim — held
// (live until T), its lease ended (at T: nobody holds it), or released
// (at T, to be sent again: a released claim's lease time is when it was
// released), as the console's detail says it.
func leaseWords(v opView) string {
	op := v.Operation
	switch {
	case op.State != model.StateInProgress:
		return fmt.Sprintf("%s until %s", dash(op.LeaseOwner), fmtTime(op.LeaseUntil))
	case op.LeaseOwner == reconcile.LeaseReleased && v.held != "":
		return fmt.Sprintf("released at %s: nobody holds the claim — %s", fmtTime(op.LeaseUntil), v.held)
	case op.LeaseOwner == reconcile.LeaseReleased:
		return fmt.Sprintf("released at %s to be sent again: nobody holds the claim", fmtTime(op.LeaseUntil))
	case v.LeaseEnded:
		return fmt.Sprintf("%s's lease ended at %s: nobody holds the claim", dash(op.LeaseOwner), fmtTime(op.LeaseUntil))
	}
	return fmt.Sprintf("held by %s, live until %s", dash(op.LeaseOwner), fmtTime(op.LeaseUntil))
}

// tombstoneView is `ops show --json` of a compacted key.
type tombstoneView struct {
	Tombstone struct {
		Tenant       string      `json:"tenant"`
		Key          string      `json:"key"`
		Tool         string      `json:"tool"`
		Fingerprint  string      `json:"fingerprint"`
		FinalState   model.State `json:"final_state"`
		CompactedAt  time.Time   `json:"compacted_at"`
		RefusedUntil time.Time   `json:"refused_until"`
		ReceiptKept  bool        `json:"receipt_kept"`
	} `json:"tombstone"`
}

// showTombstone prints what ops show knows of a compacted key.
func showTombstone(stdout, stderr io.Writer, ts *model.Tombstone, asJSON bool) int {
	if asJSON {
		var v tombstoneView
		t := &v.Tombstone
		t.Tenant, t.Key, t.Tool, t.Fingerprint, t.FinalState = ts.Tenant, ts.Key, ts.Tool, ts.Fingerprint, ts.FinalState
		t.CompactedAt, t.RefusedUntil = ts.ExpiredAt, ts.ForgetAt
		return printJSON(stdout, stderr, v)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, show(v)) }
	row("tenant", ts.Tenant)
	row("key", ts.Key)
	row("tool", ts.Tool)
	row("state", fmt.Sprintf("compacted — it ended %s, its replay window passed, and a sweep kept only this tombstone", ts.FinalState))
	row("fingerprint", ts.Fingerprint)
	row("compacted", fmtTime(ts.ExpiredAt))
	row("refused until", fmtTime(ts.ForgetAt)+" — a call of the key is told \"expired\" (exit 7) until then; after that the key is forgotten and a call makes a new operation")
	row("receipt", "not kept (compaction drops receipts, attempts and decisions; the effect itself is kept)")
	tw.Flush()
	return exitOK
}

// writeDetail is ops show's text of d; view is d.Operation with whether
// its lease has ended.
func writeDetail(w io.Writer, d *model.Detail, view opView) {
	op := d.Operation
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, show(v))
		}
	}
	st := view.stateWords()
	switch {
	case op.Contradicted && op.State == model.StateAuthorized:
		st += "  (CONTRADICTED: the provider said later — a late answer, or a lookup of that key — that it applied the key this one replaced: its first call is refused; mark it applied with that key's reference)"
	case op.Contradicted:
		st += "  (CONTRADICTED: a late provider answer or a lookup disagrees — see attempts and finding)"
	}
	row("tenant", op.Tenant)
	row("key", op.Key)
	row("tool", fmt.Sprintf("%s (payload v%d)", op.Tool, op.PayloadVersion))
	row("state", st)
	row("version", fmt.Sprint(op.Version))
	row("arguments", string(op.Args))
	row("fingerprint", op.Fingerprint)
	row("created", fmtTime(op.CreatedAt))
	row("updated", fmtTime(op.UpdatedAt))
	if !op.LeaseUntil.IsZero() {
		row("lease", leaseWords(view))
	}
	if !op.ExpiresAt.IsZero() {
		row("replays until", fmtTime(op.ExpiresAt))
	}
	row("provider", op.Provider)
	row("downstream key", op.DownstreamKey)
	if op.Provider != "" {
		row("honours keys", claimKeysWords(op))
	}
	row("provider ref", op.ProviderRef)
	if f := op.Finding; f != nil {
		// What the provider said last, as every operator sees it.
		text := findingLine(*f) + " — " + fmtTime(f.At)
		if f.By != "" {
			text += ", " + f.By
		}
		if f.Stale {
			text = "stale (an attempt that may have reached the provider came after it; check again): " + text
		}
		row("finding", text)
	} else if op.Provider != "" {
		row("finding", "not checked")
	}
	if b := op.BindingFinding; b != nil {
		// The lookup a decision is checked against when it is not the
		// last one said above (the console's "has it (earlier)").
		text := findingLine(*b) + " — " + fmtTime(b.At)
		if b.By != "" {
			text += ", " + b.By
		}
		if b.Earlier {
			text = fmt.Sprintf("earlier lookup #%d: %s; a decision is checked against it, not the last", b.Seq, text)
		} else {
			text += "; it binds all the same (a retry cannot take a delivery back)"
		}
		row("binding", text)
	}
	row("receipt", string(op.Receipt))
	if d.Supersedes != nil {
		row("supersedes", fmt.Sprintf("%s (%s)", d.Supersedes.Key, d.Supersedes.State))
	}
	if d.SupersededBy != nil {
		row("superseded by", fmt.Sprintf("%s (%s)", d.SupersededBy.Key, d.SupersededBy.State))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nattempts (%d)\n", len(d.Attempts))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tTIME\tOUTCOME\tTRACE\tWORKER\tDURATION\tREF\tERROR")
	for _, a := range d.Attempts {
		outcome, errText := string(a.Outcome), a.Error
		if a.Outcome == model.OutcomeLookup {
			// A lookup's finding, and the provider's words (why it cannot
			// tell), in the columns a call's outcome and error take.
			outcome += ": " + a.Finding.Words()
			errText = oneLine(a.Detail)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Seq, fmtTime(a.StartedAt), show(outcome), show(dash(a.TraceID)),
			show(dash(a.WorkerID)), a.Duration.Round(time.Microsecond), show(dash(a.ProviderRef)), show(errText))
	}
	tw.Flush()
	fmt.Fprintf(w, "\ndecisions (%d)\n", len(d.Decisions))
	for _, dc := range d.Decisions {
		fmt.Fprintf(w, "  %s  %s  %s: %s → %s (from version %d)\n    reason: %s\n", fmtTime(dc.At), show(dc.Operator),
			show(string(dc.Action)), show(string(dc.FromState)), show(string(dc.ToState)), dc.FromVersion, show(dc.Reason))
		if dc.Evidence != "" {
			fmt.Fprintf(w, "    evidence: %s\n", show(dc.Evidence))
		}
		if dc.NewKey != "" {
			fmt.Fprintf(w, "    new key: %s\n", show(dc.NewKey))
		}
	}
}

// claimKeysWords is whether the provider honoured downstream keys as the
// claim recorded it (in the config of the process that made it): with
// this process's config, what decides whether the claim is ever sent
// again under its key. "" before any claim.
func claimKeysWords(op model.Operation) string {
	switch {
	case op.ClaimHonoursKeys != nil && *op.ClaimHonoursKeys:
		return "yes (recorded at claim)"
	case op.ClaimHonoursKeys != nil:
		return "no (recorded at claim)"
	case op.ClaimNo > 0:
		return "not recorded (claimed before schema 12)"
	}
	return ""
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05.000 MST")
}

// decisionFlags are the flags every operator decision takes.
type decisionFlags struct {
	keyFlags
	reason, evidence, operator string
	expect                     int64
}

func (f *decisionFlags) register(fs interface {
	StringVar(*string, string, string, string)
	Int64Var(*int64, string, int64, string)
}) {
	f.keyFlags.register(fs)
	fs.StringVar(&f.reason, "reason", "", "why (required; kept in the decision row)")
	fs.StringVar(&f.evidence, "evidence", "", "evidence: a provider reference, a ticket, a log line")
	fs.StringVar(&f.operator, "operator", defaultOperator(), "who decides (default $USER)")
	fs.Int64Var(&f.expect, "expect-version", 0, "fail unless the operation is still at this version (from ops show)")
}

func (f *decisionFlags) decision() reconcile.Decision {
	return reconcile.Decision{Tenant: f.tenant, Key: f.key, Operator: f.operator, Reason: f.reason,
		Evidence: f.evidence, ExpectVersion: f.expect}
}

// keyList is a repeatable --key: KEY, or KEY@VERSION to pin the version
// the decision expects.
type keyList []string

func (k *keyList) String() string     { return strings.Join(*k, ",") }
func (k *keyList) Set(v string) error { *k = append(*k, v); return nil }

// keyAt is how a --key value may be read: the key whole, and — when it
// ends in @<digits> — the key before it at that version (pinned). A
// suffix that is not @<digits> is part of the key (call accepts @ in
// keys: mail@x.com).
type keyAt struct {
	whole      reconcile.Target
	pinned     reconcile.Target
	canPin     bool
	wholeValid bool
}

func parseKeyAt(tenant, v string) (keyAt, error) {
	k := keyAt{whole: reconcile.Target{Tenant: tenant, Key: v}}
	k.wholeValid = model.ValidateIdentity(tenant, v) == nil
	if i := strings.LastIndex(v, "@"); i > 0 && allDigits(v[i+1:]) {
		if n, err := strconv.ParseInt(v[i+1:], 10, 64); err == nil && n >= 1 && model.ValidateIdentity(tenant, v[:i]) == nil {
			k.pinned, k.canPin = reconcile.Target{Tenant: tenant, Key: v[:i], ExpectVersion: n}, true
		}
	}
	if !k.canPin {
		return k, model.ValidateIdentity(tenant, v)
	}
	return k, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// pick reads k against the ledger: the reading that names an operation;
// refused as ambiguous when both do (--expect-version names a key whole);
// the pinned reading when neither does (its "not found" says the key).
func (k keyAt) pick(ctx context.Context, st interface {
	Get(ctx context.Context, tenant, key string) (*model.Operation, error)
}) (reconcile.Target, error) {
	if !k.canPin {
		return k.whole, nil
	}
	if !k.wholeValid {
		return k.pinned, nil
	}
	exists := func(key string) (bool, error) {
		_, err := st.Get(ctx, k.whole.Tenant, key)
		if model.IsCode(err, model.CodeNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	w, err := exists(k.whole.Key)
	if err != nil {
		return k.whole, err
	}
	p, err := exists(k.pinned.Key)
	if err != nil {
		return k.whole, err
	}
	switch {
	case w && p:
		return k.whole, model.Errorf(model.CodeInvalid, "--key %s is ambiguous: operation %s exists, and so does %s (read as its version %d) — for the first give --key %s --expect-version V (several keys: %s@V), for the second --key %s --expect-version %d; nothing was written",
			show(textsafe.ShellWord(k.whole.Key)), show(textsafe.ShellWord(k.whole.Key)), show(textsafe.ShellWord(k.pinned.Key)), k.pinned.ExpectVersion,
			show(textsafe.ShellWord(k.whole.Key)), show(textsafe.ShellWord(k.whole.Key)), show(textsafe.ShellWord(k.pinned.Key)), k.pinned.ExpectVersion)
	case w:
		return k.whole, nil
	}
	return k.pinned, nil
}

func opsResolve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("ops resolve", stderr)
	db := fs.String("db", defaultDB(), dbUsage)
	tenant := fs.String("tenant", "", "tenant (required with --key)")
	var keys keyList
	fs.Var(&keys, "key", "operation key; repeat for several; KEY@VERSION pins the version you saw")
	state := fs.String("state", "", "filter: every operation in this state (with --tenant, --tool, --search)")
	tool := fs.String("tool", "", "filter: only this tool")
	search := fs.String("search", "", "filter: key, subject or trace id contains TEXT")
	finding := fs.String("finding", "", "filter: the latest provider finding is this (has-it, has-nothing, cannot-tell, has-other, not-checked); has-it with --as applied, or has-nothing with --as not-applied, without --evidence: each is decided on its own finding, as the console's review does")
	reason := fs.String("reason", "", "why (required; kept in every decision row)")
	evidence := fs.String("evidence", "", "evidence: a provider reference, a ticket, a log line")
	operator := fs.String("operator", defaultOperator(), "who decides (default $USER)")
	expect := fs.Int64("expect-version", 0, "one key: fail unless the operation is still at this version (from ops show)")
	as := fs.String("as", "", "applied or not-applied (required)")
	dryRun := fs.Bool("dry-run", false, "several operations: list each from → to and write nothing")
	yes := fs.Bool("yes", false, "several operations: write them (after a --dry-run)")
	asJSON := fs.Bool("json", false, "one key: the operation after the decision; several: one JSON object per operation and result")
	check := fs.Bool("check", false, "one key: ask the provider first and record its finding; it is the evidence, or must be overridden")
	against := againstFlagVar(fs, "bare or =DIGEST — with --check, with --as not-applied, or several operations: decide against the provider's \"has it\" findings that ops show, ops check or --dry-run printed with this digest (the second confirmation); refused, nothing written, if these operations have others now (another operator's check recorded one since) or this run's own check finds one; bare (no digest): only against a \"has nothing\" (--as applied)")
	pdb := fs.String("provider-db", "", "with --check, or --as not-applied (its provider is asked first): the sandbox provider file the calls used (default beside the ledger)")
	withinGrace := fs.Bool("within-grace", false, withinGraceUsage)
	cfgPath := configFlag(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	cfg, code, ok := loadConfig(*cfgPath, stderr)
	if !ok {
		return code
	}
	var action model.Action
	switch *as {
	case "applied":
		action = model.ActionMarkApplied
	case "not-applied", "not_applied":
		action = model.ActionMarkNotApplied
	case "":
		return fail(stderr, model.Errorf(model.CodeInvalid, "--as is required: applied or not-applied"))
	default:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--as must be applied or not-applied"))
	}
	filter := *state != "" || *tool != "" || *search != "" || *finding != ""
	ff, err := model.ParseFindingFilter(*finding)
	if err != nil {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--finding: %v", err))
	}
	// By finding: each operation's own fresh finding is its evidence (the
	// provider's reference for "applied"; an authoritative "has nothing"
	// for "not applied"), and only what that finding supports is decided.
	byFinding := strings.TrimSpace(*evidence) == "" &&
		((ff == model.FilterHasIt && action == model.ActionMarkApplied) || (ff == model.FilterHasNothing && action == model.ActionMarkNotApplied))
	switch {
	case len(keys) == 0 && !filter:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--tenant and --key are required (or a filter: --state, --tool, --search, --finding)"))
	case len(keys) > 0 && filter:
		return fail(stderr, model.Errorf(model.CodeInvalid, "give --key or a filter (--state, --tool, --search, --finding), not both"))
	case len(keys) > 0 && *tenant == "":
		return fail(stderr, model.Errorf(model.CodeInvalid, "--tenant and --key are required"))
	case *dryRun && *yes:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--dry-run lists, --yes writes: give one"))
	case *expect != 0 && (len(keys) != 1 || filter):
		return fail(stderr, model.Errorf(model.CodeInvalid, "--expect-version is for one key; pin several with --key KEY@VERSION"))
	case *check && len(keys) != 1:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--check is for one key (several operations deciding not applied are checked first anyway)"))
	case *check && (*dryRun || *yes):
		return fail(stderr, model.Errorf(model.CodeInvalid, "--check asks the provider and decides on its answer in one step: drop --dry-run and --yes (they are for several operations)"))
	case against.set && !*check && !*dryRun && !*yes && action != model.ActionMarkNotApplied:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--against-finding needs --check (the finding it overrides), or several operations (--dry-run / --yes)"))
	}
	// A key is read whole with --expect-version; else KEY@VERSION pins
	// the version where that reading names the operation (keyAt.pick).
	var targets []reconcile.Target
	var ats []keyAt
	pinnable := false
	for _, k := range keys {
		at, err := parseKeyAt(*tenant, k)
		if *expect != 0 {
			at, err = keyAt{whole: reconcile.Target{Tenant: *tenant, Key: k}, wholeValid: true}, model.ValidateIdentity(*tenant, k)
		}
		if err != nil {
			return fail(stderr, err)
		}
		ats = append(ats, at)
		pinnable = pinnable || at.canPin
	}
	if pinnable {
		rl, err := openLedger(context.Background(), *db, cfg, opening{store: store.Options{ReadOnly: true}})
		if err != nil {
			return fail(stderr, err)
		}
		for _, at := range ats {
			t, err := at.pick(ctx, rl.Store())
			if err != nil {
				rl.Close()
				return fail(stderr, err)
			}
			targets = append(targets, t)
		}
		rl.Close()
	} else {
		for _, at := range ats {
			targets = append(targets, at.whole)
		}
	}
	// A key given twice is a mistake (its second decision could only be
	// refused as stale after the first was written): refused whole.
	given := map[string]string{}
	for i, t := range targets {
		if first, ok := given[t.Key]; ok {
			return fail(stderr, model.Errorf(model.CodeInvalid, "--key %s is given twice (as --key %s and --key %s): give each operation once; nothing was written",
				show(textsafe.ShellWord(t.Key)), show(textsafe.ShellWord(first)), show(textsafe.ShellWord(keys[i]))))
		}
		given[t.Key] = keys[i]
	}
	q := store.ListQuery{Tenant: *tenant, Tool: *tool, Search: *search, Finding: ff, Limit: reconcile.MaxBulk + 1}
	if *state != "" {
		st, err := model.ParseState(*state)
		if err != nil {
			return fail(stderr, err)
		}
		q.State = st
	}
	if *tenant != "" && len(keys) == 0 {
		if err := model.ValidateIdentity(*tenant, "k"); err != nil {
			return fail(stderr, err)
		}
	}
	d := reconcile.Decision{Tenant: *tenant, Key: "k", Operator: *operator, Reason: *reason, Evidence: *evidence, Override: against.set,
		WithinGrace: *withinGrace}
	if len(targets) > 0 {
		d.Key = targets[0].Key
	}
	// retry is this command line with --against-finding=DIGEST, for a
	// refusal of one key's decision to offer (it names the "has it").
	retry := func(dg string) string {
		return commandAgain(fs, "ops resolve", ledgerFlags(*db, *pdb, *cfgPath), keys, " --against-finding="+dg)
	}
	checkOffer := "" // --check found a "has it": the command that confirms it
	if *check {
		// Nothing is asked (or recorded) for a command line that is wrong
		// whatever the provider says: the key, the operator, the reason,
		// evidence that is not printable text.
		if err := model.ValidateIdentity(d.Tenant, d.Key); err != nil {
			return fail(stderr, err)
		}
		for _, p := range d.Problems(action) {
			if p.Field == reconcile.FieldOperator || p.Field == reconcile.FieldReason ||
				(p.Field == reconcile.FieldEvidence && strings.TrimSpace(d.Evidence) != "") {
				return fail(stderr, model.Errorf(model.CodeInvalid, "%s", p.Message))
			}
		}
		// The same finding the console's c gives, under the same rule: a
		// lookup that found nothing is evidence for not applied; deciding
		// against a finding needs --against-finding. It is recorded as a
		// lookup attempt, as ops check and triage record theirs, so the
		// audit trail shows what was known when the decision was made.
		// "Cannot tell" is no finding and stops here (recorded too).
		l, err := openLedger(context.Background(), *db, cfg, opening{providerDB: *pdb, use: ledger.LookupsOnly})
		if err != nil {
			return fail(stderr, err)
		}
		var prior *model.Finding
		if det, err := l.Store().Detail(ctx, d.Tenant, d.Key); err == nil {
			prior = det.Operation.Finding
			// --against-finding=DIGEST names the "has it" findings it
			// confirms: checked before anything is asked or written.
			if err := confirm(against, action, []model.Operation{det.Operation}, retry, l.Store().Now()); err != nil {
				l.Close()
				return fail(stderr, err)
			}
			// Within the grace the write is refused: nothing is asked.
			if err := graceFirst(l, action, d, det); err != nil {
				l.Close()
				return fail(stderr, err)
			}
		}
		op, looked, err := l.Service().CheckAndRecord(ctx, d.Tenant, d.Key, "ops resolve --check by "+*operator)
		if err == nil && d.Override {
			// The lookups this run saw: another recorded before the write
			// refuses it (Decision.SeenLookup).
			d.SeenLookup = latestLookup(ctx, l, d.Tenant, d.Key)
		}
		after := againstOffer(ctx, l, d.Tenant, d.Key, retry)
		if action != model.ActionMarkApplied && strings.HasPrefix(after, ": ") {
			checkOffer = " — to decide against it all the same" + after
		}
		l.Close()
		if err != nil {
			return fail(stderr, err)
		}
		recorded := "recorded as a finding"
		if !looked.Recorded {
			recorded = "not recorded"
		}
		if looked.Finding.Kind == model.FindingHasOther {
			// An answer, about another request under the key: said as it
			// is, not as a failed lookup.
			return fail(stderr, model.Wrap(model.CodeUnavailable, looked.Err, "%s (%s; nothing was decided)", looked.Err.Error(), recorded))
		}
		if looked.Err != nil {
			why := looked.Err.Error()
			if !strings.Contains(why, "cannot tell") {
				why = "cannot tell: " + why
			}
			return fail(stderr, model.Wrap(model.CodeUnavailable, looked.Err, "provider %s lookup failed: %s (%s; nothing was decided)%s", op.Provider, why, recorded, askedElsewhereAdvice(looked.Err, *db, *pdb, *cfgPath, op.Tenant, op.Key)))
		}
		ev := looked.Evidence
		d.Finding = &ev
		if looked.ReplacedKey != "" {
			recorded = "asked about the key it replaced, " + show(looked.ReplacedKey) + "; " + recorded + " there"
		}
		fmt.Fprintf(stderr, "provider check: %s (%s)\n", show(ev.Detail), recorded)
		if action == model.ActionMarkNotApplied && ev.Found && d.Override && !seenHasIt(prior, ev.Ref, looked.Finding.Detail) {
			// As without --check: --against-finding confirms a "has it"
			// the operator could have seen, not the one just found.
			what := model.FindingHasIt.Words()
			if ev.Ref != "" {
				what += " · " + ev.Ref
			}
			return fail(stderr, model.Errorf(model.CodeInvalid, "this run's provider check found the effect (%s), which --against-finding could not have confirmed: nothing was written; if you still %s against it%s", show(what), action.Verb(), after))
		}
		if action == model.ActionMarkApplied && ev.Found && strings.TrimSpace(d.Evidence) == "" {
			d.Evidence = reconcile.RefEvidence(ev.Ref)
		}
	}
	ps := d.Problems(action)
	if byFinding {
		// Each operation's evidence is its finding, checked per operation.
		kept := ps[:0]
		for _, p := range ps {
			if p.Field != reconcile.FieldEvidence {
				kept = append(kept, p)
			}
		}
		ps = kept
	}
	if len(ps) > 0 {
		msg := ps[0].Message
		if ps[0].Field == reconcile.FieldFinding {
			msg += " (--against-finding)" + checkOffer
		}
		if err := model.ValidateIdentity(d.Tenant, d.Key); err != nil && (d.Tenant != "" || len(keys) > 0) {
			return fail(stderr, err)
		}
		if ps[0].Field == reconcile.FieldEvidence && action == model.ActionMarkNotApplied && len(targets) == 1 && !filter && !*check {
			msg += checkHint(ctx, *db, cfg, targets[0])
		}
		return fail(stderr, model.Errorf(model.CodeInvalid, "%s", msg))
	}
	// A filter may span every tenant (--tenant is optional there, as in
	// the console); keys and a given tenant were checked above.
	if d.Tenant != "" {
		if err := model.ValidateIdentity(d.Tenant, d.Key); err != nil {
			return fail(stderr, err)
		}
	}
	single := len(targets) == 1 && !*dryRun && !*yes
	if !single && !*dryRun && !*yes {
		return fail(stderr, model.Errorf(model.CodeInvalid, "several operations: run with --dry-run to list each from → to, then with --yes to write them"))
	}
	// "Not applied" asks the provider first — one key as several, as the
	// console's review does (reconcile.LookFirst): the findings are
	// recorded (also on --dry-run: a lookup, not a decision), so an
	// operation whose provider has the effect is refused, unless
	// --against-finding; one the provider cannot tell about is decided on
	// the typed evidence. --check asked already.
	lookFirst := action == model.ActionMarkNotApplied && !*check
	var l *ledger.Ledger
	if lookFirst {
		l, err = openLedger(context.Background(), *db, cfg, opening{providerDB: *pdb, use: ledger.LookupsOnly})
	} else {
		l, err = openLedger(context.Background(), *db, cfg, opening{store: store.Options{ReadOnly: *dryRun}})
	}
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	if single {
		d.Key, d.ExpectVersion = targets[0].Key, targets[0].ExpectVersion
		if *expect != 0 {
			d.ExpectVersion = *expect
		}
		if det, err := l.Store().Detail(ctx, d.Tenant, d.Key); err == nil {
			// Within the grace the write is refused: nothing is asked.
			if err := graceFirst(l, action, d, det); err != nil {
				return fail(stderr, err)
			}
		}
		if lookFirst {
			seen, err := lookFirstOne(ctx, l, action, d, "ops resolve by "+*operator, stderr, against, retry)
			if err != nil {
				return fail(stderr, err)
			}
			d.SeenLookup = seen
		}
		var op *model.Operation
		if action == model.ActionMarkApplied {
			op, err = l.Service().MarkApplied(ctx, d)
		} else {
			op, err = l.Service().MarkNotApplied(ctx, d)
		}
		if err != nil {
			return fail(stderr, offerOnRefusal(ctx, l, err, action, d, retry, func() string {
				// The "has nothing" has no digest: ops show shows it, and
				// --check asks the provider again before the override.
				return fmt.Sprintf("the evidence: retrysafe ops show%s --tenant %s --key %s; to decide against it all the same: %s",
					ledgerFlags(*db, *pdb, *cfgPath), textsafe.ShellWord(d.Tenant), textsafe.ShellWord(d.Key),
					commandAgain(fs, "ops resolve", ledgerFlags(*db, *pdb, *cfgPath), keys, " --check --against-finding", "check"))
			}))
		}
		from := "?"
		if det, err := l.Store().Detail(ctx, op.Tenant, op.Key); err == nil && len(det.Decisions) > 0 {
			from = string(det.Decisions[len(det.Decisions)-1].FromState)
			op = shownAs(op, det)
		}
		line := fmt.Sprintf("%s/%s: %s → %s (version %d), decided by %s\n", show(op.Tenant), show(op.Key), from, op.State, op.Version, show(d.Operator))
		if *asJSON {
			// The operation as ops list --json and ops show --json give it.
			fmt.Fprint(stderr, line)
			fmt.Fprintln(stdout, jsonLine(viewOf(*op, l.Store().Now())))
			return exitOK
		}
		fmt.Fprint(stdout, line)
		return exitOK
	}
	// Several: read what each is now (the versions the decision expects).
	var ops []model.Operation
	var pinnedOnly map[int]bool // pinned at a version it is no longer at
	if filter {
		if ops, err = l.Store().List(ctx, q); err != nil {
			return fail(stderr, err)
		}
		if len(ops) == 0 {
			return fail(stderr, model.Errorf(model.CodeNotFound, "no operations match the filter"))
		}
		if len(ops) > reconcile.MaxBulk {
			return fail(stderr, model.Errorf(model.CodeInvalid, "more than %d operations match: narrow the filter (--tenant, --tool, --search)", reconcile.MaxBulk))
		}
	} else {
		for i, t := range targets {
			// Detail, not Get: the operation with its latest finding, as a
			// filter lists it (the rule and LookFirst read it).
			det, err := l.Store().Detail(ctx, t.Tenant, t.Key)
			if err != nil {
				return fail(stderr, err)
			}
			op := &det.Operation
			if t.ExpectVersion != 0 && op.Version != t.ExpectVersion {
				// Listed as it is now; the write will refuse it as stale.
				// What it was at the pinned version is not known: the
				// target expects that version only, no state.
				op.Version = t.ExpectVersion
				if pinnedOnly == nil {
					pinnedOnly = map[int]bool{}
				}
				pinnedOnly[i] = true
			}
			ops = append(ops, *op)
		}
	}
	if *yes {
		// --against-finding=DIGEST names the "has it" findings the
		// operator confirmed (their --dry-run printed it): other ones now
		// — another operator's check recorded one since — refuse the run
		// whole, before anything is asked or written. Bare, it confirms
		// none.
		if err := confirm(against, action, ops, nil, l.Store().Now()); err != nil {
			return fail(stderr, err)
		}
	}
	// A row within the grace after its latest request is skipped, said
	// why (the write would refuse it): its provider is not asked, and
	// --yes writes nothing for it (--within-grace overrides it).
	graceErrs := make([]error, len(ops))
	if !d.WithinGrace && action != model.ActionMarkApplied {
		for i, op := range ops {
			if det, err := l.Store().Detail(ctx, op.Tenant, op.Key); err == nil && det.Operation.ID == op.ID {
				graceErrs[i] = graceFirst(l, action, d, det)
			}
		}
	}
	// asked: the finding this run's look-first recorded on a row ("" for
	// a row it did not ask about) — shown with its result.
	asked := make([]*model.Finding, len(ops))
	knew := make([]bool, len(ops))
	priorF := make([]*model.Finding, len(ops))
	if lookFirst {
		before := make([]int, len(ops))
		for i, op := range ops {
			before[i] = -1
			if op.Finding != nil {
				before[i] = op.Finding.Seq
			}
			// A "has it" that bound the row before this run was there to
			// be seen (--dry-run, ops show) — a stale one only if this run
			// finds the same reference (seenHasIt, below).
			knew[i], _ = reconcile.AgainstFinding(action, op)
			priorF[i] = op.Finding
		}
		var look []model.Operation
		var lookAt []int
		for i, op := range ops {
			if graceErrs[i] == nil {
				look, lookAt = append(look, op), append(lookAt, i)
			}
		}
		looked, err := l.Service().LookFirst(ctx, action, look, "ops resolve by "+*operator)
		if err != nil {
			return fail(stderr, err)
		}
		for j, op := range looked {
			ops[lookAt[j]] = op
		}
		for i, op := range ops {
			if op.Finding != nil && op.Finding.Seq != before[i] {
				asked[i] = op.Finding
			}
		}
	}
	targets = targets[:0]
	for i, op := range ops {
		t := reconcile.TargetOf(op)
		if pinnedOnly[i] {
			t.ExpectState = ""
		}
		targets = append(targets, t)
	}
	var left []string
	if byFinding {
		targets, left = targetsByFinding(l.Service(), action, ops)
	}
	if *dryRun {
		refs := make([]string, len(ops))
		for i, op := range ops {
			refs[i] = receiptRef(ctx, l.Store(), op)
		}
		// The digest of the "has it" findings shown, and the --yes that
		// decides against exactly them, when one of them is in the way.
		hs, dg, line := hasIts(ops), "", ""
		for _, op := range ops {
			if is, _ := reconcile.AgainstFinding(action, op); is && action != model.ActionMarkApplied && reconcile.AllowedAt(op, action, l.Store().Now()) {
				dg = digestOf(hs)
				line = offer(hs, commandAgain(fs, "ops resolve", ledgerFlags(*db, *pdb, *cfgPath), keys, " --yes --against-finding="+dg, "dry-run", "yes"))
				break
			}
		}
		override := against.set && confirm(against, action, ops, nil, l.Store().Now()) == nil
		// The provider lookups this run recorded (look-first): a dry run
		// writes no decision, but each finding is recorded.
		recorded := 0
		for _, f := range asked {
			if f != nil {
				recorded++
			}
		}
		return printBulkPlan(stdout, action, ops, targets, left, refs, graceErrs, override, *asJSON, dg, line, recorded, l.Store().Now())
	}
	if against.set {
		// The lookups this run saw: one recorded before a row's write
		// refuses that row (Target.Seen).
		reconcile.SeeLookups(targets, ops)
	}
	notes := make([]bulkNote, len(ops))
	for i, op := range ops {
		if asked[i] != nil {
			notes[i].Finding = asked[i]
			if is, text := reconcile.AgainstFinding(action, op); is {
				notes[i].Against = text
			}
		}
	}
	// Only what the findings support is written (by finding), and
	// --against-finding confirms only the findings the operator could
	// have seen: a "has it" this very run's look-first found is refused
	// on its row, named — never written on a confirmation given before
	// anyone saw it. The rest is each its own refusal, in the list's
	// order.
	out := make([]reconcile.Outcome, len(ops))
	var proposed []reconcile.Target
	var at []int
	for i, op := range ops {
		unseen := against.set && asked[i] != nil && asked[i].Kind == model.FindingHasIt && notes[i].Against != "" &&
			!(knew[i] && (priorF[i] == nil || priorF[i].Kind != model.FindingHasIt || seenHasIt(priorF[i], asked[i].Ref, asked[i].Detail))) &&
			reconcile.AllowedAt(op, action, l.Store().Now())
		switch {
		case graceErrs[i] != nil:
			out[i] = reconcile.Outcome{Target: targets[i], Verdict: reconcile.VerdictSkipped, State: op.State, Version: op.Version, Err: graceErrs[i]}
		case left != nil && left[i] != "":
			v := reconcile.VerdictIllegal
			if op.Finding != nil && op.Finding.Stale {
				v = reconcile.VerdictStale
			}
			out[i] = reconcile.Outcome{Target: targets[i], Verdict: v, State: op.State, Version: op.Version,
				Err: model.Errorf(model.CodeIllegal, "%s/%s: not decided on its finding: %s — nothing was written", op.Tenant, op.Key, left[i])}
		case unseen:
			out[i] = reconcile.Outcome{Target: targets[i], Verdict: reconcile.VerdictIllegal, State: op.State, Version: op.Version,
				Err: model.Errorf(model.CodeIllegal, "%s/%s: this run's provider check found the effect — --against-finding confirms only a finding you could have seen, and nobody had seen this one; nothing was written: review it (--dry-run prints it and the digest to confirm it with), then run again with --against-finding=DIGEST to decide against it",
					op.Tenant, op.Key)}
		default:
			proposed, at = append(proposed, targets[i]), append(at, i)
		}
	}
	if len(proposed) > 0 {
		done, err := l.Service().DecideMany(ctx, action, d, proposed)
		if err != nil {
			return fail(stderr, err)
		}
		for j, o := range done {
			out[at[j]] = o
		}
	}
	return printBulkResult(stdout, stderr, action, out, notes, *asJSON)
}

// receiptRef is the reference a bulk "mark applied" would give op's
// receipt (reconcile.DecideMany): the reference of the "has it" that
// binds it — for a held new key, the key's it replaced — or "".
func receiptRef(ctx context.Context, st store.Ledger, op model.Operation) string {
	f := op.Binding()
	if op.State == model.StateAuthorized && op.SupersedesID != 0 {
		f = nil
		if det, err := st.DetailByID(ctx, op.SupersedesID); err == nil {
			f = det.Operation.Binding()
		}
	}
	if f != nil && f.Kind == model.FindingHasIt {
		return f.Ref
	}
	return ""
}

// bulkNote is what a bulk result shows of a row's provider check made by
// this run: its finding, and the one a decision on it goes against.
type bulkNote struct {
	Finding *model.Finding
	Against string
}

// lookFirstOne is reconcile.LookFirst for one key's "not applied" or new
// key (ops supersede): --against-finding=DIGEST is checked first against
// the operation as read (confirm), then the provider is asked when the
// operation needs it (Service.NeedsLook), the finding is recorded and said
// on stderr; the decision that follows is bound by it (refused against a
// "has it" unless d.Override). seen is the number of the latest lookup
// this run saw, for Decision.SeenLookup (with --against-finding).
func lookFirstOne(ctx context.Context, l *ledger.Ledger, action model.Action, d reconcile.Decision, by string, stderr io.Writer, a *againstFlag, retry func(string) string) (seen *int, err error) {
	det, err := l.Store().Detail(ctx, d.Tenant, d.Key)
	if err != nil {
		return nil, err
	}
	if err := confirm(a, action, []model.Operation{det.Operation}, retry, l.Store().Now()); err != nil {
		return nil, err
	}
	if d.Override {
		seen = lookupSeq(det)
	}
	if !l.Service().NeedsLook(action, det.Operation) {
		return seen, nil
	}
	prior := det.Operation.Finding
	ops, err := l.Service().LookFirst(ctx, action, []model.Operation{det.Operation}, by)
	if err != nil {
		return nil, err
	}
	f := ops[0].Finding
	if f == nil {
		return seen, nil
	}
	if d.Override {
		seen = latestLookup(ctx, l, d.Tenant, d.Key)
	}
	what := f.Kind.Words()
	if f.Kind == model.FindingHasIt && f.Ref != "" {
		what += " · " + f.Ref
	}
	then := ""
	switch f.Kind {
	case model.FindingCannotTell:
		then = "; decided on the evidence you typed"
		if action == model.ActionAuthorizeKey {
			then = "; the new key is authorized on your reason alone: if the provider has it, its first call makes it again"
		}
	case model.FindingHasIt:
		if !d.Override {
			then = "; not applied goes against it"
			if action == model.ActionAuthorizeKey {
				then = "; a new key would make it a second time"
			}
		}
	}
	// A "cannot tell" finding's detail says so itself: once is enough.
	detail, _ := strings.CutPrefix(f.Detail, what+": ")
	fmt.Fprintf(stderr, "provider check: %s: %s (recorded as a finding%s)\n", show(what), show(detail), then)
	if f.Kind == model.FindingHasIt && d.Override && !seenHasIt(prior, f.Ref, f.Detail) {
		return nil, model.Errorf(model.CodeInvalid, "this run's provider check found the effect (%s), which --against-finding could not have confirmed: nothing was written; if you still %s against it%s",
			what, action.Verb(), againstOffer(ctx, l, d.Tenant, d.Key, retry))
	}
	return seen, nil
}

// lookupSeq is the number of det's operation's latest lookup (0: none),
// by the rule the write's Decision.SeenLookup compares with.
func lookupSeq(det *model.Detail) *int {
	seq := 0
	if f := model.LatestFinding(det.Operation.Provider, det.Attempts); f != nil {
		seq = f.Seq
	}
	return &seq
}

// latestLookup is lookupSeq of tenant/key as read now; nil if it cannot
// be read (the write then compares nothing more).
func latestLookup(ctx context.Context, l *ledger.Ledger, tenant, key string) *int {
	det, err := l.Store().Detail(ctx, tenant, key)
	if err != nil {
		return nil
	}
	return lookupSeq(det)
}

// againstOffer ends a refusal of a "has it" this run has just shown: the
// command that decides against it, with its digest (the refusal names
// it: it has been seen now) — ": retrysafe … --against-finding=D" — or
// ", run the same command again" when it cannot be read.
func againstOffer(ctx context.Context, l *ledger.Ledger, tenant, key string, retry func(string) string) string {
	det, err := l.Store().Detail(ctx, tenant, key)
	if err != nil {
		return ", look at it (ops show prints it and its digest) and run the command again with --against-finding=DIGEST"
	}
	dg := digestOf(hasIts([]model.Operation{det.Operation}))
	if dg == "" {
		return ", run the same command again"
	}
	return ": " + retry(dg)
}

// offerOnRefusal is err — the write's refusal of a decision against a
// "has it" without --against-finding — with the command that confirms
// it, by its digest: the refusal named it. A "mark applied" refused
// against a "has nothing" (which has no digest: it is confirmed with
// --check --against-finding) gets applied's words instead: the command
// that shows the evidence, and the one that decides against it.
func offerOnRefusal(ctx context.Context, l *ledger.Ledger, err error, action model.Action, d reconcile.Decision, retry func(string) string, applied func() string) error {
	if d.Override || (action == model.ActionMarkApplied && applied == nil) || !model.IsCode(err, model.CodeIllegal) || errors.Is(err, reconcile.ErrWithinGrace) {
		return err
	}
	det, derr := l.Store().Detail(ctx, d.Tenant, d.Key)
	if derr != nil {
		return err
	}
	if is, _ := reconcile.AgainstFinding(action, det.Operation); !is || !reconcile.AllowedAt(det.Operation, action, l.Store().Now()) {
		return err
	}
	if action == model.ActionMarkApplied {
		return model.Errorf(model.CodeIllegal, "%s — %s", strings.TrimSpace(err.Error()), applied())
	}
	dg := digestOf(hasIts([]model.Operation{det.Operation}))
	if dg == "" {
		return err
	}
	return model.Errorf(model.CodeIllegal, "%s — to decide against it all the same: %s", strings.TrimSpace(err.Error()), retry(dg))
}

// seenHasIt reports whether a "has it" (its reference and the provider's
// words), just found by this run's own check, is one the operator could
// have seen before the run (prior: the operation's finding then), so that
// --against-finding confirms it: a fresh "has it", or a stale one (an
// attempt that may have reached the provider came after it) the provider
// describes in the same words now — whatever that attempt did, the
// provider reports nothing the operator was not shown. A stale one it
// now describes otherwise — "2 deliveries under this key" where it said
// 1 — is news nobody was shown.
func seenHasIt(prior *model.Finding, ref, detail string) bool {
	if prior == nil || prior.Kind != model.FindingHasIt {
		return false
	}
	return !prior.Stale || (prior.Ref == ref && prior.Detail == detail)
}

// targetsByFinding is a bulk decision by finding, as the console's review
// sorts it (reconcile.ReviewByFinding): the target of each operation —
// with its own finding and evidence where its finding supports action —
// and, for the others, why nothing is proposed ("" where it is).
func targetsByFinding(svc *reconcile.Service, action model.Action, ops []model.Operation) ([]reconcile.Target, []string) {
	r := svc.ReviewByFinding(ops)
	prop := r.Apply
	if action == model.ActionMarkNotApplied {
		prop = r.NotApplied
	}
	byKey := map[[2]string]reconcile.Target{}
	for _, t := range prop {
		byKey[[2]string{t.Tenant, t.Key}] = t
	}
	targets, left := make([]reconcile.Target, len(ops)), make([]string, len(ops))
	for i, op := range ops {
		if t, ok := byKey[[2]string{op.Tenant, op.Key}]; ok {
			targets[i] = t
			continue
		}
		targets[i] = reconcile.TargetOf(op)
		f := op.Finding
		switch {
		case op.State != model.StateUnknown && !reconcile.Unheld(op, svc.Store.Now()):
			left[i] = fmt.Sprintf("it is %s, and only an unknown operation (or an in_progress one nobody holds) is decided on its finding", op.State)
		case f == nil:
			left[i] = "not checked (run triage or ops check first)"
		case f.Stale:
			left[i] = fmt.Sprintf("its finding (%s) is stale: an attempt that may have reached the provider came after it; check it again", f.Kind.Words())
		case f.Kind == model.FindingCannotTell:
			left[i] = "the provider could not tell"
		case f.Kind == model.FindingHasNothing && action == model.ActionMarkNotApplied && svc.NeedsLook(action, op):
			left[i] = "its \"has nothing\" was recorded by another process and could not be asked again here (the ledger may be a restored backup or a copy): check it again"
		case f.Kind == model.FindingHasNothing && !svc.LookupAuthoritative(op.Provider):
			left[i] = fmt.Sprintf("provider %s's lookup is not declared authoritative (authoritative_lookup): decide it one by one", op.Provider)
		default:
			left[i] = fmt.Sprintf("its finding (%s) does not support %s", f.Kind.Words(), action.Verb())
		}
	}
	return targets, left
}

// printBulkPlan lists what --yes would write: each operation's from → to,
// or why it would be refused. targets (with their own evidence) and left
// (why nothing is proposed) are set for a decision by finding; refs are
// the references the receipts of a "mark applied" would name (receiptRef).
//
// dg is the digest of the "has it" findings listed and offerLine the
// command that decides against them (--against-finding=dg), when one of
// them is in the way ("" otherwise).
func printBulkPlan(stdout io.Writer, action model.Action, ops []model.Operation, targets []reconcile.Target, left, refs []string, graceErrs []error, override, asJSON bool, dg, offerLine string, recorded int, now time.Time) int {
	type row struct {
		Tenant  string      `json:"tenant"`
		Key     string      `json:"key"`
		From    model.State `json:"from"`
		Version int64       `json:"version"`
		To      model.State `json:"to"`
		Legal   bool        `json:"legal"`
		// Against: the recorded finding this decision would go against
		// (refused without the second confirmation).
		Against string `json:"against_finding,omitempty"`
		// Finding: the latest recorded provider finding (after the look
		// a bulk "not applied" makes first).
		Finding string `json:"finding,omitempty"`
		// By finding: this operation's own evidence, or why its finding
		// decides nothing.
		Evidence   string `json:"evidence,omitempty"`
		NotDecided string `json:"not_decided,omitempty"`
		// ReceiptRef: "applied" with typed evidence — the reference of
		// the "has it" that binds this operation, which its receipt
		// names (reconcile.DecideMany), not the evidence typed for all.
		ReceiptRef string `json:"receipt_ref,omitempty"`
		// Digest: the run's --against-finding=DIGEST, the digest of the
		// "has it" findings listed (the same on every row).
		Digest string `json:"against_finding_digest,omitempty"`
		// WithinGrace: its latest request may still be applied by the
		// provider — skipped (--within-grace overrides it): when it was
		// sent, and when one may decide (UTC).
		WithinGrace bool   `json:"within_grace,omitempty"`
		SentAt      string `json:"sent_at,omitempty"`
		DecideAfter string `json:"decide_after,omitempty"`
	}
	rows := make([]row, 0, len(ops))
	cannotWhy := make([]string, 0, len(ops)) // a "cannot tell" row's reason, for the text
	legal, blind, blindWhy := 0, 0, ""
	// Why the others would be refused: a count per reason, in the order
	// the reasons first appear.
	var reasons []string
	refused := map[string]int{}
	heldWhy := make([]string, len(ops)) // a live lease's refusal (with its end), or another request's
	for i, op := range ops {
		ok := reconcile.AllowedAt(op, action, now)
		against, why := "", fmt.Sprintf("cannot %s from %s", action.Verb(), op.State)
		if op.State == model.StateInProgress && !ok {
			// Its lease is live: a worker may be sending it (R6 D3).
			why = fmt.Sprintf("cannot %s from in_progress while a worker holds its claim", action.Verb())
			heldWhy[i] = fmt.Sprintf("%s (lease until %s UTC)", why, op.LeaseUntil.UTC().Format(time.RFC3339))
		}
		if ok && reconcile.OtherRequestRefuses(action, op) {
			// Neither mark, override or not: the write would refuse it.
			ok = false
			why = "the provider holds another request under its key: neither mark; authorize a new key (ops supersede)"
			heldWhy[i] = why
		}
		if is, text := reconcile.AgainstFinding(action, op); ok && is {
			against = text
			ok = override
			why = "the provider check found nothing (--against-finding)"
			if ev := reconcile.EvidenceOf(op.Binding()); ev != nil && ev.Found {
				why = "the provider check found the effect (--against-finding)"
			}
		}
		r := row{Tenant: op.Tenant, Key: op.Key, From: op.State, Version: op.Version, To: action.Target(), Against: against, Digest: dg}
		if op.Finding != nil {
			r.Finding = op.Finding.Kind.Words()
		}
		if left == nil && action == model.ActionMarkApplied {
			// A held new key's is the replaced key's (receiptRef).
			r.ReceiptRef = refs[i]
		}
		if left != nil {
			r.Evidence, r.NotDecided = targets[i].Evidence, left[i]
			if r.NotDecided != "" {
				ok, why = false, "not decided: "+r.NotDecided
			} else if r.Evidence == "" {
				r.Evidence = reconcile.LookupEvidence(reconcile.EvidenceOf(targets[i].Finding))
			}
		}
		var gr *reconcile.GraceRefusal
		if ok && errors.As(graceErrs[i], &gr) {
			r.WithinGrace, r.SentAt, r.DecideAfter = true, gr.Sent.UTC().Format(time.RFC3339), gr.Until.UTC().Format(time.RFC3339)
			ok, why = false, "within the grace after their latest request (--within-grace)"
		}
		r.Legal = ok
		cannot := ""
		if f := op.Finding; f != nil && f.Kind == model.FindingCannotTell && !f.Stale {
			cannot = strings.TrimPrefix(oneLine(f.Detail), "cannot tell: ")
		}
		cannotWhy = append(cannotWhy, cannot)
		if ok {
			legal++
			if cannot != "" && r.Evidence == "" {
				// Written on the typed evidence alone.
				if blind++; blindWhy == "" {
					blindWhy = cannot
				}
			}
		} else {
			if refused[why] == 0 {
				reasons = append(reasons, why)
			}
			refused[why]++
		}
		rows = append(rows, r)
	}
	if asJSON {
		return printJSON(stdout, io.Discard, rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TENANT\tKEY\tCHANGE\tNOTE")
	for i, r := range rows {
		note := ""
		switch {
		case r.WithinGrace:
			note = fmt.Sprintf("would be skipped: within the grace — sent at %s, the provider may still apply it; decide after %s (UTC) (--within-grace)", r.SentAt, r.DecideAfter)
		case r.NotDecided != "":
			note = "not decided: " + show(r.NotDecided)
		case r.Against != "" && r.Legal:
			note = "against the finding (--against-finding): " + show(r.Against)
		case r.Against != "":
			note = "would be refused: " + show(r.Against) + " (--against-finding)"
		case !r.Legal && heldWhy[i] != "":
			note = "would be refused: " + heldWhy[i]
		case !r.Legal:
			note = fmt.Sprintf("would be refused: cannot %s from %s", action.Verb(), r.From)
		case r.ReceiptRef != "":
			note = "provider finding: has it — receipt: its own reference " + show(r.ReceiptRef)
		case r.Evidence != "":
			note = "evidence: " + show(r.Evidence)
		case r.Finding != "" && cannotWhy[i] != "":
			note = "provider finding: " + show(r.Finding) + " — " + show(cannotWhy[i])
		case r.Finding != "":
			note = "provider finding: " + show(r.Finding)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s (v%d) → %s\t%s\n", show(r.Tenant), show(r.Key), r.From, r.Version, r.To, note)
	}
	tw.Flush()
	summary := fmt.Sprintf("dry run: %s %s", action.Verb(), plural(legal, "operation", "operations"))
	if n := len(ops) - legal; n > 0 {
		counts := make([]string, len(reasons))
		for i, why := range reasons {
			counts[i] = fmt.Sprintf("%d: %s", refused[why], show(why))
		}
		summary += fmt.Sprintf("; %d would be refused (%s)", n, strings.Join(counts, "; "))
	}
	if blind > 0 {
		summary += fmt.Sprintf("; %s on the typed evidence alone: the provider cannot tell (%s)",
			map[bool]string{true: "it is", false: plural(blind, "of them is", "of them are")}[blind == 1 && legal == 1], show(blindWhy))
	}
	if recorded > 0 {
		// Not "nothing written": each lookup's finding was recorded.
		summary += "; no decision written; " + plural(recorded, "provider lookup", "provider lookups") + " recorded."
	} else {
		summary += "; nothing written."
	}
	if legal > 0 {
		summary += " Run again with --yes instead of --dry-run to write them (each is refused if it changed since)."
	}
	fmt.Fprintln(stdout, summary)
	if offerLine != "" {
		fmt.Fprintln(stdout, show(offerLine))
	}
	return exitOK
}

// printBulkResult prints each operation's result; the exit code is 0 only
// if every one was written.
func printBulkResult(stdout, stderr io.Writer, action model.Action, out []reconcile.Outcome, notes []bulkNote, asJSON bool) int {
	written := 0
	for _, o := range out {
		if o.Verdict == reconcile.VerdictWritten {
			written++
		}
	}
	if asJSON {
		type row struct {
			reconcile.Outcome
			Error string `json:"error,omitempty"`
			// Against and Finding: what the provider check this run made
			// on the row found (as --dry-run names them).
			Against string `json:"against_finding,omitempty"`
			Finding string `json:"finding,omitempty"`
		}
		rows := make([]row, len(out))
		for i, o := range out {
			rows[i].Outcome = o
			if o.Err != nil {
				rows[i].Error = oneLine(o.Err.Error())
			}
			if f := notes[i].Finding; f != nil {
				rows[i].Finding, rows[i].Against = f.Kind.Words(), notes[i].Against
			}
		}
		printJSON(stdout, stderr, rows)
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TENANT\tKEY\tRESULT\tDETAIL")
		for i, o := range out {
			detail := fmt.Sprintf("%s (v%d) → %s (v%d)", o.ExpectState, o.ExpectVersion, o.State, o.Version)
			if o.Err != nil {
				detail = show(oneLine(o.Err.Error()))
			}
			if f := notes[i].Finding; f != nil {
				detail += " — provider check: " + show(oneLine(findingLine(*f)))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", show(o.Tenant), show(o.Key), o.Verdict, detail)
		}
		tw.Flush()
	}
	if written == len(out) {
		fmt.Fprintf(stderr, "%s: %s written\n", action.Verb(), plural(written, "decision", "decisions"))
		return exitOK
	}
	skipped := 0
	for _, o := range out {
		if o.Verdict == reconcile.VerdictSkipped {
			skipped++
		}
	}
	grace := ""
	if skipped > 0 {
		grace = fmt.Sprintf(" — %d skipped, within the grace after their latest request: the provider may still apply it; decide after the time on each row, or --within-grace", skipped)
	}
	fmt.Fprintf(stderr, "retrysafe: %s: %d of %d written; the others were refused and nothing was written for them (see RESULT)%s\n", action.Verb(), written, len(out), grace)
	return exitInvalid
}

// plural is "1 operation", "2 operations".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func opsSupersede(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("ops supersede", stderr)
	var f decisionFlags
	f.register(fs)
	newKey := fs.String("new-key", "", "the new key (default: derived from the old one)")
	against := againstFlagVar(fs, "bare or =DIGEST — authorize it even though the provider has the effect — the \"has it\" (or an applied operation's receipt, which only a late answer disagrees with) that ops show or ops check printed with this digest (the second confirmation: the new key makes it again); refused, nothing written, if it has another now (another operator's check recorded one since) or this run's own check finds one")
	asJSON := fs.Bool("json", false, `one line: {"operation": the superseded operation, "new_key": the authorized key}`)
	pdb := fs.String("provider-db", "", "the sandbox provider file the calls used, asked first (default beside the ledger)")
	withinGrace := fs.Bool("within-grace", false, withinGraceUsage)
	cfgPath := configFlag(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := f.validate(); err != nil {
		return fail(stderr, err)
	}
	cfg, code, ok := loadConfig(*cfgPath, stderr)
	if !ok {
		return code
	}
	d := f.decision()
	d.NewKey = *newKey
	d.Override = against.set
	d.WithinGrace = *withinGrace
	if err := d.Validate(model.ActionAuthorizeKey); err != nil {
		return fail(stderr, err)
	}
	// A new key for an operation whose provider already made the effect
	// makes it a second time: the provider is asked first, as for one
	// key's "not applied" (Service.NeedsLook), and its finding recorded —
	// the write refuses against a "has it" unless --against-finding; on
	// "cannot tell" the key is authorized on the reason given, said so.
	l, err := openLedger(context.Background(), f.db, cfg, opening{providerDB: *pdb, use: ledger.LookupsOnly})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	if d.NewKey != "" {
		// A taken new key is refused before the provider is asked (the
		// write refuses it too).
		if _, err := l.Store().Detail(ctx, d.Tenant, d.NewKey); err == nil {
			return fail(stderr, model.Errorf(model.CodeConflict, "key %q already exists in tenant %q; pick another new key", d.NewKey, d.Tenant))
		} else if !model.IsCode(err, model.CodeNotFound) {
			return fail(stderr, err)
		}
	}
	retry := func(dg string) string {
		return commandAgain(fs, "ops supersede", ledgerFlags(f.db, *pdb, *cfgPath), nil, " --against-finding="+dg)
	}
	if det, err := l.Store().Detail(ctx, d.Tenant, d.Key); err == nil {
		// Within the grace the write is refused: nothing is asked.
		if err := graceFirst(l, model.ActionAuthorizeKey, d, det); err != nil {
			return fail(stderr, err)
		}
	}
	seen, err := lookFirstOne(ctx, l, model.ActionAuthorizeKey, d, "ops supersede by "+d.Operator, stderr, against, retry)
	if err != nil {
		return fail(stderr, err)
	}
	d.SeenLookup = seen
	old, n, err := l.Service().AuthorizeNewKey(ctx, d)
	if err != nil {
		return fail(stderr, offerOnRefusal(ctx, l, err, model.ActionAuthorizeKey, d, retry, nil))
	}
	if det, err := l.Store().Detail(ctx, old.Tenant, old.Key); err == nil {
		old = shownAs(old, det)
	}
	if *asJSON {
		fmt.Fprintln(stdout, jsonLine(struct {
			Operation opView `json:"operation"` // as ops show --json gives it
			NewKey    string `json:"new_key"`
		}{viewOf(*old, l.Store().Now()), n.Key}))
	} else {
		fmt.Fprintln(stdout, show(n.Key))
	}
	fmt.Fprintf(stderr, "%s/%s superseded; the new key %q is authorized — its first call claims it\n", show(f.tenant), show(f.key), n.Key)
	return exitOK
}

// shownAs is op, just decided, as ops show --json and ops list --json
// give it — its attempt count and latest finding, which the decision's
// write does not carry — read back in det; op itself if it moved on since
// (det is then another version than the one decided).
func shownAs(op *model.Operation, det *model.Detail) *model.Operation {
	if det.Operation.ID != op.ID || det.Operation.Version != op.Version {
		return op
	}
	return &det.Operation
}

func opsCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("ops check", stderr)
	var k keyFlags
	k.register(fs)
	pdb := fs.String("provider-db", "", "sandbox provider file (default beside the ledger)")
	operator := fs.String("operator", defaultOperator(), "recorded with the finding (default $USER)")
	readOnly := fs.Bool("read-only", false, "ask and show; record nothing")
	cfgPath := configFlag(fs)
	asJSON := fs.Bool("json", false, "JSON, stable for scripts")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := k.validate(); err != nil {
		return fail(stderr, err)
	}
	if err := model.ValidateText("operator name", *operator, reconcile.MaxOperatorLen); err != nil || strings.TrimSpace(*operator) == "" {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--operator must be a printable name: findings record who asked"))
	}
	cfg, code, ok := loadConfig(*cfgPath, stderr)
	if !ok {
		return code
	}
	// A missing provider file is never created to be asked: the lookup
	// says "cannot tell" (exit 2), never "no delivery".
	l, err := openLedger(context.WithoutCancel(ctx), k.db, cfg, opening{providerDB: *pdb, store: store.Options{ReadOnly: *readOnly}, use: ledger.LookupsOnly, askReadOnly: true})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	op, looked, err := l.Service().CheckAndRecord(ctx, k.tenant, k.key, "ops check by "+*operator)
	if err != nil {
		return fail(stderr, err)
	}
	ev := looked.Evidence
	recorded := "recorded as a finding"
	if !looked.Recorded {
		recorded = "not recorded: the ledger is open read-only"
	}
	// The digest of the "has it" now recorded (this check's, or an
	// earlier one that still binds), for a decision against it to name.
	var hs []hasIt
	var now model.Operation
	if det, err := l.Store().Detail(ctx, k.tenant, k.key); err == nil && looked.Recorded {
		now = det.Operation
		hs = hasIts([]model.Operation{now})
	}
	dg := digestOf(hs)
	if *asJSON {
		c := printJSON(stdout, stderr, struct {
			Tenant   string        `json:"tenant"`
			Key      string        `json:"key"`
			State    model.State   `json:"state"`
			Version  int64         `json:"version"`
			Evidence any           `json:"evidence"`
			Finding  model.Finding `json:"finding"`
			Recorded bool          `json:"recorded"`
			// AskedKey: the key the provider was asked about, when not
			// this one (a new key, never sent: the key it replaced).
			AskedKey string `json:"asked_key,omitempty"`
			// InFlight: the provider had nothing while a claim of it was
			// live (its request may still be on its way): the finding is
			// cannot tell, never has nothing (exit 2).
			InFlight bool `json:"in_flight,omitempty"`
			// AgainstFindingDigest: --against-finding=DIGEST of a decision
			// against its recorded "has it".
			AgainstFindingDigest string `json:"against_finding_digest,omitempty"`
			// Clock: this host's clock against the ledger's, on a ledger
			// whose clock is the database server's (PostgreSQL).
			Clock *clockJSON `json:"clock,omitempty"`
		}{op.Tenant, op.Key, op.State, op.Version, ev, looked.Finding, looked.Recorded, looked.ReplacedKey, looked.InFlight, dg, clockOf(l.Store())})
		if c == exitOK && looked.Err != nil {
			return exitInvalid
		}
		return c
	}
	if looked.InFlight {
		// The provider answered, but a claim was live, or a request may
		// still be applied (the grace, whose error already says "cannot
		// tell: "): not "lookup failed", and "cannot tell" said once.
		line := fmt.Sprintf("cannot tell: %s/%s is %s, and provider %s was %v", op.Tenant, op.Key, op.State, op.Provider, looked.Err)
		if why, ok := strings.CutPrefix(oneLine(looked.Err.Error()), "cannot tell: "); ok {
			line = fmt.Sprintf("cannot tell: %s/%s is %s; provider %s: %s", op.Tenant, op.Key, op.State, op.Provider, why)
		}
		fmt.Fprintf(stderr, "retrysafe: %s (%s)\n", oneLine(line), recorded)
		clockWarning(stderr, l.Store())
		return exitInvalid
	}
	if looked.Finding.Kind == model.FindingHasOther {
		// The provider answered, about another request under the key: no
		// evidence either way (exit 2, as cannot tell), and not "lookup
		// failed". Its words say what differs and what to do.
		fmt.Fprintf(stderr, "retrysafe: %s/%s is %s; %s (%s)\n", show(op.Tenant), show(op.Key), op.State, show(oneLine(looked.Err.Error())), recorded)
		if looked.Recorded && op.State == model.StateApplied && op.Contradicted {
			fmt.Fprintln(stderr, "contradicted: the ledger records it applied, and what the provider holds under its key is another request — its receipt may report done an effect that never happened; replays still return it until a person decides (a new key sends it deliberately)")
		}
		clockWarning(stderr, l.Store())
		return exitInvalid
	}
	if looked.Err != nil {
		// Cannot tell: one line, exit 2, as before — and the finding says so.
		fmt.Fprintf(stderr, "retrysafe: %s (%s)%s\n", oneLine(fmt.Sprintf("provider %s lookup failed: %v", op.Provider, looked.Err)), recorded,
			show(askedElsewhereAdvice(looked.Err, k.db, *pdb, *cfgPath, op.Tenant, op.Key)))
		clockWarning(stderr, l.Store())
		return exitInvalid
	}
	fmt.Fprintf(stdout, "%s/%s is %s (version %d) in the ledger\n", show(op.Tenant), show(op.Key), op.State, op.Version)
	if looked.ReplacedKey != "" {
		fmt.Fprintf(stdout, "a new key is never sent before its first call: asked about the key it replaced, %s (the finding is recorded there)\n", show(looked.ReplacedKey))
	}
	fmt.Fprintf(stdout, "provider %s, downstream key %s: %s\n", show(ev.Provider), show(ev.DownstreamKey), show(ev.Detail))
	fmt.Fprintf(stdout, "finding: %s (%s)\n", show(findingLine(looked.Finding)), recorded)
	if looked.Recorded && looked.Finding.Kind == model.FindingHasNothing && op.State == model.StateApplied && op.Contradicted {
		// reconcile.Look flagged it: the ledger's applied against the
		// provider's nothing. The receipt stays; a person decides.
		line := "contradicted: the ledger records it applied, and the provider has nothing under its key — its receipt may report done an effect that never happened; replays still return it until a person decides (a new key sends it deliberately)."
		if prov, err := l.Service().Providers.Get(op.Provider); err != nil || !provider.KeepsKeys(prov) {
			// Only where it can apply: the sandbox keeps every key.
			line += " A provider that expires idempotency keys (one that keeps them 24 h, say) shows the same picture once the key is gone, though it made the effect: check the provider itself (its dashboard, the recipient) before authorizing a new key"
		}
		fmt.Fprintln(stdout, line)
	}
	if ev.Found && reconcile.AllowedAt(*op, model.ActionMarkApplied, l.Store().Now()) {
		// Unknown, or a not_applied or failed one this lookup (or a
		// late answer) contradicted.
		// --key K@V would pin a version: a key with @ in it is named
		// whole, with the version it is at now (--expect-version).
		pin := ""
		if strings.Contains(op.Key, "@") {
			pin = fmt.Sprintf(" --expect-version %d", op.Version)
		}
		// A lookup may find it without naming a reference (an empty 200):
		// the evidence is then what was asked and found, never '' (refused).
		evidence := ev.Ref
		if evidence == "" {
			evidence = fmt.Sprintf("provider %s lookup found downstream key %s", ev.Provider, ev.DownstreamKey)
		}
		resolve := fmt.Sprintf("retrysafe ops resolve%s --tenant %s --key %s%s --as applied --evidence %s --reason \"provider lookup found it\"",
			ledgerFlags(k.db, *pdb, *cfgPath), textsafe.ShellWord(op.Tenant), textsafe.ShellWord(op.Key), pin, textsafe.ShellWord(evidence))
		if op.State == model.StateInProgress && reconcile.Unheld(*op, l.Store().Now()) && l.Service().Resendable(*op) {
			// Nobody holds the claim and it is sent again under its
			// key: the retry gets the provider's first answer (its
			// receipt), which is what the caller wanted.
			resolve = fmt.Sprintf("retry it with the same key — provider %s honours downstream keys, so the retry sends it again under the same downstream key and the provider answers with its first result: retrysafe call%s --tenant %s --key %s --tool %s --args %s   or, to record it without a retry: %s",
				op.Provider, ledgerFlags(k.db, *pdb, *cfgPath), textsafe.ShellWord(op.Tenant), textsafe.ShellWord(op.Key), textsafe.ShellWord(op.Tool), textsafe.ShellWord(string(op.Args)), resolve)
		}
		fmt.Fprintf(stdout, "to settle: %s\n", show(oneLine(resolve)))
	}
	if line := offer(hs, decideCommands(now, ledgerFlags(k.db, *pdb, *cfgPath), dg, l.Store().Now())...); line != "" {
		fmt.Fprintln(stdout, show(line))
	}
	if line, _ := clockLine(l.Store()); line != "" {
		fmt.Fprintln(stdout, show(line))
	}
	return exitOK
}

// askedElsewhereAdvice is the next step after a "cannot tell" because this
// config's lookup asks elsewhere than the claim's request went
// (reconcile.ErrAskedElsewhere): asking again here says nothing more, so
// ask with the config the claim was made with, or decide on evidence of
// your own — the commands, with the ledger's flags. "" for any other
// error.
func askedElsewhereAdvice(err error, db, pdb, cfgPath, tenant, key string) string {
	if !errors.Is(err, reconcile.ErrAskedElsewhere) {
		return ""
	}
	keys := " --tenant " + textsafe.ShellWord(tenant) + " --key " + textsafe.ShellWord(key)
	return fmt.Sprintf(" — to settle: retrysafe ops check%s%s --config FILE   (FILE: the config the claim was made with)  or  retrysafe ops resolve%s%s --as applied|not-applied --evidence \"…\" --reason \"…\"   (your own evidence: a ticket, the provider's console)",
		storeFlags(db, pdb), keys, ledgerFlags(db, pdb, cfgPath), keys)
}

// withinGraceUsage documents --within-grace (ops resolve, ops supersede).
const withinGraceUsage = "decide even though the operation's latest request is within its grace — the provider may still apply it, and a \"not applied\" or a new key then sends it a second time; without it such a decision is refused (several operations: skipped), saying when to decide. Only if you know the provider dropped the request"

// graceFirst is the write's refusal within the grace after the
// operation's latest request (reconcile.GraceCheck), said before the
// provider is asked or anything is recorded; nil outside it, or with
// --within-grace. The write checks again, in its transaction.
func graceFirst(l *ledger.Ledger, action model.Action, d reconcile.Decision, det *model.Detail) error {
	if d.WithinGrace {
		return nil
	}
	return l.Service().GraceCheck(action, det.Operation, det.Attempts, l.Store().Now())
}

// checkHint ends one key's refusal of "not applied" without evidence: a
// recorded "has nothing" (ops check, triage) is not decided on by a
// command that did not show it — it may be another operator's, and the
// provider is asked again instead, by --check, which shows and records
// its answer and is then the evidence (and the write checks the grace
// after the latest request in its transaction). The refusal says so, and
// names the finding when there is one.
func checkHint(ctx context.Context, db string, cfg *config.Config, t reconcile.Target) string {
	const again = " — or run it again with --check: the provider is asked first, its finding is recorded, and if it has nothing that is the evidence"
	rl, err := openLedger(context.Background(), db, cfg, opening{store: store.Options{ReadOnly: true}})
	if err != nil {
		return again
	}
	defer rl.Close()
	op, err := rl.Store().Get(ctx, t.Tenant, t.Key)
	if err != nil {
		return again
	}
	f := op.Finding
	if det, derr := rl.Store().Detail(ctx, t.Tenant, t.Key); derr == nil {
		f = det.Operation.Finding
	}
	if f == nil || f.Kind != model.FindingHasNothing || f.Stale {
		return again
	}
	by := f.By
	if by == "" {
		by = "a lookup"
	}
	return fmt.Sprintf(" — a provider check recorded at %s (%s) found nothing, but this command decides on no finding it has not shown you: run it again with --check (the provider is asked again, its answer recorded and shown, and if it still has nothing that is the evidence), or give --evidence",
		f.At.UTC().Format(time.RFC3339), show(by))
}
