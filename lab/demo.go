package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// The demo ledger: the last 6–8 hours of agent traffic across several
// tenants, built only through the real code paths — reconcile.Service calls
// through the HTTP provider to a `retrysafe sandbox serve` process, with its
// fault switches (demohttp.go), worker processes that really die,
// sweeps and operator decisions — never rows written by hand. Only the
// clock is played (timeline.go): the traffic comes in bursts and quiet
// stretches, retries minutes after their first attempt, decisions a while
// after the unknown they settle. The plan is fixed (and its randomness
// seeded), so the ledger it builds always has the same counts by tenant,
// state and tool; the demo test asserts them.

// InFlightLease is the lease of the demo's in-flight operations: long enough
// that they are still in_progress, lease held, when someone opens the
// console right after `retrysafe demo` (or comes back after lunch). A sweep
// after it ends moves them to unknown, as it would a real crashed worker.
// They are claimed in the timeline's last quarter hour, so their leases
// hold for well over an hour and a half of real time after the build.
const InFlightLease = 2 * time.Hour

// The timeline (on the demo clock): the background ends a minute before
// the build starts — the lab's scenarios, on real time, come after it —
// and each tenant's traffic begins 6–8 hours before that.
const (
	demoEndBeforeBuild = time.Minute
	demoSpanMin        = 6 * time.Hour
	demoSpanMax        = 8 * time.Hour
)

// waitingAges are how long the unknown operations have been waiting for a
// person when the build ends (each a few minutes more, at random): from a
// fresh one to one left since the start of the shift.
var waitingAges = []time.Duration{21 * time.Minute, 48 * time.Minute, 77 * time.Minute,
	2*time.Hour + 5*time.Minute, 3*time.Hour + 20*time.Minute, 4*time.Hour + 50*time.Minute}

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
	fateContradicted       fate = "contradicted"         // delivered, its answer slow; swept, marked not applied on a ticket; the late result contradicts it
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
	// From and To are the background's stretch of the demo clock: its
	// first operation and the moment it ends (before the build began).
	From, To time.Time
	Elapsed  time.Duration
	// HTTPDispatches are the background's delivery requests the demo sent
	// to its `sandbox serve` process (its workers' are not counted).
	HTTPDispatches int
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
	end := start.Add(-demoEndBeforeBuild)
	clock := &demoClock{} // real time until the plan says where it starts
	// The ledger first, without providers: one that holds operations is
	// refused before anything is made beside it.
	pre, err := r.open(ctx, path, OpenOptions{Store: store.Options{Create: true}})
	if err != nil {
		return nil, err
	}
	held, err := pre.Store().Counts(ctx, "")
	pre.Close()
	if err != nil {
		return nil, err
	} else if held.Total > 0 {
		return nil, model.Errorf(model.CodeConflict, "%s already holds %d operations; the demo builds a fresh ledger", path, held.Total)
	}
	// The built-in registry's sandbox providers over providerDB, tied to
	// this ledger (sandbox.Tie): its lookups are evidence about the demo's
	// operations.
	l, err := r.open(ctx, path, OpenOptions{Config: config.Default(), ProviderDB: providerDB,
		Store: store.Options{Now: clock.Now}})
	if err != nil {
		return nil, err
	}
	defer l.Close()
	st := l.Store()
	if l.Sandbox() == nil {
		return nil, model.Errorf(model.CodeInternal, "demo: the built-in registry opened no sandbox provider")
	}
	// The provider file is made and tied; the provider itself is a
	// `retrysafe sandbox serve` process over it, which the background
	// reaches over HTTP (demohttp.go): the demo's dispatches and lookups,
	// and its workers'.
	srv, err := r.startSandboxServer(ctx, providerDB)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	reg, tr, err := demoProviders(srv, clock.Now)
	if err != nil {
		return nil, err
	}
	for name, p := range reg {
		if _, ok := l.Service().Providers[name]; !ok {
			return nil, model.Errorf(model.CodeInternal, "demo: the built-in registry has no provider %q", name)
		}
		l.Service().Providers[name] = p
	}
	b := &builder{
		ctx: ctx, st: st, svc: l.Service(), srv: srv,
		spawn: spawner{r: r, ctx: ctx, ledger: path, providerDB: providerDB, clock: clock.Now},
		rng:   rand.New(rand.NewPCG(2024, 6)),
		used:  map[string]bool{},
		clock: clock, end: end,
		rep: &DemoReport{ByTenantState: map[string]map[model.State]int{},
			ByTenantTool: map[string]map[string]int{}, To: end},
	}
	t0 := time.Now()
	runs := b.schedule()
	clock.startAt(b.rep.From)
	if err := b.play(runs); err != nil {
		return nil, err
	}
	if err := b.verify(); err != nil {
		return nil, err
	}
	b.rep.HTTPDispatches = int(tr.dispatches.Load())
	// The lab's scenarios start servers of their own.
	srv.stop()
	total := 0
	for _, tenant := range DemoTenants() {
		n, first := 0, end
		for _, r := range runs {
			if r.bt.tenant == tenant {
				n += len(finalStates[r.bt.fate])
				if r.first.Before(first) {
					first = r.first
				}
			}
		}
		total += n
		progress(fmt.Sprintf("%-20s %3d operations over the last %s", tenant, n, fmtSpan(start.Sub(first))))
	}
	progress(demoTotalLine(len(DemoTenants()), total, b.rep.From.Local().Format("15:04"), end.Local().Format("15:04"),
		b.rep.HTTPDispatches, time.Since(t0).Round(time.Millisecond)))
	t0 = time.Now()
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
	st    store.Ledger
	svc   *reconcile.Service
	srv   *sandboxServer
	spawn spawner
	rng   *rand.Rand
	used  map[string]bool
	rep   *DemoReport
	clock *demoClock
	end   time.Time // the timeline's end: no step is due after it
	seq   int
}

// schedule plans the background on the timeline: each tenant's everyday
// traffic spread over the last 6–8 hours in bursts, shuffled so failures
// and refusals fall anywhere in it; the operations a person settled an
// hour and a half or more back, so the decision and the call after it fit
// before the end; the unknown ones still waiting at ages from twenty
// minutes to hours; the in-flight ones in the last quarter hour.
func (b *builder) schedule() []*opRun {
	ages := append([]time.Duration(nil), waitingAges...)
	b.rng.Shuffle(len(ages), func(i, j int) { ages[i], ages[j] = ages[j], ages[i] })
	waiting := 0
	var runs []*opRun
	add := func(bt batch, at time.Time) {
		runs = append(runs, &opRun{b: b, bt: bt, at: at, first: at, seq: len(runs)})
	}
	for _, tenant := range DemoTenants() {
		span := between(b.rng, demoSpanMin, demoSpanMax)
		var regular []batch
		for _, bt := range demoPlan {
			if bt.tenant != tenant {
				continue
			}
			for range bt.n {
				switch bt.fate {
				case fateUnknownLost, fateUnknownTimeout, fateUnknownCrash:
					age := ages[waiting%len(ages)] + between(b.rng, 0, 4*time.Minute)
					waiting++
					add(bt, b.end.Add(-age))
				case fateInFlight:
					add(bt, b.end.Add(-between(b.rng, 4*time.Minute, 16*time.Minute)))
				case fateResolvedApplied, fateResolvedNotApplied, fateRetriedNotApplied,
					fateSupersededPending, fateSupersededUsed, fateContradicted:
					add(bt, b.end.Add(-between(b.rng, 90*time.Minute, span)))
				default:
					regular = append(regular, bt)
				}
			}
		}
		b.rng.Shuffle(len(regular), func(i, j int) { regular[i], regular[j] = regular[j], regular[i] })
		for i, at := range arrivals(b.rng, len(regular), b.end.Add(-span), b.end.Add(-between(b.rng, time.Minute, 30*time.Minute))) {
			add(regular[i], at)
		}
	}
	b.rep.From = b.end
	for _, r := range runs {
		if r.at.Before(b.rep.From) {
			b.rep.From = r.at
		}
	}
	return runs
}

// fmtSpan is a stretch of hours as people say it: 7h25m.
func fmtSpan(d time.Duration) string {
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
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

// operation plays one operation of the plan to its fate, waiting on the
// timeline (r.after) between the calls a real agent or operator would not
// make in the same second.
func (b *builder) operation(r *opRun) error {
	if err := b.play1(r); err != nil {
		return fmt.Errorf("demo: %s %s %s: %w", r.bt.tenant, r.bt.tool, r.bt.fate, err)
	}
	return nil
}

func (b *builder) play1(r *opRun) error {
	bt := r.bt
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
		// A runner that timed out on its side, or restarted, retries.
		for range 1 + b.rng.IntN(3) {
			if err := r.after(between(b.rng, 15*time.Second, 10*time.Minute)); err != nil {
				return err
			}
			if _, err := b.call(nil, b.request(bt, key, args), opt, done); err != nil {
				return err
			}
		}
		return nil
	case fateConflict:
		if _, err := b.call(nil, req, opt, done); err != nil {
			return err
		}
		// Later the agent regenerates the call under the old key…
		if err := r.after(between(b.rng, 3*time.Minute, 40*time.Minute)); err != nil {
			return err
		}
		if _, err := b.call(nil, b.request(bt, key, b.changed(bt, args)), opt, model.ClassConflict); err != nil {
			return err
		}
		// … is told, and sends the original.
		return b.callLater(r, 20*time.Second, 3*time.Minute, bt, key, args, opt, done)
	case fateFailed:
		opt.Faults.Reject = true
		if _, err := b.call(nil, req, opt, model.ClassFailed); err != nil {
			return err
		}
		return b.callLater(r, 10*time.Second, 3*time.Minute, bt, key, args, reconcile.CallOptions{}, model.ClassFailed)
	case fateNotApplied:
		opt.Faults.FailBefore = true
		_, err := b.call(nil, req, opt, model.ClassInProgress)
		return err
	case fateUnknownLost, fateUnknownTimeout:
		var err error
		if bt.fate == fateUnknownLost {
			err = b.lostReply(req, opt)
		} else {
			err = b.timeout(req, opt)
		}
		if err == nil {
			b.rep.Unknown = append(b.rep.Unknown, bt.tenant+"/"+key)
		}
		return err
	case fateUnknownCrash:
		o, err := b.worker(call{tenant: bt.tenant, key: key, tool: bt.tool, args: args, provider: bt.provider,
			trace: req.TraceID, lease: time.Minute, dieAt: reconcile.PointAfterDispatch, how: DieKill})
		if err != nil {
			return err
		}
		if !o.Killed {
			return fmt.Errorf("worker was to die after dispatch, got %s", o)
		}
		// The lease ends; the next periodic `retrysafe sweep` turns it
		// unknown.
		if err := r.after(between(b.rng, 2*time.Minute, 5*time.Minute)); err != nil {
			return err
		}
		if _, err := b.svc.Sweep(b.ctx); err != nil {
			return err
		}
		b.rep.Unknown = append(b.rep.Unknown, bt.tenant+"/"+key)
		return nil
	case fateResolvedApplied:
		if err := b.lostReply(req, opt); err != nil {
			return err
		}
		// The on-call engineer gets to it, looks the delivery up and decides.
		ev, err := b.checkLater(r, 12*time.Minute, 70*time.Minute, bt.tenant, key)
		if err != nil {
			return err
		}
		if _, err := b.svc.MarkApplied(b.ctx, b.decide(reconcile.Decision{Tenant: bt.tenant, Key: key, Operator: b.operator(),
			Reason: "sandbox lookup shows the message was delivered; the reply was lost on the way back", Evidence: ev.Ref})); err != nil {
			return err
		}
		// The agent, unblocked, retries and gets the receipt.
		err = b.callLater(r, time.Minute, 8*time.Minute, bt, key, args, opt, done)
		return err
	case fateResolvedNotApplied, fateRetriedNotApplied:
		if err := b.timeout(req, opt); err != nil {
			return err
		}
		ev, err := b.checkLater(r, 12*time.Minute, 70*time.Minute, bt.tenant, key)
		if err != nil {
			return err
		}
		if _, err := b.svc.MarkNotApplied(b.ctx, b.decide(reconcile.Decision{Tenant: bt.tenant, Key: key, Operator: b.operator(),
			Reason:   "the provider timed out before accepting; its lookup has no delivery and its status page confirms the request was dropped",
			Evidence: ev.Detail + "; provider incident INC-4471"})); err != nil {
			return err
		}
		if bt.fate == fateRetriedNotApplied {
			err = b.callLater(r, time.Minute, 8*time.Minute, bt, key, args, opt, done)
		}
		return err
	case fateSupersededPending, fateSupersededUsed:
		if err := b.timeout(req, opt); err != nil {
			return err
		}
		// The operator asks the customer first: it takes a while.
		ev, err := b.checkLater(r, 25*time.Minute, 80*time.Minute, bt.tenant, key)
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
			if err := r.after(between(b.rng, 2*time.Minute, 10*time.Minute)); err != nil {
				return err
			}
			if _, err := b.call(nil, b.request(bt, newKey, args), opt, done); err != nil {
				return err
			}
			// The agent, not yet told, retries the old key: it learns the new one.
			err = b.callLater(r, 30*time.Second, 4*time.Minute, bt, key, args, opt, model.ClassSuperseded)
		}
		return err
	case fateContradicted:
		return b.contradicted(r, req)
	case fateIdemRedispatch:
		opt.Faults.LoseReply = true
		if _, err := b.call(nil, req, opt, model.ClassInProgress); err != nil {
			return err
		}
		// The runner's own backoff: seconds, not minutes.
		return b.callLater(r, 3*time.Second, 40*time.Second, bt, key, args, reconcile.CallOptions{}, done)
	case fateInFlight:
		o, err := b.worker(call{tenant: bt.tenant, key: key, tool: bt.tool, args: args, provider: bt.provider,
			trace: req.TraceID, lease: InFlightLease, dieAt: reconcile.PointAfterClaim, how: DieKill})
		if err != nil {
			return err
		}
		if !o.Killed {
			return fmt.Errorf("worker was to die after its claim, got %s", o)
		}
		// Another runner's retry arrives while the lease holds.
		if err := r.after(between(b.rng, 20*time.Second, 2*time.Minute)); err != nil {
			return err
		}
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

// worker runs c in a worker process that reaches the demo's sandbox
// server, its deliveries dated at the played moment it starts.
func (b *builder) worker(c call) (outcome, error) {
	cfg, err := b.srv.workerConfig(b.clock.Now())
	if err != nil {
		return outcome{}, err
	}
	x := b.spawn
	x.config = cfg
	return x.call(c)
}

// lostReply: the provider delivers, the reply is lost: unknown.
func (b *builder) lostReply(req model.Request, opt reconcile.CallOptions) error {
	opt.Faults.LoseReply = true
	_, err := b.call(nil, req, opt, model.ClassUnknown)
	return err
}

// timeout: the provider is slower than the dispatch deadline; nothing is
// delivered, and nobody can know that yet: unknown.
func (b *builder) timeout(req model.Request, opt reconcile.CallOptions) error {
	short := reconcile.New(b.st, b.svc.Tools, b.svc.Providers)
	short.DispatchTimeout = 100 * time.Millisecond
	opt.Faults.Delay = time.Second
	_, err := b.call(short, req, opt, model.ClassUnknown)
	return err
}

// contradicted: the article's warning, played out. The provider took the
// request, but its answer is slower than the claim's lease; the sweep
// calls it unknown and an operator, going by a ticket instead of a
// lookup, marks it not applied. Then the answer arrives: its late result
// is recorded and flags the operation contradicted. The answer hangs on
// the timeline, minutes, while the rest of the traffic goes on. (A
// request that has not left when its lease ends is never sent: a lookup
// that found nothing then is the truth.)
func (b *builder) contradicted(r *opRun, req model.Request) error {
	slow := reconcile.New(b.st, b.svc.Tools, b.svc.Providers)
	slow.Lease = 30 * time.Second
	var hookErr error
	slow.At = func(p reconcile.Point) {
		if p != reconcile.PointAfterDispatch {
			return
		}
		// The lease ends; the periodic sweep comes round.
		if hookErr = r.after(between(b.rng, 45*time.Second, 2*time.Minute)); hookErr != nil {
			return
		}
		if _, err := b.svc.Sweep(b.ctx); err != nil {
			hookErr = err
			return
		}
		// An operator picks it up and goes by the provider's status
		// page instead of a lookup.
		if hookErr = r.after(between(b.rng, 4*time.Minute, 9*time.Minute)); hookErr != nil {
			return
		}
		if _, hookErr = b.svc.MarkNotApplied(b.ctx, b.decide(reconcile.Decision{Tenant: req.Tenant, Key: req.Key, Operator: b.operator(),
			Reason: "the provider's status page says the batch was dropped", Evidence: "INC-5120: provider incident, batch dropped"})); hookErr != nil {
			return
		}
		// The provider's answer finally arrives.
		hookErr = r.after(between(b.rng, 2*time.Minute, 5*time.Minute))
	}
	res, err := slow.Call(b.ctx, req, reconcile.CallOptions{Provider: r.bt.provider})
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

// verify checks what the timeline left: every operation meant to wait for
// a person is unknown, every in-flight one still holds its lease, and the
// clock never passed real time.
func (b *builder) verify() error {
	for _, tk := range b.rep.Unknown {
		tenant, key, _ := strings.Cut(tk, "/")
		op, err := b.st.Get(b.ctx, tenant, key)
		if err != nil {
			return err
		}
		if op.State != model.StateUnknown {
			return fmt.Errorf("demo: %s should be unknown, waiting for a person, is %s", tk, op.State)
		}
	}
	for _, tk := range b.rep.InFlight {
		tenant, key, _ := strings.Cut(tk, "/")
		op, err := b.st.Get(b.ctx, tenant, key)
		if err != nil {
			return err
		}
		if op.State != model.StateInProgress || time.Until(op.LeaseUntil) < time.Hour {
			return fmt.Errorf("demo: %s should be in flight for an hour yet, is %s, lease until %s", tk, op.State, op.LeaseUntil)
		}
	}
	if now := b.clock.Now(); now.After(time.Now()) {
		return fmt.Errorf("demo: the clock ran ahead of real time (%s)", now)
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

// callLater waits between lo and hi on the demo clock, then calls key
// again: an agent's retry, or its first call with a new key.
func (b *builder) callLater(r *opRun, lo, hi time.Duration, bt batch, key, args string, opt reconcile.CallOptions, want model.Class) error {
	if err := r.after(between(b.rng, lo, hi)); err != nil {
		return err
	}
	_, err := b.call(nil, b.request(bt, key, args), opt, want)
	return err
}

// checkLater waits between lo and hi on the demo clock — the on-call
// engineer getting to it — then asks the provider about the operation.
func (b *builder) checkLater(r *opRun, lo, hi time.Duration, tenant, key string) (provider.Evidence, error) {
	if err := r.after(between(b.rng, lo, hi)); err != nil {
		return provider.Evidence{}, err
	}
	_, ev, err := b.svc.Check(b.ctx, tenant, key)
	return ev, err
}

// demoTotalLine is the line under the tenants' own: their total (it
// read "background 291 operations", as if 291 more), and how they were
// played.
func demoTotalLine(tenants, total int, from, to string, dispatches int, took time.Duration) string {
	return fmt.Sprintf("%-20s %3d operations in total, played on the demo clock %s to %s, %d deliveries over HTTP to sandbox serve  (%s)",
		fmt.Sprintf("all %d tenants", tenants), total, from, to, dispatches, took)
}
