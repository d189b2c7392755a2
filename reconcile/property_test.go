package reconcile_test

// A state-machine property test: random calls (random keys, arguments,
// providers and faults), worker deaths at every Point, clock jumps, sweeps,
// operator decisions and late worker results, run against the real service
// on a real ledger and checked after every step against a small model and
// four invariants:
//
//   - at most one effect per applied operation;
//   - no effect without its operation;
//   - a stored receipt never changes;
//   - nothing leaves unknown except by an operator decision;
//   - a triage run records findings that agree with the provider and
//     changes no operation's state or version.
//
// 100 checks of ~30 steps by default (-rapid.checks, -rapid.steps for more).

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

const (
	propLease  = 30 * time.Second
	propReplay = time.Hour
	propTomb   = 3 * time.Hour
)

type propOp struct {
	tenant, key  string
	tool         string
	variant      int
	provider     string // "" for a local tool
	state        model.State
	leaseUntil   time.Time
	expiresAt    time.Time
	contradicted bool
	newKey       string // superseded: the key that replaced it
	base         int    // deliveries under its downstream key before it existed
	lateRef      bool   // a late "applied" put the provider's reference on it
	lid          string // the ledger's id, which its downstream key names
	// resend: the current claim was taken from in_progress (released, or
	// its lease ended): an earlier request may have reached the provider.
	resend bool
	// claimed: a call claimed it at least once (a new key marked applied
	// on the key it replaced never was).
	claimed bool
}

func (o *propOp) dk() string { return reconcile.DownstreamKey(o.lid, o.tenant, o.key) }

// req names o's request at its provider: provider, downstream key, and
// what it asks (tool and variant).
func (o *propOp) req() string {
	return fmt.Sprintf("%s %s %s %d", o.provider, o.dk(), o.tool, o.variant)
}

// holds is the finding a lookup of o's downstream key gives (by what the
// provider holds): its own request, another one, or nothing.
func (m *propMachine) holds(o *propOp) model.FindingKind {
	switch {
	case m.byReq[o.req()] > 0:
		return model.FindingHasIt
	case m.byProv[o.provider+" "+o.dk()] > 0:
		return model.FindingHasOther
	}
	return model.FindingHasNothing
}
func (o *propOp) id() string { return o.tenant + "/" + o.key }
func (o *propOp) honours() bool {
	return o.provider == "sandbox-idem"
}

type propMachine struct {
	t      *testing.T
	l      *ledger
	lid    string // the ledger's id
	clk    *clock
	ops    map[string]*propOp
	tombs  map[string]time.Time // tenant/key → forget at
	dk     map[string]int       // deliveries per downstream key
	byProv map[string]int       // deliveries per provider and downstream key
	// byReq counts deliveries per provider, downstream key and request
	// (variant): the sandbox answers a lookup about the operation's own
	// request, and another request under the key is "has another request".
	byReq  map[string]int
	tasks  int               // local effects ever made (compaction keeps them)
	stored map[string]string // receipts as first stored
	prev   map[string]model.State
	// decided is the key an operator decided on in this step, if any.
	decided map[string]bool
	fresh   int
}

var propTools = []string{"create_support_task", "send_notification"}

func propArgs(tool string, variant int) []byte {
	if tool == "create_support_task" {
		return mustJSON(map[string]string{"subject": fmt.Sprintf("subject %d", variant)})
	}
	return mustJSON(map[string]string{"to": "a@example.com", "body": fmt.Sprintf("body %d", variant)})
}

func (m *propMachine) now() time.Time { return m.clk.Now() }

// ---- the model ----------------------------------------------------------

// prediction is what the model expects of one call.
type prediction struct {
	class  model.Class
	newKey string
	claims bool // the call takes the operation and dispatches (or applies)
}

func (m *propMachine) predict(tenant, key, tool string, variant int) prediction {
	id := tenant + "/" + key
	op := m.ops[id]
	now := m.now()
	if op == nil {
		if forget, ok := m.tombs[id]; ok && forget.After(now) {
			return prediction{class: model.ClassExpired}
		}
		return prediction{claims: true}
	}
	if op.tool != tool || op.variant != variant {
		return prediction{class: model.ClassConflict}
	}
	if (op.state == model.StateApplied || op.state == model.StateFailed) && !now.Before(op.expiresAt) {
		return prediction{class: model.ClassExpired}
	}
	switch op.state {
	case model.StateApplied:
		return prediction{class: model.ClassDone}
	case model.StateFailed:
		if op.contradicted {
			// The provider says it applied it: not "rejected for good".
			return prediction{class: model.ClassUnknown}
		}
		return prediction{class: model.ClassFailed}
	case model.StateUnknown:
		return prediction{class: model.ClassUnknown}
	case model.StateSuperseded:
		return prediction{class: model.ClassSuperseded, newKey: op.newKey}
	case model.StateInProgress:
		if now.Before(op.leaseUntil) {
			return prediction{class: model.ClassInProgress}
		}
		if !op.honours() {
			return prediction{class: model.ClassUnknown} // the lease ended: unknown
		}
		return prediction{claims: true}
	}
	if op.state == model.StateNotApplied && op.contradicted && !op.honours() {
		// A provider answer said applied: no second dispatch.
		return prediction{class: model.ClassUnknown}
	}
	if op.state == model.StateAuthorized && op.contradicted {
		// The key it replaced was applied after all: its own downstream
		// key would be a second effect, whatever the provider.
		return prediction{class: model.ClassUnknown}
	}
	return prediction{claims: true} // not_applied, authorized
}

// claim applies a claiming call's transaction A (or, for a local tool, the
// whole call) to the model and returns the operation.
func (m *propMachine) claim(tenant, key, tool string, variant int, prov string) *propOp {
	id := tenant + "/" + key
	op := m.ops[id]
	if op == nil {
		op = &propOp{tenant: tenant, key: key, tool: tool, variant: variant, lid: m.lid}
		if tool != "create_support_task" {
			op.provider = prov
			if op.provider == "" {
				op.provider = "sandbox"
			}
		}
		op.base = m.dk[op.dk()]
		m.ops[id] = op
		delete(m.tombs, id)
	}
	if op.provider == "" {
		op.state, op.expiresAt = model.StateApplied, m.now().Add(propReplay)
		m.tasks++
		return op
	}
	op.resend = op.state == model.StateInProgress
	op.state, op.leaseUntil, op.claimed = model.StateInProgress, m.now().Add(propLease), true
	return op
}

// deliver is the provider applying (or not) one dispatch of op.
func (m *propMachine) deliver(op *propOp, f provider.Faults) (status provider.Status, ambiguous bool) {
	// The honouring provider remembers its own deliveries by key (not the
	// other provider's, though both share the sandbox file).
	if op.honours() && m.byProv[op.provider+" "+op.dk()] > 0 {
		return provider.Applied, f.LoseReply // the first result, whatever this request met
	}
	switch {
	case f.FailBefore:
		return provider.NotApplied, false
	case f.Reject:
		return provider.Rejected, false
	}
	m.dk[op.dk()]++
	m.byProv[op.provider+" "+op.dk()]++
	m.byReq[op.req()]++
	return provider.Applied, f.LoseReply
}

// record is transaction B for a claim still held.
func (m *propMachine) record(op *propOp, status provider.Status, ambiguous bool) model.Class {
	op.leaseUntil = time.Time{}
	switch {
	case ambiguous && op.honours():
		op.leaseUntil = m.now() // released: the next call re-dispatches at once
		return model.ClassInProgress
	case ambiguous:
		op.state = model.StateUnknown
		return model.ClassUnknown
	case status == provider.Applied:
		// The ledger agrees with the provider now: settled.
		op.state, op.expiresAt, op.contradicted = model.StateApplied, m.now().Add(propReplay), false
		return model.ClassDone
	case status == provider.Rejected:
		op.state, op.expiresAt = model.StateFailed, m.now().Add(propReplay)
		return model.ClassFailed
	case op.resend && op.honours():
		// "Nothing applied" to a re-send speaks of the re-send only: the
		// earlier request's outcome is still open, the claim released.
		op.leaseUntil = m.now()
		return model.ClassInProgress
	case op.resend:
		op.state = model.StateUnknown
		return model.ClassUnknown
	default:
		op.state = model.StateNotApplied
		return model.ClassInProgress
	}
}

// late is transaction B arriving after the claim moved on.
func (m *propMachine) late(op *propOp, status provider.Status, ambiguous bool) model.Class {
	if !ambiguous {
		applied := status == provider.Applied
		switch op.state {
		case model.StateApplied:
			op.contradicted = op.contradicted || !applied
		case model.StateSuperseded:
			if applied && !op.contradicted {
				// Its new key, not used yet, is held too.
				if n := m.ops[op.tenant+"/"+op.newKey]; n != nil && n.state == model.StateAuthorized {
					n.contradicted = true
				}
			}
			op.contradicted = op.contradicted || applied
		case model.StateNotApplied, model.StateAuthorized, model.StateFailed:
			op.contradicted = op.contradicted || applied
		case model.StateUnknown, model.StateInProgress:
			// Waiting on a person (an in_progress one whose claim moved
			// on may be unheld): the reference goes on the operation.
			op.lateRef = op.lateRef || applied
		}
	}
	switch op.state {
	case model.StateApplied:
		return model.ClassDone
	case model.StateFailed:
		if op.contradicted {
			return model.ClassUnknown // the provider says it applied it
		}
		return model.ClassFailed
	case model.StateSuperseded:
		return model.ClassSuperseded
	case model.StateUnknown:
		return model.ClassUnknown
	case model.StateNotApplied:
		if op.contradicted && !op.honours() {
			return model.ClassUnknown
		}
	}
	return model.ClassInProgress
}

// sweep is Service.Sweep on the model: leases, then compaction.
func (m *propMachine) sweep() {
	now := m.now()
	for _, op := range m.sorted() {
		if op.state != model.StateInProgress || !op.leaseUntil.Before(now) {
			continue
		}
		if !op.honours() {
			op.state, op.leaseUntil = model.StateUnknown, time.Time{}
			continue
		}
		op.resend = true
		st, amb := m.deliver(op, provider.Faults{})
		m.record(op, st, amb)
	}
	for _, op := range m.sorted() {
		if (op.state != model.StateApplied && op.state != model.StateFailed) || op.expiresAt.After(now) || op.contradicted {
			continue // a contradicted one waits for a person
		}
		// The operation and the chain it superseded become tombstones.
		for chain := []*propOp{op}; len(chain) > 0; {
			var next []*propOp
			for _, c := range chain {
				if _, ok := m.ops[c.id()]; !ok {
					continue
				}
				delete(m.ops, c.id())
				delete(m.stored, c.id())
				if _, had := m.tombs[c.id()]; !had || c == op {
					m.tombs[c.id()] = now.Add(propTomb)
				}
				for _, p := range m.ops {
					if p.state == model.StateSuperseded && p.tenant == c.tenant && p.newKey == c.key {
						next = append(next, p)
					}
				}
			}
			chain = next
		}
	}
	for id, forget := range m.tombs {
		if !forget.After(now) {
			delete(m.tombs, id)
		}
	}
}

func (m *propMachine) sorted() []*propOp {
	var out []*propOp
	for _, k := range sortedKeys(m.ops) {
		out = append(out, m.ops[k])
	}
	return out
}

// ---- the steps ----------------------------------------------------------

type callDraw struct {
	tenant, key, tool string
	variant           int
	prov              string
	faults            provider.Faults
}

func (m *propMachine) drawCall(t *rapid.T) callDraw {
	keys := []string{"k1", "k2", "k3"}
	for _, op := range m.ops {
		if op.state == model.StateAuthorized || op.state == model.StateSuperseded {
			keys = append(keys, op.key)
		}
	}
	sortStrings(keys)
	c := callDraw{
		tenant:  rapid.SampledFrom([]string{"a", "b"}).Draw(t, "tenant"),
		key:     rapid.SampledFrom(keys).Draw(t, "key"),
		tool:    rapid.SampledFrom(propTools).Draw(t, "tool"),
		variant: rapid.IntRange(0, 1).Draw(t, "variant"),
		prov:    rapid.SampledFrom([]string{"sandbox", "sandbox-idem"}).Draw(t, "provider"),
	}
	// An existing operation is mostly called as it was first made, so
	// replays and claims happen as often as conflicts.
	if op := m.ops[c.tenant+"/"+c.key]; op != nil && rapid.IntRange(0, 3).Draw(t, "same request") > 0 {
		c.tool, c.variant = op.tool, op.variant
	}
	switch rapid.IntRange(0, 5).Draw(t, "fault") {
	case 1:
		c.faults.LoseReply = true
	case 2:
		c.faults.FailBefore = true
	case 3:
		c.faults.Reject = true
	}
	return c
}

func (c callDraw) request() model.Request {
	return model.Request{Tenant: c.tenant, Key: c.key, Tool: c.tool, PayloadVersion: 1, Args: propArgs(c.tool, c.variant), WorkerID: "prop"}
}

// do runs one call on the service, with hook as its At (nil for none); died
// reports that the hook stopped the worker.
func (m *propMachine) do(t *rapid.T, c callDraw, hook func(reconcile.Point)) (res reconcile.Result, died bool) {
	m.l.svc.At = hook
	defer func() {
		m.l.svc.At = nil
		if v := recover(); v != nil {
			if _, ok := v.(crash); !ok {
				panic(v)
			}
			died = true
		}
	}()
	res, err := m.l.svc.Call(context.Background(), c.request(), reconcile.CallOptions{Provider: c.prov, Faults: c.faults})
	if err != nil {
		// A death inside a combined (attempt-only) transaction comes back
		// as that transaction's error rather than as the panic itself.
		if strings.Contains(err.Error(), "panicked") && strings.Contains(err.Error(), "crash") {
			return res, true
		}
		t.Fatalf("Call(%+v): %v", c, err)
	}
	return res, false
}

func (m *propMachine) checkClass(t *rapid.T, what string, res reconcile.Result, want model.Class, newKey string) {
	if res.Class != want {
		t.Fatalf("%s: class %s (%s: %s), model expects %s", what, res.Class, res.Outcome, res.Message, want)
	}
	if want == model.ClassSuperseded && newKey != "" && res.NewKey != newKey {
		t.Fatalf("%s: superseded, told new key %q, want %q", what, res.NewKey, newKey)
	}
}

func (m *propMachine) Call(t *rapid.T) {
	c := m.drawCall(t)
	p := m.predict(c.tenant, c.key, c.tool, c.variant)
	res, _ := m.do(t, c, nil)
	what := fmt.Sprintf("call %+v", c)
	if !p.claims {
		m.expire(c)
		m.checkClass(t, what, res, p.class, p.newKey)
		return
	}
	op := m.claim(c.tenant, c.key, c.tool, c.variant, c.prov)
	if op.provider == "" {
		m.checkClass(t, what, res, model.ClassDone, "")
		return
	}
	st, amb := m.deliver(op, c.faults)
	m.checkClass(t, what, res, m.record(op, st, amb), "")
}

// expire applies the one side effect of a refusing call: an in_progress
// operation whose lease ended under a provider that ignores keys becomes
// unknown when a call finds it.
func (m *propMachine) expire(c callDraw) {
	op := m.ops[c.tenant+"/"+c.key]
	if op != nil && op.tool == c.tool && op.variant == c.variant && op.state == model.StateInProgress &&
		!m.now().Before(op.leaseUntil) && !op.honours() {
		op.state, op.leaseUntil = model.StateUnknown, time.Time{}
	}
}

// Crash: a worker dies at a Point. Before commit nothing of the call stays;
// after commit the call stays and only the reply is lost; after the claim
// the operation is in_progress with nothing sent; after the dispatch the
// provider holds the effect and the ledger does not know.
func (m *propMachine) Crash(t *rapid.T) {
	c := m.drawCall(t)
	local := c.tool == "create_support_task"
	points := []reconcile.Point{reconcile.PointAfterClaim, reconcile.PointAfterDispatch}
	if local {
		points = []reconcile.Point{reconcile.PointBeforeCommit, reconcile.PointAfterCommit}
	}
	point := rapid.SampledFrom(points).Draw(t, "point")
	p := m.predict(c.tenant, c.key, c.tool, c.variant)
	res, died := m.do(t, c, func(at reconcile.Point) {
		if at == point {
			panic(crash{at})
		}
	})
	what := fmt.Sprintf("call %+v dying at %s", c, point)
	switch {
	case local && point == reconcile.PointBeforeCommit:
		if !died {
			t.Fatalf("%s: the worker did not die", what)
		}
		// Rolled back, whatever it was: the model does not move.
	case local:
		if !died {
			t.Fatalf("%s: the worker did not die", what)
		}
		if p.claims {
			m.claim(c.tenant, c.key, c.tool, c.variant, c.prov)
		} else {
			m.expire(c)
		}
	case !p.claims:
		if died {
			t.Fatalf("%s: a refused call reached a dispatch point", what)
		}
		m.expire(c)
		m.checkClass(t, what, res, p.class, p.newKey)
	default:
		if !died {
			t.Fatalf("%s: the worker did not die", what)
		}
		op := m.claim(c.tenant, c.key, c.tool, c.variant, c.prov)
		if point == reconcile.PointAfterDispatch {
			m.deliver(op, c.faults)
		}
	}
}

// Late: a worker's answer arrives after the lease ended, a sweep made the
// operation unknown — or no sweep came, and it is still in_progress,
// nobody holding it (R6 D3) — and an operator decided on what the
// provider showed. Or the worker slept after its claim, past its lease,
// and wakes to find the operation decided: it sends nothing.
func (m *propMachine) Late(t *rapid.T) {
	c := m.drawCall(t)
	c.tool, c.prov = "send_notification", "sandbox"
	if op := m.ops[c.tenant+"/"+c.key]; op != nil {
		c.tool, c.variant = op.tool, op.variant
		if op.provider != "sandbox" {
			return // an honouring provider's claim is re-sent by the sweep instead
		}
	}
	p := m.predict(c.tenant, c.key, c.tool, c.variant)
	if !p.claims {
		return
	}
	// Mostly the operator decides before the answer lands; sometimes the
	// answer lands while the operation is still unknown.
	decides := rapid.IntRange(0, 3).Draw(t, "operator decides") > 0
	authorize := rapid.Bool().Draw(t, "authorize")
	sweeps := rapid.IntRange(0, 2).Draw(t, "a sweep comes first") > 0
	sleeps := decides && !sweeps && rapid.IntRange(0, 2).Draw(t, "the worker sleeps after its claim") == 0
	point := reconcile.PointAfterDispatch
	if sleeps {
		point = reconcile.PointAfterClaim
	}
	op := m.claim(c.tenant, c.key, c.tool, c.variant, c.prov)
	st, amb := provider.Status(""), true // nothing sent: no answer
	if !sleeps {
		st, amb = m.deliver(op, c.faults)
	}
	effect := m.dk[op.dk()] > op.base
	var decideErr error
	res, died := m.do(t, c, func(at reconcile.Point) {
		if at != point {
			return
		}
		m.l.svc.At = nil
		m.clk.Advance(propLease + time.Second)
		if sweeps {
			if _, err := m.l.svc.Sweep(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if !decides {
			return
		}
		cur := m.l.op(c.tenant, c.key)
		d := decision(cur)
		d.Evidence = "provider console"
		if bound := cur.BindingFinding; authorize && bound != nil && bound.Kind == model.FindingHasIt {
			// A recorded "has it" binds the decision: a new key would be
			// the effect a second time (refused, rightly). The person
			// marks it applied instead, as the provider shows.
			authorize = false
		}
		switch {
		case authorize:
			m.fresh++
			d.NewKey = fmt.Sprintf("n%d", m.fresh)
			_, _, decideErr = m.l.svc.AuthorizeNewKey(context.Background(), d)
		case effect:
			_, decideErr = m.l.svc.MarkApplied(context.Background(), d)
		default:
			_, decideErr = m.l.svc.MarkNotApplied(context.Background(), d)
		}
	})
	if died || decideErr != nil {
		t.Fatalf("late %+v: died %v, decision %v", c, died, decideErr)
	}
	if sweeps {
		m.sweep() // the sweep inside the hook, on everything
	}
	if decides {
		m.decided[op.id()] = true
	}
	if !decides && !sweeps {
		// Nobody moved the claim on: the answer is the claim's own, even
		// past its lease.
		m.checkClass(t, fmt.Sprintf("late %+v", c), res, m.record(op, st, amb), "")
		return
	}
	switch {
	case !decides:
	case authorize:
		m.supersede(op, fmt.Sprintf("n%d", m.fresh))
	case effect:
		op.state, op.expiresAt = model.StateApplied, m.now().Add(propReplay)
	default:
		op.state = model.StateNotApplied
	}
	m.checkClass(t, fmt.Sprintf("late %+v", c), res, m.late(op, st, amb), "")
}

func (m *propMachine) supersede(op *propOp, newKey string) {
	// The new key is the person's decision on a contradiction: settled.
	op.state, op.newKey, op.leaseUntil, op.contradicted = model.StateSuperseded, newKey, time.Time{}, false
	n := &propOp{tenant: op.tenant, key: newKey, tool: op.tool, variant: op.variant, provider: op.provider, state: model.StateAuthorized, lid: op.lid}
	n.base = m.dk[n.dk()]
	m.ops[n.id()] = n
}

func (m *propMachine) Advance(t *rapid.T) {
	d := rapid.SampledFrom([]time.Duration{time.Second, 10 * time.Second, propLease + time.Second, 10 * time.Minute,
		propReplay + time.Minute, propTomb + time.Minute}).Draw(t, "advance")
	m.clk.Advance(d)
}

func (m *propMachine) Sweep(t *rapid.T) {
	if _, err := m.l.svc.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	m.sweep()
}

// Decide: an operator decision on a drawn key — legal or not, on a fresh
// or a stale view — always truthful about the provider (the guarantees
// hold for operators who decide on evidence).
func (m *propMachine) Decide(t *rapid.T) {
	ids := sortedKeys(m.ops)
	if len(ids) == 0 {
		return
	}
	op := m.ops[rapid.SampledFrom(ids).Draw(t, "operation")]
	action := rapid.SampledFrom(model.AllActions).Draw(t, "action")
	stale := rapid.IntRange(0, 4).Draw(t, "stale") == 0
	effect := m.dk[op.dk()] > op.base
	// An in_progress operation nobody holds (its claim released, its
	// lease ended) is decided as an unknown one is (R6 D3).
	unheld := op.state == model.StateInProgress && !m.now().Before(op.leaseUntil)
	if op.provider != "" && (op.state == model.StateUnknown || unheld) &&
		((action == model.ActionMarkApplied && !effect) || (action == model.ActionMarkNotApplied && effect)) {
		return // an untruthful decision: outside what the ledger can guarantee
	}
	det := m.l.detail(op.tenant, op.key)
	cur := &det.Operation
	d := decision(cur)
	if stale && cur.Version > 1 {
		d.ExpectVersion--
	} else {
		stale = false
	}
	newKey := ""
	if action == model.ActionAuthorizeKey {
		m.fresh++
		newKey = fmt.Sprintf("n%d", m.fresh)
		if rapid.IntRange(0, 5).Draw(t, "taken key") == 0 {
			newKey = rapid.SampledFrom([]string{"k1", "k2", "k3"}).Draw(t, "taken")
		}
		d.NewKey = newKey
	}
	// A recorded finding (a triage run's) binds the decision: against it,
	// only the explicit second confirmation passes. The provider may hold
	// an effect under this key from before the operation existed (a
	// forgotten key made again), so the finding can differ from effect.
	d.Override = rapid.Bool().Draw(t, "second confirmation")
	against := !d.Override && reconcile.Against(action, reconcile.EvidenceOf(bindingFinding(cur.Provider, det.Attempts)))
	// The latest lookup found another request under the key (of the key
	// it replaced, for a new key not yet used): "mark applied" is refused,
	// with or without the second confirmation.
	other := false
	if action == model.ActionMarkApplied {
		asked := det
		if cur.State == model.StateAuthorized && cur.SupersedesID != 0 {
			for _, o := range m.ops {
				if o.state == model.StateSuperseded && o.newKey == op.key && o.tenant == op.tenant {
					asked = m.l.detail(o.tenant, o.key)
				}
			}
		}
		f := model.LatestFinding(asked.Operation.Provider, asked.Attempts)
		other = f != nil && f.Kind == model.FindingHasOther
	}
	err := m.l.decide(action, d)
	to, legal := legalDecisions[op.state][action]
	if unheld {
		to, legal = legalDecisionsUnheld[action]
	}
	if op.contradicted && action == model.ActionMarkApplied && (op.state == model.StateNotApplied || op.state == model.StateFailed || op.state == model.StateAuthorized) {
		// The provider said it applied (the key this one replaced, for
		// an authorized one): marking it applied agrees.
		to, legal = model.StateApplied, true
	} else if op.contradicted && op.state == model.StateAuthorized {
		to, legal = "", false
	} else if op.contradicted && op.state == model.StateApplied && action == model.ActionAuthorizeKey {
		// A late answer disagrees with its receipt: a new key, against
		// the receipt, with the second confirmation.
		to, legal = model.StateSuperseded, true
		against = against || !d.Override
	}
	_, taken := m.ops[op.tenant+"/"+newKey]
	if forget, ok := m.tombs[op.tenant+"/"+newKey]; ok && forget.After(m.now()) {
		taken = true
	}
	switch {
	case action == model.ActionAuthorizeKey && newKey == op.key:
		if !model.IsCode(err, model.CodeInvalid) {
			t.Fatalf("authorize %s → its own key: %v; want CodeInvalid", op.id(), err)
		}
	case stale:
		if !model.IsCode(err, model.CodeStale) {
			t.Fatalf("%s on %s from a stale view: %v; want CodeStale", action, op.id(), err)
		}
	case !legal:
		if !model.IsCode(err, model.CodeIllegal) {
			t.Fatalf("%s on %s (%s): %v; want CodeIllegal", action, op.id(), op.state, err)
		}
	case other:
		if !model.IsCode(err, model.CodeIllegal) || !strings.Contains(err.Error(), "different request") {
			t.Fatalf("mark applied on %s whose latest lookup found another request: %v; want CodeIllegal", op.id(), err)
		}
	case against:
		if !model.IsCode(err, model.CodeIllegal) {
			t.Fatalf("%s on %s against its finding %+v without the second confirmation: %v; want CodeIllegal", action, op.id(), cur.Finding, err)
		}
	case action == model.ActionAuthorizeKey && taken:
		if !model.IsCode(err, model.CodeConflict) {
			t.Fatalf("authorize %s → existing key %s: %v; want CodeConflict", op.id(), newKey, err)
		}
	default:
		if err != nil {
			t.Fatalf("%s on %s (%s): %v", action, op.id(), op.state, err)
		}
		m.decided[op.id()] = true
		switch action {
		case model.ActionAuthorizeKey:
			m.supersede(op, newKey)
		case model.ActionMarkApplied:
			if op.state == model.StateAuthorized {
				for _, o := range m.ops {
					if o.state == model.StateSuperseded && o.newKey == op.key && o.tenant == op.tenant {
						o.contradicted = false
					}
				}
			}
			if op.state == model.StateFailed {
				// The stored failure was not the truth: its receipt is
				// replaced by the one marking it applied (once).
				delete(m.stored, op.id())
			}
			op.state, op.expiresAt, op.leaseUntil = to, m.now().Add(propReplay), time.Time{}
			op.contradicted = false
		case model.ActionMarkNotApplied:
			op.state, op.leaseUntil = to, time.Time{}
			op.contradicted = op.contradicted || op.lateRef
		}
	}
}

// Triage: a triage run over the whole ledger. Every operation keeps its
// state and version (a finding is never a decision), each candidate gets a
// finding, and the finding says what the provider holds.
func (m *propMachine) Triage(t *rapid.T) {
	ctx := context.Background()
	before, err := m.l.st.List(ctx, storeAll())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := m.l.svc.Triage(ctx, reconcile.TriageOptions{Rate: 100000, By: "property"})
	if err != nil {
		t.Fatal(err)
	}
	after, err := m.l.st.List(ctx, storeAll())
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("triage changed the number of operations: %d → %d", len(before), len(after))
	}
	now := m.now()
	candidates := 0
	for i, op := range after {
		was := before[i]
		if op.ID != was.ID || op.State != was.State || op.Version != was.Version || op.Contradicted != was.Contradicted {
			t.Fatalf("triage moved %s/%s: %s v%d → %s v%d", op.Tenant, op.Key, was.State, was.Version, op.State, op.Version)
		}
		candidate := op.Provider != "" && (op.State == model.StateUnknown || op.State == model.StateInProgress && op.LeaseUntil.Before(now))
		if !candidate {
			continue
		}
		candidates++
		f := op.Finding
		if f == nil || f.Stale || f.By != "property" {
			t.Fatalf("triage candidate %s/%s has finding %+v; want a fresh one by this run", op.Tenant, op.Key, f)
		}
		if want := m.holds(m.ops[op.Tenant+"/"+op.Key]); f.Kind != want {
			t.Fatalf("triage found %q for %s/%s; want %q", f.Kind, op.Tenant, op.Key, want)
		}
	}
	if rep.Candidates != candidates || rep.Checked != candidates {
		t.Fatalf("triage report %+v; %d candidates in the ledger", rep, candidates)
	}
}

// Look: one operation looked up and the finding recorded (ops check, the
// console's c), whatever its state. It finds what the provider holds; a
// "has it" flags a not_applied or failed operation contradicted, and holds
// the unused new key of a superseded one.
func (m *propMachine) Look(t *rapid.T) {
	var ids []string
	for _, id := range sortedKeys(m.ops) {
		if m.ops[id].provider != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	op := m.ops[rapid.SampledFrom(ids).Draw(t, "looked up")]
	_, looked, err := m.l.svc.CheckAndRecord(context.Background(), op.tenant, op.key, "look")
	if err != nil {
		t.Fatalf("look %s: %v", op.id(), err)
	}
	if op.state == model.StateAuthorized {
		// A new key, never sent: the check asks about the key it
		// replaced (and records the finding there).
		tenant, key := op.tenant, op.key
		for _, id := range sortedKeys(m.ops) {
			if p := m.ops[id]; p.state == model.StateSuperseded && p.tenant == tenant && p.newKey == key {
				op = p
				break
			}
		}
	}
	want := m.holds(op)
	if want == model.FindingHasNothing && op.state == model.StateInProgress && m.now().Before(op.leaseUntil) {
		// A claim is live (a worker died after it, its lease not over):
		// its request may still be on its way — cannot tell, never "has
		// nothing".
		want = model.FindingCannotTell
	}
	if looked.Finding.Kind != want {
		t.Fatalf("look found %q for %s; want %q", looked.Finding.Kind, op.id(), want)
	}
	if want == model.FindingHasOther && op.state == model.StateApplied && op.claimed {
		// Another request under its key: its applied answer (or the
		// decision) was about that request.
		op.contradicted = true
	}
	if want != model.FindingHasIt {
		return
	}
	switch op.state {
	case model.StateNotApplied, model.StateFailed:
		op.contradicted = true
	case model.StateSuperseded:
		if n := m.ops[op.tenant+"/"+op.newKey]; n != nil && n.state == model.StateAuthorized {
			n.contradicted = true
		}
	}
}

// ---- the invariants -----------------------------------------------------

func (m *propMachine) Check(t *rapid.T) {
	defer func() { m.decided = map[string]bool{} }()
	ctx := context.Background()
	ops, err := m.l.st.List(ctx, storeAll())
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != len(m.ops) {
		t.Fatalf("the ledger has %d operations, the model %d", len(ops), len(m.ops))
	}
	states := map[string]model.State{}
	for _, op := range ops {
		id := op.Tenant + "/" + op.Key
		want, ok := m.ops[id]
		if !ok {
			t.Fatalf("the ledger has %s, the model does not", id)
		}
		if op.State != want.state || op.Contradicted != want.contradicted {
			t.Fatalf("%s is %s (contradicted %v), the model says %s (%v)", id, op.State, op.Contradicted, want.state, want.contradicted)
		}
		states[id] = op.State
		// A stored receipt never changes.
		if len(op.Receipt) > 0 {
			if first, ok := m.stored[id]; !ok {
				m.stored[id] = string(op.Receipt)
			} else if first != string(op.Receipt) {
				t.Fatalf("the receipt of %s changed:\n was %s\n now %s", id, first, op.Receipt)
			}
		}
		// At most one effect per applied operation.
		if op.State == model.StateApplied && want.provider != "" {
			if n, _ := m.l.sb.Deliveries(ctx, want.dk()); n-want.base > 1 {
				t.Fatalf("applied %s has %d effects at the provider", id, n-want.base)
			}
		}
	}
	// No effect without its operation: every delivery is under the
	// downstream key of an operation the model made, in the number it made.
	total := 0
	for dk, n := range m.dk {
		got, err := m.l.sb.Deliveries(ctx, dk)
		if err != nil || got != n {
			t.Fatalf("provider holds %d deliveries under %s, the model %d (%v)", got, dk, n, err)
		}
		total += n
	}
	if got, _ := m.l.sb.Deliveries(ctx, ""); got != total {
		t.Fatalf("provider holds %d deliveries, %d belong to operations", got, total)
	}
	if got := m.l.effects("create_support_task"); got != m.tasks {
		t.Fatalf("%d tasks, the model made %d", got, m.tasks)
	}
	// Each applied local operation has exactly one task, named by its
	// receipt; no task belongs to an operation that is not applied.
	if problems, err := m.l.st.Audit(ctx); err != nil || len(problems) > 0 {
		t.Fatalf("audit: %v %v", problems, err)
	}
	// Nothing leaves unknown except by a decision.
	for id, st := range m.prev {
		if st == model.StateUnknown && states[id] != model.StateUnknown && !m.decided[id] {
			t.Fatalf("%s left unknown (now %q) without a decision", id, states[id])
		}
	}
	m.prev = states
}

func TestStateMachineProperty(t *testing.T) {
	root := t.TempDir()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		dir, err := os.MkdirTemp(root, "check")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		clk := newClock()
		l := wrap(t, testledger.In(t, dir, testledger.ProviderFile("provider.db"), withClock(clk), fast()))
		defer l.close()
		l.svc.Lease, l.svc.ReplayWindow, l.svc.TombstoneWindow = propLease, propReplay, propTomb
		// The model's lookups are after the grace (a provider that still
		// processes a request after its wait is grace_test's): a live
		// claim is still "cannot tell".
		l.svc.Grace = -1
		lid, err := l.st.LedgerID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		m := &propMachine{t: t, l: l, clk: clk, lid: lid, ops: map[string]*propOp{}, tombs: map[string]time.Time{},
			dk: map[string]int{}, byProv: map[string]int{}, byReq: map[string]int{}, stored: map[string]string{}, prev: map[string]model.State{}, decided: map[string]bool{}}
		rt.Repeat(map[string]func(*rapid.T){
			"call":    m.Call,
			"crash":   m.Crash,
			"late":    m.Late,
			"advance": m.Advance,
			"sweep":   m.Sweep,
			"decide":  m.Decide,
			"triage":  m.Triage,
			"look":    m.Look,
			"":        m.Check,
		})
	})
	t.Logf("%d ledgers checked", n)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

func sortStrings(s []string) { slices.Sort(s) }

// bindingFinding is the finding a decision is held to, computed from the
// attempts independently of the store's SQL: any lookup that found the
// effect (a provider never takes a delivery back, so neither a later "has
// nothing" nor a later attempt undoes it), else the latest lookup that
// found nothing, stale if an attempt that is not a lookup came after it.
func bindingFinding(provider string, atts []model.Attempt) *model.Finding {
	var hasIt, latest *model.Attempt
	lastOther := 0
	for i := range atts {
		a := &atts[i]
		switch {
		case a.Outcome != model.OutcomeLookup:
			lastOther = max(lastOther, a.Seq)
		case a.Finding == model.FindingHasIt && (hasIt == nil || a.Seq > hasIt.Seq):
			hasIt = a
		case a.Finding == model.FindingHasNothing && (latest == nil || a.Seq > latest.Seq):
			latest = a
		}
	}
	if hasIt != nil {
		return &model.Finding{Kind: model.FindingHasIt, Provider: provider, Ref: hasIt.ProviderRef, Seq: hasIt.Seq}
	}
	if latest != nil {
		return &model.Finding{Kind: model.FindingHasNothing, Provider: provider, Seq: latest.Seq, Stale: lastOther > latest.Seq}
	}
	return nil
}
