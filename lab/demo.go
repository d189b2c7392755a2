package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"retrysafe/model"
	"retrysafe/provider"
	"retrysafe/reconcile"
	"retrysafe/store"
)

// The demo ledger: a realistic morning of agent traffic across several
// tenants, built only through the real code paths — reconcile.Service calls
// with the sandbox's fault switches, worker processes that really die,
// sweeps and operator decisions — never rows written by hand. The plan is
// fixed (and its randomness seeded), so the ledger it builds always has the
// same counts by tenant, state and tool; the demo test asserts them.

// InFlightLease is the lease of the demo's in-flight operations: long enough
// that they are still in_progress, lease held, when someone opens the
// console right after `retrysafe demo` (or comes back after lunch). A sweep
// after it ends moves them to unknown, as it would a real crashed worker.
const InFlightLease = 2 * time.Hour

// fate is what happens to one background operation.
type fate string

const (
	fateOK                 fate = "ok"                   // one call, applied
	fateReplayed           fate = "replayed"             // applied, then retried 1–3 times (new trace ids)
	fateConflict           fate = "conflict"             // applied, then reused with changed arguments, then replayed
	fateFailed             fate = "failed"               // the provider rejects it; a retry replays the stored failure
	fateNotApplied         fate = "not-applied"          // the provider refuses before accepting: definitely nothing
	fateUnknownLost        fate = "unknown-lost"         // delivered, the reply lost: unknown, waiting for a person
	fateUnknownTimeout     fate = "unknown-timeout"      // no reply in time (nothing delivered): unknown, waiting
	fateUnknownCrash       fate = "unknown-crash"        // worker killed after the provider applied; the lease ends; swept
	fateResolvedApplied    fate = "resolved-applied"     // unknown-lost, lookup finds it, marked applied, replayed
	fateResolvedNotApplied fate = "resolved-not-applied" // unknown-timeout, lookup finds nothing, marked not applied
	fateRetriedNotApplied  fate = "retried-not-applied"  // resolved-not-applied, then the same key claims and applies
	fateSupersededPending  fate = "superseded-pending"   // unknown-timeout, a new key authorized and not used yet
	fateSupersededUsed     fate = "superseded-used"      // … the new key called and applied; the old key retried
	fateContradicted       fate = "contradicted"         // marked not applied on an empty lookup while still in flight; the late result contradicts it
	fateIdemRedispatch     fate = "idem-redispatch"      // reply lost at a key-honouring provider; the retry re-dispatches safely
	fateInFlight           fate = "in-flight"            // claimed by a worker killed before dispatch; lease InFlightLease; a second caller is told in_progress
)

// finalStates is what each fate leaves: one state per operation it creates.
var finalStates = map[fate][]model.State{
	fateOK: {model.StateApplied}, fateReplayed: {model.StateApplied}, fateConflict: {model.StateApplied},
	fateFailed: {model.StateFailed}, fateNotApplied: {model.StateNotApplied},
	fateUnknownLost: {model.StateUnknown}, fateUnknownTimeout: {model.StateUnknown}, fateUnknownCrash: {model.StateUnknown},
	fateResolvedApplied: {model.StateApplied}, fateResolvedNotApplied: {model.StateNotApplied},
	fateRetriedNotApplied: {model.StateApplied},
	fateSupersededPending: {model.StateSuperseded, model.StateAuthorized},
	fateSupersededUsed:    {model.StateSuperseded, model.StateApplied},
	fateContradicted:      {model.StateNotApplied}, fateIdemRedispatch: {model.StateApplied},
	fateInFlight: {model.StateInProgress},
}

// batch is n operations of one tenant, tool, provider and fate.
type batch struct {
	tenant, tool, provider string
	fate                   fate
	n                      int
}

const (
	task   = "create_support_task"
	report = "create_report_job"
	notify = "send_notification"
)

// demoPlan is the background traffic, tenant by tenant.
var demoPlan = []batch{
	{"acme-support", task, "", fateOK, 40},
	{"acme-support", task, "", fateReplayed, 12},
	{"acme-support", task, "", fateConflict, 3},
	{"acme-support", notify, "sandbox", fateOK, 15},
	{"acme-support", notify, "sandbox", fateReplayed, 3},
	{"acme-support", notify, "sandbox", fateUnknownLost, 2},
	{"acme-support", notify, "sandbox", fateResolvedApplied, 1},
	{"acme-support", notify, "sandbox", fateFailed, 1},
	{"acme-support", notify, "sandbox", fateInFlight, 1},

	{"globex-billing", report, "", fateOK, 30},
	{"globex-billing", report, "", fateReplayed, 8},
	{"globex-billing", report, "", fateConflict, 2},
	{"globex-billing", notify, "sandbox-idem", fateOK, 12},
	{"globex-billing", notify, "sandbox-idem", fateIdemRedispatch, 2},
	{"globex-billing", notify, "sandbox-idem", fateNotApplied, 1},
	{"globex-billing", notify, "sandbox", fateUnknownLost, 1},
	{"globex-billing", notify, "sandbox", fateSupersededPending, 1},
	{"globex-billing", notify, "sandbox", fateContradicted, 1},
	{"globex-billing", notify, "sandbox", fateInFlight, 1},

	{"initech-ops", report, "", fateOK, 20},
	{"initech-ops", report, "", fateReplayed, 5},
	{"initech-ops", task, "", fateOK, 20},
	{"initech-ops", task, "", fateReplayed, 4},
	{"initech-ops", task, "", fateConflict, 1},
	{"initech-ops", notify, "sandbox", fateOK, 10},
	{"initech-ops", notify, "sandbox", fateUnknownTimeout, 1},
	{"initech-ops", notify, "sandbox", fateResolvedNotApplied, 1},
	{"initech-ops", notify, "sandbox", fateSupersededUsed, 1},
	{"initech-ops", notify, "sandbox", fateFailed, 1},
	{"initech-ops", notify, "sandbox", fateInFlight, 1},

	{"umbrella-logistics", task, "", fateOK, 25},
	{"umbrella-logistics", task, "", fateReplayed, 6},
	{"umbrella-logistics", task, "", fateConflict, 2},
	{"umbrella-logistics", notify, "sandbox", fateOK, 10},
	{"umbrella-logistics", notify, "sandbox", fateReplayed, 2},
	{"umbrella-logistics", notify, "sandbox", fateUnknownCrash, 1},
	{"umbrella-logistics", notify, "sandbox", fateUnknownLost, 1},

	{"hooli-platform", report, "", fateOK, 15},
	{"hooli-platform", report, "", fateReplayed, 4},
	{"hooli-platform", task, "", fateOK, 10},
	{"hooli-platform", notify, "sandbox-idem", fateOK, 8},
	{"hooli-platform", notify, "sandbox-idem", fateReplayed, 2},
	{"hooli-platform", notify, "sandbox", fateRetriedNotApplied, 1},
}

// DemoTenants are the background tenants, in plan order (the lab's
// scenarios add LabTenant).
func DemoTenants() []string {
	var out []string
	for _, b := range demoPlan {
		if len(out) == 0 || out[len(out)-1] != b.tenant {
			out = append(out, b.tenant)
		}
	}
	return out
}

// DemoReport says what the demo builder made.
type DemoReport struct {
	Operations int
	// ByTenantState and ByTenantTool count the operations the plan made
	// (the background tenants; the lab's rows are in Lab).
	ByTenantState map[string]map[model.State]int
	ByTenantTool  map[string]map[string]int
	Lab           []Row
	// InFlight are the operations left in_progress, lease held until
	// LeaseUntil.
	InFlight   []string // tenant/key
	LeaseUntil time.Time
	// Unknown are the operations waiting for a person.
	Unknown []string // tenant/key
	Elapsed time.Duration
}

// BuildDemo builds the demo ledger at path (created; it must not hold
// operations yet) with its sandbox provider at providerDB ("" = beside it),
// running the background plan and then every lab scenario under LabTenant
// with r's worker processes. progress gets one line per phase.
func BuildDemo(ctx context.Context, path, providerDB string, r *Runner, progress func(string)) (*DemoReport, error) {
	start := time.Now()
	if progress == nil {
		progress = func(string) {}
	}
	if providerDB == "" {
		providerDB = ProviderPathFor(path)
	}
	st, err := store.Open(path, store.Options{Create: true})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if c, err := st.Counts(ctx, ""); err != nil {
		return nil, err
	} else if c.Total > 0 {
		return nil, model.Errorf(model.CodeConflict, "%s already holds %d operations; the demo builds a fresh ledger", path, c.Total)
	}
	sb, err := provider.OpenSandbox(providerDB)
	if err != nil {
		return nil, model.Wrap(model.CodeUnavailable, err, "cannot open sandbox provider %s: %v", providerDB, err)
	}
	defer sb.Close()
	b := &builder{
		ctx: ctx, st: st, sb: sb, svc: reconcile.New(st, sb.Providers()),
		spawn: spawner{r: r, ctx: ctx, ledger: path, providerDB: providerDB},
		rng:   rand.New(rand.NewPCG(2024, 6)),
		used:  map[string]bool{},
		rep: &DemoReport{ByTenantState: map[string]map[model.State]int{},
			ByTenantTool: map[string]map[string]int{}},
	}
	for _, tenant := range DemoTenants() {
		t0 := time.Now()
		n := 0
		for _, bt := range demoPlan {
			if bt.tenant != tenant {
				continue
			}
			for range bt.n {
				if err := b.operation(bt); err != nil {
					return nil, fmt.Errorf("demo: %s %s %s: %w", bt.tenant, bt.tool, bt.fate, err)
				}
			}
			n += bt.n * len(finalStates[bt.fate])
		}
		progress(fmt.Sprintf("%-20s %3d operations  (%s)", tenant, n, time.Since(t0).Round(time.Millisecond)))
	}
	// The crashed worker's lease ends within the build; the sweep is what
	// turns it unknown, exactly as a periodic `retrysafe sweep` would.
	if err := b.settleCrashes(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	rr := *r
	rr.ProviderDB = providerDB
	okRows := 0
	for _, sc := range Scenarios() {
		row, err := rr.RunIn(ctx, path, LabTenant, sc.ID, nil)
		if err != nil {
			return nil, fmt.Errorf("demo: lab scenario %s: %w", sc.ID, err)
		}
		if row.OK {
			okRows++
		}
		b.rep.Lab = append(b.rep.Lab, row)
	}
	progress(fmt.Sprintf("%-20s %3d scenarios ok of %d, real worker processes  (%s)", LabTenant, okRows, len(b.rep.Lab), time.Since(t0).Round(time.Millisecond)))
	if okRows != len(b.rep.Lab) {
		return nil, fmt.Errorf("demo: %d lab scenario(s) did not hold", len(b.rep.Lab)-okRows)
	}
	c, err := st.Counts(ctx, "")
	if err != nil {
		return nil, err
	}
	b.rep.Operations = c.Total
	sort.Strings(b.rep.Unknown)
	b.rep.Elapsed = time.Since(start)
	return b.rep, nil
}

// builder runs the plan.
type builder struct {
	ctx   context.Context
	st    *store.Store
	sb    *provider.Sandbox
	svc   *reconcile.Service
	spawn spawner
	rng   *rand.Rand
	used  map[string]bool
	rep   *DemoReport
	// crashed are the operations whose worker died with a short lease,
	// to be swept once it ends.
	crashed []string
	seq     int
}

func (b *builder) count(tenant, tool string, st model.State) {
	if b.rep.ByTenantState[tenant] == nil {
		b.rep.ByTenantState[tenant] = map[model.State]int{}
		b.rep.ByTenantTool[tenant] = map[string]int{}
	}
	b.rep.ByTenantState[tenant][st]++
	b.rep.ByTenantTool[tenant][tool]++
}

// request is one call of the background: a fresh realistic key unless one
// is given, fresh trace id, an agent runner's worker id.
func (b *builder) request(bt batch, key, args string) model.Request {
	b.seq++
	return model.Request{Tenant: bt.tenant, Key: key, Tool: bt.tool, PayloadVersion: 1, Args: []byte(args),
		TraceID: b.traceID(), WorkerID: fmt.Sprintf("agent-runner-%d:%d", 1+b.rng.IntN(4), 20000+b.rng.IntN(40000))}
}

// call makes one call and insists on the class the plan expects: a demo
// that silently built something else would teach the wrong lesson.
func (b *builder) call(svc *reconcile.Service, req model.Request, opt reconcile.CallOptions, want model.Class) (reconcile.Result, error) {
	if svc == nil {
		svc = b.svc
	}
	res, err := svc.Call(b.ctx, req, opt)
	if err != nil {
		return res, err
	}
	if res.Class != want {
		return res, fmt.Errorf("%s/%s: want %s, got %s: %s", req.Tenant, req.Key, want, res.Class, res.Message)
	}
	return res, nil
}

func (b *builder) decide(d reconcile.Decision) reconcile.Decision {
	op, err := b.st.Get(b.ctx, d.Tenant, d.Key)
	if err == nil {
		d.ExpectState, d.ExpectVersion = op.State, op.Version
	}
	return d
}

var operators = []string{"priya.n", "marco.r", "oncall-bot-escalation", "jess.w"}

// operation plays one operation of bt to its fate.
func (b *builder) operation(bt batch) error {
	key := b.key(bt.tenant)
	args := b.args(bt)
	req := b.request(bt, key, args)
	opt := reconcile.CallOptions{Provider: bt.provider}
	done := model.ClassDone
	for _, st := range finalStates[bt.fate] {
		b.count(bt.tenant, bt.tool, st)
	}
	switch bt.fate {
	case fateOK:
		_, err := b.call(nil, req, opt, done)
		return err
	case fateReplayed:
		if _, err := b.call(nil, req, opt, done); err != nil {
			return err
		}
		for range 1 + b.rng.IntN(3) {
			if _, err := b.call(nil, b.request(bt, key, args), opt, done); err != nil {
				return err
			}
		}
		return nil
	case fateConflict:
		if _, err := b.call(nil, req, opt, done); err != nil {
			return err
		}
		if _, err := b.call(nil, b.request(bt, key, b.changed(bt, args)), opt, model.ClassConflict); err != nil {
			return err
		}
		_, err := b.call(nil, b.request(bt, key, args), opt, done)
		return err
	case fateFailed:
		opt.Faults.Reject = true
		if _, err := b.call(nil, req, opt, model.ClassFailed); err != nil {
			return err
		}
		_, err := b.call(nil, b.request(bt, key, args), reconcile.CallOptions{}, model.ClassFailed)
		return err
	case fateNotApplied:
		opt.Faults.FailBefore = true
		_, err := b.call(nil, req, opt, model.ClassInProgress)
		return err
	case fateUnknownLost:
		return b.lostReply(req, opt)
	case fateUnknownTimeout:
		return b.timeout(req, opt)
	case fateUnknownCrash:
		o, err := b.spawn.call(call{tenant: bt.tenant, key: key, tool: bt.tool, args: args, provider: bt.provider,
			trace: req.TraceID, lease: 200 * time.Millisecond, dieAt: reconcile.PointAfterDispatch, how: DieKill})
		if err != nil {
			return err
		}
		if !o.Killed {
			return fmt.Errorf("worker was to die after dispatch, got %s", o)
		}
		b.crashed = append(b.crashed, bt.tenant+"/"+key)
		b.rep.Unknown = append(b.rep.Unknown, bt.tenant+"/"+key)
		return nil
	case fateResolvedApplied:
		if err := b.lostReply(req, opt); err != nil {
			return err
		}
		b.rep.Unknown = b.rep.Unknown[:len(b.rep.Unknown)-1]
		_, ev, err := b.svc.Check(b.ctx, bt.tenant, key)
		if err != nil {
			return err
		}
		if _, err := b.svc.MarkApplied(b.ctx, b.decide(reconcile.Decision{Tenant: bt.tenant, Key: key, Operator: b.operator(),
			Reason: "sandbox lookup shows the message was delivered; the reply was lost on the way back", Evidence: ev.Ref})); err != nil {
			return err
		}
		_, err = b.call(nil, b.request(bt, key, args), opt, done)
		return err
	case fateResolvedNotApplied, fateRetriedNotApplied:
		if err := b.timeout(req, opt); err != nil {
			return err
		}
		b.rep.Unknown = b.rep.Unknown[:len(b.rep.Unknown)-1]
		_, ev, err := b.svc.Check(b.ctx, bt.tenant, key)
		if err != nil {
			return err
		}
		if _, err := b.svc.MarkNotApplied(b.ctx, b.decide(reconcile.Decision{Tenant: bt.tenant, Key: key, Operator: b.operator(),
			Reason:   "the provider timed out before accepting; its lookup has no delivery and its status page confirms the request was dropped",
			Evidence: ev.Detail + "; provider incident INC-4471"})); err != nil {
			return err
		}
		if bt.fate == fateRetriedNotApplied {
			_, err = b.call(nil, b.request(bt, key, args), opt, done)
		}
		return err
	case fateSupersededPending, fateSupersededUsed:
		if err := b.timeout(req, opt); err != nil {
			return err
		}
		b.rep.Unknown = b.rep.Unknown[:len(b.rep.Unknown)-1]
		_, ev, err := b.svc.Check(b.ctx, bt.tenant, key)
		if err != nil {
			return err
		}
		newKey := key + ".retry-1"
		if _, _, err := b.svc.AuthorizeNewKey(b.ctx, b.decide(reconcile.Decision{Tenant: bt.tenant, Key: key, Operator: b.operator(),
			Reason: "customer confirmed the e-mail never arrived; send it once more, deliberately", Evidence: ev.Detail,
			NewKey: newKey})); err != nil {
			return err
		}
		if bt.fate == fateSupersededUsed {
			if _, err := b.call(nil, b.request(bt, newKey, args), opt, done); err != nil {
				return err
			}
			// The agent, not yet told, retries the old key: it learns the new one.
			_, err = b.call(nil, b.request(bt, key, args), opt, model.ClassSuperseded)
		}
		return err
	case fateContradicted:
		return b.contradicted(bt, req)
	case fateIdemRedispatch:
		opt.Faults.LoseReply = true
		if _, err := b.call(nil, req, opt, model.ClassInProgress); err != nil {
			return err
		}
		_, err := b.call(nil, b.request(bt, key, args), reconcile.CallOptions{}, done)
		return err
	case fateInFlight:
		o, err := b.spawn.call(call{tenant: bt.tenant, key: key, tool: bt.tool, args: args, provider: bt.provider,
			trace: req.TraceID, lease: InFlightLease, dieAt: reconcile.PointAfterClaim, how: DieKill})
		if err != nil {
			return err
		}
		if !o.Killed {
			return fmt.Errorf("worker was to die after its claim, got %s", o)
		}
		// Another runner's retry arrives while the lease holds.
		if _, err := b.call(nil, b.request(bt, key, args), opt, model.ClassInProgress); err != nil {
			return err
		}
		op, err := b.st.Get(b.ctx, bt.tenant, key)
		if err != nil {
			return err
		}
		b.rep.InFlight = append(b.rep.InFlight, bt.tenant+"/"+key)
		if b.rep.LeaseUntil.IsZero() || op.LeaseUntil.Before(b.rep.LeaseUntil) {
			b.rep.LeaseUntil = op.LeaseUntil
		}
		return nil
	}
	return fmt.Errorf("no such fate %q", bt.fate)
}

// lostReply: the provider delivers, the reply is lost: unknown.
func (b *builder) lostReply(req model.Request, opt reconcile.CallOptions) error {
	opt.Faults.LoseReply = true
	if _, err := b.call(nil, req, opt, model.ClassUnknown); err != nil {
		return err
	}
	b.rep.Unknown = append(b.rep.Unknown, req.Tenant+"/"+req.Key)
	return nil
}

// timeout: the provider is slower than the dispatch deadline; nothing is
// delivered, and nobody can know that yet: unknown.
func (b *builder) timeout(req model.Request, opt reconcile.CallOptions) error {
	short := reconcile.New(b.st, b.svc.Providers)
	short.DispatchTimeout = 20 * time.Millisecond
	opt.Faults.Delay = 150 * time.Millisecond
	if _, err := b.call(short, req, opt, model.ClassUnknown); err != nil {
		return err
	}
	b.rep.Unknown = append(b.rep.Unknown, req.Tenant+"/"+req.Key)
	return nil
}

// contradicted: the article's warning, played out. The claim's lease is
// shorter than the provider's latency; while the request is still in
// flight the sweep calls it unknown, the lookup finds nothing yet and an
// operator marks it not applied. Then the provider delivers and its late
// result is recorded and flags the operation contradicted.
func (b *builder) contradicted(bt batch, req model.Request) error {
	slow := reconcile.New(b.st, b.svc.Providers)
	slow.Lease = time.Millisecond
	var hookErr error
	slow.At = func(p reconcile.Point) {
		if p != reconcile.PointAfterClaim {
			return
		}
		time.Sleep(5 * time.Millisecond) // the lease ends
		if _, err := b.svc.Sweep(b.ctx); err != nil {
			hookErr = err
			return
		}
		_, ev, err := b.svc.Check(b.ctx, req.Tenant, req.Key)
		if err != nil {
			hookErr = err
			return
		}
		_, hookErr = b.svc.MarkNotApplied(b.ctx, b.decide(reconcile.Decision{Tenant: req.Tenant, Key: req.Key, Operator: b.operator(),
			Reason: "lookup came back empty, so nothing was sent", Evidence: ev.Detail}))
	}
	res, err := slow.Call(b.ctx, req, reconcile.CallOptions{Provider: bt.provider})
	if err != nil {
		return err
	}
	if hookErr != nil {
		return hookErr
	}
	if res.Outcome != model.OutcomeLateResult || res.Op == nil || !res.Op.Contradicted {
		return fmt.Errorf("want a late result flagged contradicted, got %s %s", res.Class, res.Message)
	}
	return nil
}

// settleCrashes waits for the crashed workers' short leases and sweeps.
func (b *builder) settleCrashes() error {
	for _, tk := range b.crashed {
		tenant, key, _ := strings.Cut(tk, "/")
		op, err := b.st.Get(b.ctx, tenant, key)
		if err != nil {
			return err
		}
		if d := time.Until(op.LeaseUntil) + 10*time.Millisecond; d > 0 && op.State == model.StateInProgress {
			time.Sleep(d)
		}
	}
	if len(b.crashed) > 0 {
		if _, err := b.svc.Sweep(b.ctx); err != nil {
			return err
		}
	}
	for _, tk := range b.crashed {
		tenant, key, _ := strings.Cut(tk, "/")
		op, err := b.st.Get(b.ctx, tenant, key)
		if err != nil {
			return err
		}
		if op.State != model.StateUnknown {
			return fmt.Errorf("demo: %s should be unknown after its lease and a sweep, is %s", tk, op.State)
		}
	}
	return nil
}

func (b *builder) operator() string { return operators[b.rng.IntN(len(operators))] }

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func (b *builder) pick(alphabet string, n int) string {
	var sb strings.Builder
	for range n {
		sb.WriteByte(alphabet[b.rng.IntN(len(alphabet))])
	}
	return sb.String()
}

// key is a fresh operation id the way agent runners mint them (ULID-ish).
func (b *builder) key(tenant string) string {
	for {
		k := "op_01J" + b.pick(crockford, 12)
		if !b.used[tenant+"/"+k] {
			b.used[tenant+"/"+k] = true
			return k
		}
	}
}

// traceID is a model's tool-call id: recorded, never identity.
func (b *builder) traceID() string {
	if b.rng.IntN(2) == 0 {
		return "toolu_01" + b.pick(alnum, 22)
	}
	return "call_" + b.pick(alnum, 24)
}

func oneOf[T any](b *builder, xs []T) T { return xs[b.rng.IntN(len(xs))] }

var (
	taskSubjects = map[string][]string{
		"acme-support": {"Customer reports a double charge on order #%d", "Refund not received for order #%d",
			"Password reset link expired (ticket %d)", "Check delayed delivery for order #%d",
			"Customer asks to cancel subscription %d", "Warranty claim for order #%d needs photos"},
		"initech-ops": {"Disk usage above 90%% on build-agent-%d", "Rotate the expiring TLS certificate for api-%d",
			"Nightly backup job %d failed, rerun and verify", "Investigate 5xx spike on edge node %d"},
		"umbrella-logistics": {"Shipment UL-%d delayed at the Rotterdam hub", "Damaged pallet reported on delivery UL-%d",
			"Customs documents missing for container UL-%d", "Driver reports a wrong address for delivery UL-%d"},
		"hooli-platform": {"Tenant quota increase request #%d", "Flaky integration test in pipeline %d",
			"On-call handover notes for incident %d"},
	}
	reports = map[string][]string{
		"globex-billing": {"invoice-run", "ar-aging", "revenue-by-plan", "failed-payments", "dunning-queue"},
		"initech-ops":    {"sla-breaches", "capacity-forecast", "incident-review", "cost-by-team"},
		"hooli-platform": {"daily-signups", "churn-cohort", "api-usage-by-tenant", "latency-p99"},
	}
	recipients = map[string][]string{
		"acme-support":       {"dana.kim", "j.morgan", "li.wei", "r.okafor", "s.novak"},
		"globex-billing":     {"ap", "finance-ops", "m.garcia", "billing-alerts"},
		"initech-ops":        {"oncall", "sre-team", "p.gibbons", "m.waddams"},
		"umbrella-logistics": {"dispatch", "h.fischer", "customs-desk", "a.rossi"},
		"hooli-platform":     {"platform-eng", "g.belson", "status-updates"},
	}
	bodies = []string{
		"Your refund of $%d.00 was issued and should arrive within 5 business days.",
		"Your ticket #%d was updated: an agent replied.",
		"Invoice batch %d is ready for review.",
		"Incident %d is resolved; the post-mortem follows tomorrow.",
		"Delivery %d is rescheduled for tomorrow between 9:00 and 12:00.",
		"Your password was reset at your request (ticket %d).",
	}
)

// args is a realistic argument object for bt's tool.
func (b *builder) args(bt batch) string {
	var m map[string]string
	n := 1000 + b.rng.IntN(9000)
	switch bt.tool {
	case task:
		m = map[string]string{"subject": fmt.Sprintf(oneOf(b, taskSubjects[bt.tenant]), n),
			"priority": oneOf(b, []string{"low", "normal", "normal", "high"})}
	case report:
		m = map[string]string{"report": oneOf(b, reports[bt.tenant]),
			"period": fmt.Sprintf("2025-W%02d", 1+b.rng.IntN(26)), "format": oneOf(b, []string{"csv", "pdf", "parquet"})}
	case notify:
		m = map[string]string{"to": oneOf(b, recipients[bt.tenant]) + "@" + strings.SplitN(bt.tenant, "-", 2)[0] + ".example",
			"body": fmt.Sprintf(oneOf(b, bodies), n)}
	}
	out, _ := json.Marshal(m)
	return string(out)
}

// changed is args with one field edited: what an agent sends when it
// regenerates a call under the old key with different intent.
func (b *builder) changed(bt batch, args string) string {
	var m map[string]string
	_ = json.Unmarshal([]byte(args), &m)
	switch bt.tool {
	case task:
		m["priority"] = "urgent"
	case report:
		m["format"] = "xlsx"
	case notify:
		m["body"] += " (updated)"
	}
	out, _ := json.Marshal(m)
	return string(out)
}
