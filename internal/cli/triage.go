package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// Exit codes of `retrysafe triage` (help.go says them to people).
const (
	// exitTriageOK (0): every candidate got a finding and it was recorded
	// (or shown, read-only); none of them "cannot tell".
	exitTriageOK = 0
	// exitTriageCannotTell (3): finished, but some providers could not
	// tell: those operations still need a person (or another run).
	exitTriageCannotTell = 3
	// exitTriageStopped (4): interrupted; what was recorded stays.
	exitTriageStopped = 4
	// 1: some findings could not be recorded (the ledger failed);
	// 2: bad flags, no such ledger.
)

// triageFinding is one operation's finding in --json (and, read-only, in
// the text output: nothing else keeps it).
type triageFinding struct {
	Tenant   string        `json:"tenant"`
	Key      string        `json:"key"`
	State    model.State   `json:"state"`
	Finding  model.Finding `json:"finding"`
	Recorded bool          `json:"recorded"`
	Error    string        `json:"error,omitempty"`
}

func runTriage(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("triage", stderr)
	db := fs.String("db", defaultDB(), dbUsage)
	tenant := fs.String("tenant", "", "only this tenant's operations")
	prov := fs.String("provider", "", "only this provider's operations")
	asJSON := fs.Bool("json", false, "the report and every finding as JSON, for scripts")
	conc := fs.Int("concurrency", reconcile.DefaultTriageConcurrency, "lookups at once")
	rateFlag := fs.Float64("rate", 0, fmt.Sprintf("at most this many lookups per second to each provider, overriding the config's (default: each provider's [providers.lookup] rate, else %g)", reconcile.DefaultTriageRate))
	timeout := fs.Duration("timeout", reconcile.DefaultLookupTimeout, "one lookup's deadline: a slower provider cannot tell")
	operator := fs.String("operator", defaultOperator(), "recorded with each finding (default $USER)")
	pdb := fs.String("provider-db", "", "sandbox provider file the calls used (default beside the ledger); never created to be asked")
	readOnly := fs.Bool("read-only", false, "ask and show, record nothing")
	cfgPath := configFlag(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	rateSet := false
	fs.Visit(func(f *flag.Flag) { rateSet = rateSet || f.Name == "rate" })
	switch {
	case *conc < 1 || *conc > 256:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--concurrency must be 1..256, not %d", *conc))
	case rateSet && (!(*rateFlag >= config.MinLookupRate) || *rateFlag > config.MaxLookupRate):
		return fail(stderr, model.Errorf(model.CodeInvalid, "--rate must be a number of lookups per second from %g to %g, not %v", config.MinLookupRate, config.MaxLookupRate, *rateFlag))
	case *timeout <= 0:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--timeout must be positive, not %v", *timeout))
	case strings.TrimSpace(*operator) == "":
		return fail(stderr, model.Errorf(model.CodeInvalid, "--operator must not be empty: findings record who asked"))
	}
	if err := model.ValidateText("operator name", *operator, reconcile.MaxOperatorLen); err != nil {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--operator: %v", err))
	}
	if *tenant != "" {
		if err := model.ValidateIdentity(*tenant, "k"); err != nil {
			return fail(stderr, model.Errorf(model.CodeInvalid, "--tenant: %v", err))
		}
	}
	cfg, code, ok := loadConfig(*cfgPath, stderr)
	if !ok {
		return code
	}
	l, err := openLedger(context.Background(), *db, cfg, opening{providerDB: *pdb, store: store.Options{ReadOnly: *readOnly}, use: ledger.LookupsOnly, askReadOnly: true})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	l.Service().LookupTimeout = *timeout
	if *prov != "" {
		if _, err := l.Service().Providers.Get(*prov); err != nil {
			return fail(stderr, model.Errorf(model.CodeInvalid, "--provider: %v", err))
		}
	}

	progress := newTriageProgress(stderr)
	var mu sync.Mutex
	var findings []triageFinding
	keep := *asJSON || l.Store().ReadOnly()
	rep, err := l.Service().Triage(ctx, reconcile.TriageOptions{
		Tenant: *tenant, Provider: *prov, Concurrency: *conc, Rate: *rateFlag,
		By: "triage by " + *operator,
		Progress: func(ev reconcile.TriageEvent) {
			progress.step(ev)
			if keep {
				f := triageFinding{Tenant: ev.Op.Tenant, Key: ev.Op.Key, State: ev.Op.State, Finding: ev.Looked.Finding, Recorded: ev.Looked.Recorded}
				if ev.Err != nil {
					f.Error = ev.Err.Error()
				}
				mu.Lock()
				findings = append(findings, f)
				mu.Unlock()
			}
		},
	})
	progress.done()
	if err != nil {
		return fail(stderr, err)
	}
	code = triageExit(rep)
	if *asJSON {
		if findings == nil {
			findings = []triageFinding{}
		}
		if c := printJSON(stdout, stderr, struct {
			reconcile.TriageReport
			Totals   reconcile.TriageTally `json:"totals"`
			Findings []triageFinding       `json:"findings"`
		}{rep, rep.Totals(), findings}); c != exitOK {
			return c
		}
		return code
	}
	printTriage(stdout, rep, l.Service())
	if l.Store().ReadOnly() {
		fmt.Fprintln(stdout, "\nRead-only: these findings were shown, not recorded.")
		for _, f := range findings {
			fmt.Fprintf(stdout, "  %s/%s  %s\n", show(f.Tenant), show(f.Key), show(findingLine(f.Finding)))
		}
	}
	return code
}

func triageExit(rep reconcile.TriageReport) int {
	t := rep.Totals()
	switch {
	case rep.Cancelled:
		return exitTriageStopped
	case t.Errors > 0:
		return exitInternal
	case t.CannotTell > 0 || t.HasOther > 0:
		// Another request under the key is no evidence either: a person
		// decides it, as one that could not be told.
		return exitTriageCannotTell
	}
	return exitTriageOK
}

// findingLine is a finding in the words of the console's FINDING column.
func findingLine(f model.Finding) string {
	s := f.Kind.Words()
	switch f.Kind {
	case model.FindingHasIt, model.FindingHasOther:
		if f.Ref != "" {
			s += " · " + f.Ref
		}
	case model.FindingCannotTell:
		if strings.HasPrefix(f.Detail, s) {
			// The provider's words say it already.
			return f.Detail
		}
		s += ": " + f.Detail
	}
	return s
}

// printTriage is the summary table.
func printTriage(w io.Writer, rep reconcile.TriageReport, svc *reconcile.Service) {
	if rep.Candidates == 0 {
		fmt.Fprintln(w, "No unknown operations (nor in-progress ones past their lease) with a provider to ask.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "PROVIDER\tCHECKED\tHAS IT\tHAS NOTHING\tCANNOT TELL\tERRORS\tELAPSED\t")
	row := func(t reconcile.TriageTally, name string) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.1fs\t\n", name, t.Checked, t.HasIt, t.HasNothing, t.CannotTell, t.Errors, t.Elapsed.Seconds())
	}
	for _, t := range rep.Providers {
		name := show(t.Provider)
		if svc.LookupAuthoritative(t.Provider) {
			name += " (authoritative)"
		}
		row(t, name)
	}
	if len(rep.Providers) > 1 {
		row(rep.Totals(), "all")
	}
	tw.Flush()
	t := rep.Totals()
	fmt.Fprintf(w, "\n%d of %d operations checked in %.1fs.", rep.Checked, rep.Candidates, rep.Elapsed.Seconds())
	if rep.Cancelled {
		fmt.Fprint(w, " Interrupted: the rest were not asked; what was recorded stays.")
	}
	fmt.Fprintln(w, " Nothing was decided.")
	if t.HasIt+t.HasNothing > 0 && rep.Recorded {
		fmt.Fprintln(w, "Review them in the console: f filters by finding, R reviews the view (has it → mark applied with the reference; has nothing → mark not applied, authoritative providers only).")
	}
	if t.CannotTell > 0 {
		fmt.Fprintf(w, "%d could not be told: a person decides those (or run triage again later).\n", t.CannotTell)
	}
	if t.HasOther > 0 {
		fmt.Fprintf(w, "%d found a different request under the key (a copy of the ledger, or a key reused after its tombstone was forgotten, sent it): no evidence either way — not to be marked applied; check each at the provider, and authorize a new key to send it.\n", t.HasOther)
	}
	if t.Errors > 0 {
		fmt.Fprintf(w, "%d findings could not be recorded: the ledger failed (see above).\n", t.Errors)
	}
}

// triageProgress draws one line on stderr while a run goes, only when
// stderr is a terminal, at most ten times a second.
type triageProgress struct {
	w     io.Writer
	tty   bool
	last  time.Time
	start time.Time
	n     map[model.FindingKind]int
	errs  int
	drawn bool
}

func newTriageProgress(stderr io.Writer) *triageProgress {
	p := &triageProgress{w: stderr, start: time.Now(), n: map[model.FindingKind]int{}}
	if f, ok := stderr.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		p.tty = true
	}
	return p
}

// step is called one event at a time (reconcile.TriageOptions.Progress).
func (p *triageProgress) step(ev reconcile.TriageEvent) {
	if ev.Err != nil {
		p.errs++
	} else {
		p.n[ev.Looked.Finding.Kind]++
	}
	if !p.tty || (time.Since(p.last) < 100*time.Millisecond && ev.Done < ev.Total) {
		return
	}
	p.last = time.Now()
	p.drawn = true
	fmt.Fprintf(p.w, "\r\x1b[Ktriage: %d/%d · has it %d · has nothing %d · cannot tell %d · errors %d · %.1fs",
		ev.Done, ev.Total, p.n[model.FindingHasIt], p.n[model.FindingHasNothing], p.n[model.FindingCannotTell], p.errs, time.Since(p.start).Seconds())
}

func (p *triageProgress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
