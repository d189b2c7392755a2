package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

const opsUsage = `Usage:
  retrysafe ops list      [--state S] [--tenant T] [--tool X] [--search TEXT] [--limit N] [--json]
  retrysafe ops show      --tenant T --key K [--json]
  retrysafe ops resolve   --tenant T --key K --as applied|not-applied --reason TEXT [--evidence REF] [--operator NAME] [--expect-version N]
  retrysafe ops supersede --tenant T --key K --reason TEXT [--new-key K2] [--operator NAME] [--expect-version N]
  retrysafe ops check     --tenant T --key K [--json]
Every command takes --db FILE (default $RETRYSAFE_DB or ./retrysafe.db).
`

func runOps(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprint(stdout, opsUsage)
			return exitOK
		}
		fmt.Fprint(stderr, "retrysafe ops: which one? list, show, resolve, supersede or check\n\n"+opsUsage)
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
	}
	fmt.Fprintf(stderr, "retrysafe ops: unknown subcommand %q\n\n%s", sub, opsUsage)
	return exitInvalid
}

// opsOpen opens an existing ledger; ops never creates one.
// Decisions and reads need no provider, so none is opened (or created).
func opsOpen(db string, cfg *config.Config, readOnly bool) (*ledger, error) {
	return openLedger(db, "", cfg, noProviders, store.Options{ReadOnly: readOnly})
}

func opsList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("ops list", stderr)
	db := fs.String("db", defaultDB(), "ledger file")
	state := fs.String("state", "", "only this state (unknown, in_progress, not_applied, failed, applied, superseded, authorized)")
	tenant := fs.String("tenant", "", "only this tenant")
	tool := fs.String("tool", "", "only this tool")
	cfgPath := configFlag(fs)
	search := fs.String("search", "", "key, subject/report/recipient or trace id contains TEXT")
	limit := fs.Int("limit", 50, "at most N operations, newest first")
	asJSON := fs.Bool("json", false, "JSON array, stable for scripts")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	q := store.ListQuery{Tenant: *tenant, Tool: *tool, Search: *search, Limit: *limit}
	if *state != "" {
		st, err := model.ParseState(*state)
		if err != nil {
			return fail(stderr, err)
		}
		q.State = st
	}
	cfg, code, ok := loadConfig(*cfgPath, stderr)
	if !ok {
		return code
	}
	if *tool != "" {
		if _, err := cfg.Tools.Lookup(*tool); err != nil {
			return fail(stderr, err)
		}
	}
	if *limit < 1 || *limit > 10000 {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--limit must be between 1 and 10000"))
	}
	l, err := opsOpen(*db, cfg, true)
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	ops, err := l.Store.List(ctx, q)
	if err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		if ops == nil {
			ops = []model.Operation{}
		}
		return printJSON(stdout, stderr, ops)
	}
	if len(ops) == 0 {
		fmt.Fprintln(stdout, "no operations match")
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CREATED\tTENANT\tKEY\tTOOL\tSTATE\tATTEMPTS\tPROVIDER REF\tSUMMARY")
	for _, op := range ops {
		st := string(op.State)
		if op.Contradicted {
			st += " (contradicted)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", op.CreatedAt.Local().Format("2006-01-02 15:04:05"),
			op.Tenant, op.Key, op.Tool, st, op.AttemptCount, dash(op.ProviderRef), clip(op.Summary, 40))
	}
	tw.Flush()
	return exitOK
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

func printJSON(stdout, stderr io.Writer, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fail(stderr, err)
	}
	return exitOK
}

// keyFlags registers --db, --tenant and --key, shared by the per-operation
// commands.
type keyFlags struct{ db, tenant, key string }

func (k *keyFlags) register(fs interface {
	StringVar(*string, string, string, string)
}) {
	fs.StringVar(&k.db, "db", defaultDB(), "ledger file")
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
	asJSON := fs.Bool("json", false, "JSON, stable for scripts")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if err := k.validate(); err != nil {
		return fail(stderr, err)
	}
	l, err := opsOpen(k.db, config.Default(), true)
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	d, err := l.Store.Detail(ctx, k.tenant, k.key)
	if err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		if d.Attempts == nil {
			d.Attempts = []model.Attempt{}
		}
		if d.Decisions == nil {
			d.Decisions = []model.Decision{}
		}
		return printJSON(stdout, stderr, d)
	}
	writeDetail(stdout, d)
	return exitOK
}

func writeDetail(w io.Writer, d *model.Detail) {
	op := d.Operation
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, v)
		}
	}
	st := string(op.State)
	if op.Contradicted {
		st += "  (CONTRADICTED: a late provider result disagrees — see attempts)"
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
		row("lease", fmt.Sprintf("%s until %s", op.LeaseOwner, fmtTime(op.LeaseUntil)))
	}
	if !op.ExpiresAt.IsZero() {
		row("replays until", fmtTime(op.ExpiresAt))
	}
	row("provider", op.Provider)
	row("downstream key", op.DownstreamKey)
	row("provider ref", op.ProviderRef)
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
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Seq, fmtTime(a.StartedAt), a.Outcome, dash(a.TraceID),
			dash(a.WorkerID), a.Duration.Round(time.Microsecond), dash(a.ProviderRef), a.Error)
	}
	tw.Flush()
	fmt.Fprintf(w, "\ndecisions (%d)\n", len(d.Decisions))
	for _, dc := range d.Decisions {
		fmt.Fprintf(w, "  %s  %s  %s: %s → %s (from version %d)\n    reason: %s\n", fmtTime(dc.At), dc.Operator,
			dc.Action, dc.FromState, dc.ToState, dc.FromVersion, dc.Reason)
		if dc.Evidence != "" {
			fmt.Fprintf(w, "    evidence: %s\n", dc.Evidence)
		}
		if dc.NewKey != "" {
			fmt.Fprintf(w, "    new key: %s\n", dc.NewKey)
		}
	}
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

func opsResolve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("ops resolve", stderr)
	var f decisionFlags
	f.register(fs)
	as := fs.String("as", "", "applied or not-applied (required)")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if err := f.validate(); err != nil {
		return fail(stderr, err)
	}
	var action model.Action
	switch *as {
	case "applied":
		action = model.ActionMarkApplied
	case "not-applied", "not_applied":
		action = model.ActionMarkNotApplied
	default:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--as must be applied or not-applied"))
	}
	d := f.decision()
	if err := d.Validate(action); err != nil {
		return fail(stderr, err)
	}
	l, err := opsOpen(f.db, config.Default(), false)
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	var op *model.Operation
	if action == model.ActionMarkApplied {
		op, err = l.Svc.MarkApplied(ctx, d)
	} else {
		op, err = l.Svc.MarkNotApplied(ctx, d)
	}
	if err != nil {
		return fail(stderr, err)
	}
	from := "?"
	if det, err := l.Store.Detail(ctx, op.Tenant, op.Key); err == nil && len(det.Decisions) > 0 {
		from = string(det.Decisions[len(det.Decisions)-1].FromState)
	}
	fmt.Fprintf(stdout, "%s/%s: %s → %s (version %d), decided by %s\n", op.Tenant, op.Key, from, op.State, op.Version, d.Operator)
	return exitOK
}

func opsSupersede(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("ops supersede", stderr)
	var f decisionFlags
	f.register(fs)
	newKey := fs.String("new-key", "", "the new key (default: derived from the old one)")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if err := f.validate(); err != nil {
		return fail(stderr, err)
	}
	d := f.decision()
	d.NewKey = *newKey
	if err := d.Validate(model.ActionAuthorizeKey); err != nil {
		return fail(stderr, err)
	}
	l, err := opsOpen(f.db, config.Default(), false)
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	_, n, err := l.Svc.AuthorizeNewKey(ctx, d)
	if err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintln(stdout, n.Key)
	fmt.Fprintf(stderr, "%s/%s superseded; the new key %q is authorized — its first call claims it\n", f.tenant, f.key, n.Key)
	return exitOK
}

func opsCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("ops check", stderr)
	var k keyFlags
	k.register(fs)
	pdb := fs.String("provider-db", "", "sandbox provider file (default beside the ledger)")
	cfgPath := configFlag(fs)
	asJSON := fs.Bool("json", false, "JSON, stable for scripts")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if err := k.validate(); err != nil {
		return fail(stderr, err)
	}
	cfg, code, ok := loadConfig(*cfgPath, stderr)
	if !ok {
		return code
	}
	// lookupOnly: a provider that cannot be reached (a sandbox file that
	// does not exist) answers "cannot tell"; none is created to be asked.
	l, err := openLedger(k.db, *pdb, cfg, lookupOnly, store.Options{})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	op, ev, err := l.Svc.Check(ctx, k.tenant, k.key)
	if err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		return printJSON(stdout, stderr, struct {
			Tenant   string      `json:"tenant"`
			Key      string      `json:"key"`
			State    model.State `json:"state"`
			Version  int64       `json:"version"`
			Evidence any         `json:"evidence"`
		}{op.Tenant, op.Key, op.State, op.Version, ev})
	}
	fmt.Fprintf(stdout, "%s/%s is %s (version %d) in the ledger\n", op.Tenant, op.Key, op.State, op.Version)
	fmt.Fprintf(stdout, "provider %s, downstream key %s: %s\n", ev.Provider, ev.DownstreamKey, ev.Detail)
	if ev.Found && op.State == model.StateUnknown {
		fmt.Fprintf(stdout, "to settle: retrysafe ops resolve --tenant %s --key %s --as applied --evidence %s --reason \"provider lookup found it\"\n", op.Tenant, op.Key, ev.Ref)
	}
	return exitOK
}
