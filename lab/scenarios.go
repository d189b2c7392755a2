package lab

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// scenario is a Scenario with the code that runs it.
type scenario struct {
	Scenario
	run func(x *run, row *Row) error
}

// run is one scenario's run against one ledger.
type run struct {
	spawner
	sc       *scenario
	id       string
	st       store.Ledger
	sb       *sandbox.Sandbox
	svc      *reconcile.Service
	progress func(Step)
	baseline int // the tenant's local effect rows when the run began
	keys     []string
	failures []string
}

func (x *run) step(format string, args ...any) {
	x.progress(Step{Scenario: x.sc.ID, Text: fmt.Sprintf(format, args...)})
}

// tell is step with a narration for an audience (Step.Why).
func (x *run) tell(why, format string, args ...any) {
	x.progress(Step{Scenario: x.sc.ID, Text: fmt.Sprintf(format, args...), Why: why})
}

// key is the run's key for a name ("op-a"): unique per run, so a scenario
// run again in the same tenant starts from nothing.
func (x *run) key(name string) string {
	k := x.sc.ID + "/" + x.id + "/" + name
	if !slices.Contains(x.keys, k) {
		x.keys = append(x.keys, k)
	}
	return k
}

// check records a failure unless ok.
func (x *run) check(ok bool, format string, args ...any) bool {
	if !ok {
		x.failures = append(x.failures, fmt.Sprintf(format, args...))
	}
	return ok
}

// said adds one part to a row's summary line from the check its ✗ line
// comes from: what happened, in words, marked "✗ " when the check did not
// hold (and the failure recorded, as check does). A summary never reads
// as if a step held while a line below says it did not.
func (x *run) said(parts *[]string, ok bool, happened, format string, args ...any) {
	if !x.check(ok, format, args...) {
		happened = "✗ " + happened
	}
	*parts = append(*parts, happened)
}

// held is s marked "✗ " when a check failed since the run had mark
// failures: a summary of the steps those checks judged.
func (x *run) held(mark int, s string) string {
	if len(x.failures) > mark {
		return "✗ " + s
	}
	return s
}

// by is who the run's lookups are recorded as asked by (a finding's "by",
// as "ops check by alice").
func (x *run) by() string {
	return "lab " + x.sc.ID + " by " + x.operator()
}

// look asks key's provider by its downstream key and records the finding
// as a lookup attempt, as `ops check` does (reconcile.CheckAndRecord): what
// the lab says it found is what `ops show` and the console show.
func (x *run) look(key string) (reconcile.Looked, error) {
	_, l, err := x.svc.CheckAndRecord(x.ctx, x.tenant, key, x.by())
	return l, err
}

// lookedWords is a lookup's answer for a person: "found sbx_3", "found
// sbx_3 (2 deliveries)", "found nothing", "cannot tell: …" — once: the
// providers' and the grace's errors already start with "cannot tell:", a
// claim in flight's does not.
func lookedWords(l reconcile.Looked) string {
	switch {
	case l.Err != nil:
		why := strings.TrimSpace(strings.TrimPrefix(oneLine(l.Err.Error()), "cannot tell:"))
		if why == "" {
			return "cannot tell"
		}
		return "cannot tell: " + why
	case l.Evidence.Found:
		s := "found " + orNone(l.Evidence.Ref)
		if l.Evidence.Effects > 1 {
			s += fmt.Sprintf(" (%d deliveries)", l.Evidence.Effects)
		}
		return s
	}
	return "found nothing"
}

// refusedWords is a refused decision for a summary: "stale: op-a is
// applied now".
func refusedWords(err error, op *model.Operation, key string) string {
	s := string(model.CodeOf(err))
	if op != nil {
		s += fmt.Sprintf(": %s is %s now", label(key), op.State)
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// receiptWords names what a receipt says happened: "created sbx_2",
// "replayed task 5", "no receipt".
func receiptWords(rc *model.Receipt) string {
	if rc == nil {
		return "no receipt"
	}
	s := orNone(rc.Status)
	switch {
	case rc.ProviderRef != "":
		s += " " + rc.ProviderRef
	case resultName(rc) != "":
		s += " " + resultName(rc)
	}
	return s
}

func (x *run) operator() string {
	if x.r.Operator != "" {
		return x.r.Operator
	}
	return "lab"
}

func (x *run) lease() time.Duration {
	if x.r.Lease > 0 {
		return x.r.Lease
	}
	return 300 * time.Millisecond
}

func (x *run) local() bool {
	t, err := x.svc.Tools.Lookup(x.sc.Tool)
	return err == nil && t.Kind() == model.EffectLocal
}

// localEffects is the tenant's effect rows of the scenario's tool.
func (x *run) localEffects() (int, error) {
	if !x.local() {
		return 0, nil
	}
	return x.svc.EffectCount(x.ctx, x.sc.Tool, x.tenant)
}

// effects counts the scenario's own effects: for a local tool the effect
// rows the tenant gained since the run began, for an external one the
// provider's deliveries under the downstream keys of the run's operations.
func (x *run) effects() (int, error) {
	if x.local() {
		n, err := x.localEffects()
		return n - x.baseline, err
	}
	id, err := x.st.LedgerID(x.ctx)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, k := range x.keys {
		n, err := x.sb.Deliveries(x.ctx, reconcile.DownstreamKey(id, x.tenant, k))
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// op reads an operation of the run; nil when it does not exist.
func (x *run) op(key string) (*model.Operation, error) {
	op, err := x.st.Get(x.ctx, x.tenant, key)
	if model.IsCode(err, model.CodeNotFound) {
		return nil, nil
	}
	return op, err
}

// waitLease sleeps until the claim on key has outlived its lease.
func (x *run) waitLease(key string) error {
	op, err := x.op(key)
	if err != nil || op == nil {
		return err
	}
	d := time.Until(op.LeaseUntil) + 10*time.Millisecond
	if d <= 0 {
		return nil
	}
	x.step("waiting %s for the lease of %s to run out", d.Round(time.Millisecond), label(key))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-x.ctx.Done():
		return x.ctx.Err()
	case <-t.C:
		return nil
	}
}

// ledgerSays is the "what the ledger says" column: per operation its state,
// its attempts' outcomes and the decisions taken on it.
func (x *run) ledgerSays() string {
	var parts []string
	for _, k := range x.keys {
		d, err := x.st.Detail(x.ctx, x.tenant, k)
		if model.IsCode(err, model.CodeNotFound) {
			parts = append(parts, label(k)+": no record")
			continue
		}
		if err != nil {
			parts = append(parts, label(k)+": "+err.Error())
			continue
		}
		s := fmt.Sprintf("%s: %s [%s]", label(k), d.Operation.State, outcomes(d.Attempts))
		for _, dc := range d.Decisions {
			s += " +" + string(dc.Action)
		}
		if d.Operation.Contradicted {
			s += " CONTRADICTED"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// label is the last part of a run's key ("op-a").
func label(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[i+1:]
	}
	return key
}

// outcomes lists attempt outcomes, runs of one outcome folded: "created
// replayed×15".
func outcomes(as []model.Attempt) string {
	var out []string
	for i := 0; i < len(as); {
		j := i
		for j < len(as) && as[j].Outcome == as[i].Outcome {
			j++
		}
		s := string(as[i].Outcome)
		if j-i > 1 {
			s += fmt.Sprintf("×%d", j-i)
		}
		out = append(out, s)
		i = j
	}
	return strings.Join(out, " ")
}

// resultID is the effect id a local receipt names (task_id or job_id).
func resultID(rc *model.Receipt) int64 {
	if rc == nil {
		return 0
	}
	var m map[string]any
	if json.Unmarshal(rc.Result, &m) != nil {
		return 0
	}
	for _, k := range []string{"task_id", "job_id"} {
		if v, ok := m[k].(float64); ok {
			return int64(v)
		}
	}
	return 0
}

// resultName is the effect a local receipt names: "task 5", "job 3", or "".
func resultName(rc *model.Receipt) string {
	var m map[string]any
	if rc == nil || json.Unmarshal(rc.Result, &m) != nil {
		return ""
	}
	for k, name := range map[string]string{"task_id": "task", "job_id": "job"} {
		if v, ok := m[k].(float64); ok {
			return fmt.Sprintf("%s %d", name, int64(v))
		}
	}
	return ""
}

// storedReceipt is the receipt the ledger keeps for key.
func (x *run) storedReceipt(key string) *model.Receipt {
	op, err := x.op(key)
	if err != nil || op == nil || len(op.Receipt) == 0 {
		return nil
	}
	var rc model.Receipt
	if json.Unmarshal(op.Receipt, &rc) != nil {
		return nil
	}
	return &rc
}

func reportArgs(report string) string {
	b, _ := json.Marshal(map[string]string{"report": report})
	return string(b)
}

// articleCase is one row of the lab article's table: a report job whose
// first call stops at die ("" = completes), then a next attempt under
// nextKey with nextReport.
func articleCase(die reconcile.Point, nextKey, nextReport string, wantBefore, wantAfter int, want model.Class) func(*run, *Row) error {
	return func(x *run, row *Row) error {
		const tool = "create_report_job"
		a := x.key("op-a")
		x.tell("A worker process makes the first call. If it dies, it dies at a real point of the protocol, in a real process.",
			"first call: %s with key %s%s", tool, label(a), map[bool]string{true: ", worker stops " + string(die), false: ""}[die != ""])
		first, err := x.call(call{key: a, tool: tool, args: reportArgs("weekly"), dieAt: die, how: DieExit})
		if err != nil {
			return err
		}
		mark := len(x.failures)
		row.FirstResult = first.words()
		if die != "" {
			x.check(first.Exit == DieCode(die) && len(first.Results) == 0,
				"first call: want exit %d and no reply, got %s", DieCode(die), first.words())
		} else {
			x.check(first.Exit == 0 && first.first().Class == model.ClassDone && first.first().Receipt != nil &&
				first.first().Receipt.Status == "created", "first call: want done (created), got %s", first.words())
		}
		row.FirstResult = x.held(mark, row.FirstResult)
		if row.Before, err = x.effects(); err != nil {
			return err
		}
		x.step("after the first call: %s", plural(row.Before, "report job", "report jobs"))
		x.check(row.Before == wantBefore, "effects after the first call: want %d, got %d", wantBefore, row.Before)
		stored := x.storedReceipt(a)
		if die == reconcile.PointBeforeCommit {
			op, err := x.op(a)
			if err != nil {
				return err
			}
			x.check(op == nil, "a worker that died before commit must leave no record, found it %s", stateOf(op))
		} else {
			x.check(stored != nil && resultID(stored) > 0, "the committed operation must hold a receipt naming its job")
		}

		b := x.key(nextKey)
		x.tell("The next attempt: what the ledger does depends only on the key and the arguments, never on what the first caller remembers.",
			"next attempt: key %s, report %q", label(b), nextReport)
		next, err := x.call(call{key: b, tool: tool, args: reportArgs(nextReport)})
		if err != nil {
			return err
		}
		mark = len(x.failures)
		r := next.first()
		x.check(r.Class == want && next.Exit == want.ExitCode(), "next attempt: want %s (exit %d), got %s", want, want.ExitCode(), next.words())
		switch {
		case want == model.ClassConflict:
			after := x.storedReceipt(a)
			x.check(after != nil && stored != nil && resultID(after) == resultID(stored),
				"a conflicting request must leave the stored receipt as it was")
			op, err := x.op(a)
			if err != nil {
				return err
			}
			x.check(op != nil && op.State == model.StateApplied && strings.Contains(string(op.Args), `"weekly"`),
				"a conflicting request must leave the operation applied with its original report")
		case b == a && stored != nil:
			x.check(r.Receipt != nil && r.Receipt.Status == "replayed" && resultID(r.Receipt) == resultID(stored),
				"next attempt: want the stored receipt (job %d) replayed, got %s", resultID(stored), receiptWords(r.Receipt))
		case b == a:
			x.check(r.Receipt != nil && r.Receipt.Status == "created", "next attempt: want created, got %s", receiptWords(r.Receipt))
		default:
			x.check(r.Receipt != nil && r.Receipt.Status == "created" && resultID(r.Receipt) != resultID(stored),
				"a new key must create a second job, got %s", receiptWords(r.Receipt))
		}
		row.NextResult = x.held(mark, next.words())
		if row.After, err = x.effects(); err != nil {
			return err
		}
		x.check(row.After == wantAfter, "effects after the next attempt: want %d, got %d", wantAfter, row.After)
		row.Ledger = x.ledgerSays()
		return nil
	}
}

// lostResponse is the first article's demonstration: the task commits, the
// reply never reaches the caller, and a retry through a new connection (a
// new process) returns the stored receipt.
func lostResponse(x *run, row *Row) error {
	const tool = "create_support_task"
	args := `{"subject":"Check delayed delivery for order 1042"}`
	a := x.key("op-a")
	x.tell("An agent calls create_support_task. The worker commits the task and its receipt in one transaction — then the reply is lost on the way back, as when a connection drops. The agent sees only a timeout.",
		"first call: the task commits, then the reply is held back")
	first, err := x.call(call{key: a, tool: tool, args: args, trace: "call_first", stallAt: reconcile.PointAfterCommit})
	if err != nil {
		return err
	}
	mark := len(x.failures)
	x.check(first.Stalled && len(first.Results) == 0, "first call: want a worker that committed and never replied, got %s", first.words())
	row.FirstResult = x.held(mark, first.words())
	if row.Before, err = x.effects(); err != nil {
		return err
	}
	stored := x.storedReceipt(a)
	x.tell("The agent does not know whether the task exists. The ledger does: the effect happened once, and its receipt is stored under the operation key.",
		"after the timeout: %s; the ledger holds the receipt of task %d", plural(row.Before, "task", "tasks"), resultID(stored))
	x.check(row.Before == 1, "after the lost reply: want 1 task, got %d", row.Before)
	x.check(stored != nil && resultID(stored) > 0, "the committed task must have its receipt stored")

	// A regenerated tool call gets a new trace id; the key is what makes it
	// the same operation.
	x.tell("The agent retries, as agents do — a regenerated call with a new trace id, through a new connection. The same operation key makes it the same operation: the ledger replays the stored receipt instead of creating a second task.",
		"retry through a new connection: same key, new trace id")
	next, err := x.call(call{key: a, tool: tool, args: args, trace: "call_retry"})
	if err != nil {
		return err
	}
	mark = len(x.failures)
	r := next.first()
	x.check(r.Class == model.ClassDone && r.Receipt != nil && r.Receipt.Status == "replayed" &&
		stored != nil && resultID(r.Receipt) == resultID(stored),
		"retry: want the stored receipt (task %d) replayed, got %s", resultID(stored), next.words())
	row.NextResult = x.held(mark, next.words())
	if row.After, err = x.effects(); err != nil {
		return err
	}
	x.check(row.After == 1, "after the retry: want 1 task, got %d", row.After)
	d, err := x.st.Detail(x.ctx, x.tenant, a)
	if err != nil {
		return err
	}
	var traces []string
	for _, at := range d.Attempts {
		traces = append(traces, at.TraceID)
	}
	x.check(slices.Equal(traces, []string{"call_first", "call_retry"}),
		"both attempts must be recorded with their trace ids, got %v", traces)
	row.Ledger = x.ledgerSays()
	return nil
}

// concurrent is the first article's concurrency check: sixteen calls from
// eight worker processes (two goroutines each) with one key.
func concurrent(x *run, row *Row) error {
	const (
		tool    = "create_support_task"
		workers = 8
		each    = 2
	)
	args := `{"subject":"Refund request #5521 needs review"}`
	a := x.key("op-a")
	var err error
	if row.Before, err = x.effects(); err != nil {
		return err
	}
	row.FirstResult = "none yet"
	x.step("starting %d worker processes × %d calls, one key", workers, each)
	procs := make([]*proc, 0, workers)
	for i := range workers {
		p, err := x.start(call{key: a, tool: tool, args: args, calls: each, trace: fmt.Sprintf("call_w%d", i+1)})
		if err != nil {
			for _, p := range procs {
				p.wait()
			}
			return err
		}
		procs = append(procs, p)
	}
	mark := len(x.failures)
	var results []WorkerResult
	for _, p := range procs {
		o, err := p.wait()
		if err != nil {
			return err
		}
		x.check(o.Exit == 0, "worker: want exit 0, got %s (%s)", o.words(), o.Stderr)
		results = append(results, o.Results...)
	}
	created, done := 0, 0
	ids := map[int64]bool{}
	for _, r := range results {
		if r.Class == model.ClassDone {
			done++
		}
		if r.Receipt != nil {
			ids[resultID(r.Receipt)] = true
			if r.Receipt.Status == "created" {
				created++
			}
		}
	}
	x.check(len(results) == workers*each && done == workers*each, "want %d calls done, got %d of %d", workers*each, done, len(results))
	x.check(created == 1 && len(ids) == 1, "want exactly one creation and one task id, got %d created and %d ids", created, len(ids))
	row.NextResult = x.held(mark, fmt.Sprintf("%d/%d calls answered with a receipt: %d created, %d replayed, %d task id(s)",
		done, len(results), created, done-created, len(ids)))
	if row.After, err = x.effects(); err != nil {
		return err
	}
	x.check(row.Before == 0 && row.After == 1, "want 0 → 1 tasks, got %d → %d", row.Before, row.After)
	d, err := x.st.Detail(x.ctx, x.tenant, a)
	if err != nil {
		return err
	}
	x.check(len(d.Attempts) == workers*each, "want %d attempts recorded, got %d", workers*each, len(d.Attempts))
	row.Ledger = x.ledgerSays()
	return nil
}

func notificationArgs(to, body string) string {
	b, _ := json.Marshal(map[string]string{"to": to, "body": body})
	return string(b)
}

// externalCrash starts an external call whose worker is killed at die, and
// checks it is left in_progress under a short lease.
func (x *run) externalCrash(row *Row, key, args, prov string, die reconcile.Point) error {
	// The narration says where the worker dies: after-claim never reaches
	// the provider, after-dispatch does.
	story := "The worker claims the key in the ledger, sends the notification to the provider, and is killed before it can record the result."
	if die == reconcile.PointAfterClaim {
		story = "The worker claims the key in the ledger and is killed before it sends anything to the provider."
	}
	x.tell(story, "first call: send_notification via %s; the worker is killed %s", prov, die)
	first, err := x.call(call{key: key, tool: "send_notification", args: args, provider: prov,
		lease: x.lease(), dieAt: die, how: DieKill})
	if err != nil {
		return err
	}
	mark := len(x.failures)
	x.check(first.Killed && len(first.Results) == 0, "first call: want a worker killed with no reply, got %s", first.words())
	row.FirstResult = x.held(mark, first.words())
	op, err := x.op(key)
	if err != nil {
		return err
	}
	x.check(op != nil && op.State == model.StateInProgress && !op.LeaseUntil.IsZero(),
		"the claim must be recorded in_progress with a lease before dispatch, got %v", stateOf(op))
	if row.Before, err = x.effects(); err != nil {
		return err
	}
	x.step("the ledger says in_progress; the provider holds %s", plural(row.Before, "delivery", "deliveries"))
	return nil
}

func stateOf(op *model.Operation) string {
	if op == nil {
		return "no record"
	}
	return string(op.State)
}

// sweepToUnknown waits out key's lease and sweeps.
func (x *run) sweepToUnknown(key string) error {
	if err := x.waitLease(key); err != nil {
		return err
	}
	x.tell("The worker's lease has ended and nobody finished the claim. The sweep marks the operation unknown: it may or may not have happened, and only a person or the provider can say.",
		"sweep")
	// The run's own operations only: the ledger may hold other people's
	// claims (the console's, a demo's), which are theirs to sweep.
	if _, err := x.svc.SweepKeys(x.ctx, x.tenant, x.keys); err != nil {
		return err
	}
	op, err := x.op(key)
	if err != nil {
		return err
	}
	x.check(op != nil && op.State == model.StateUnknown, "after the lease and a sweep: want unknown, got %s", stateOf(op))
	return nil
}

// externalMarkApplied: the provider applied, the worker died before the
// ledger recorded it; the lease ends, the sweep says unknown, a retry is
// refused, the provider lookup finds the effect, an operator marks it
// applied with that evidence and the next retry replays.
func externalMarkApplied(x *run, row *Row) error {
	args := notificationArgs("dana@acme.example", "Your refund of $42.00 was issued.")
	a := x.key("op-a")
	if err := x.externalCrash(row, a, args, "sandbox", reconcile.PointAfterDispatch); err != nil {
		return err
	}
	x.check(row.Before == 1, "the provider applied before the worker died: want 1 delivery, got %d", row.Before)
	if err := x.sweepToUnknown(a); err != nil {
		return err
	}
	// Each part of the summary comes from the check of its step (said).
	var parts []string
	x.step("retry, same key")
	refused, err := x.call(call{key: a, tool: "send_notification", args: args})
	if err != nil {
		return err
	}
	ok := refused.first().Class == model.ClassUnknown && refused.Exit == 5
	x.said(&parts, ok, map[bool]string{true: "retry ", false: "retry not refused: "}[ok]+refused.words(),
		"retry of an unknown: want refused, exit 5, got %s", refused.words())
	x.tell("Ask the provider by the downstream key the worker sent: does it hold a delivery? The answer is recorded as a finding, as `ops check` records it.",
		"provider lookup by the downstream key")
	looked, err := x.look(a)
	if err != nil {
		return err
	}
	ev := looked.Evidence
	x.said(&parts, looked.Err == nil && ev.Found && ev.Effects == 1 && ev.Ref != "", "lookup "+lookedWords(looked),
		"provider lookup: want one delivery found, got %s", lookedWords(looked))
	op, err := x.op(a)
	if err != nil || op == nil {
		return fmt.Errorf("lab: %s vanished: %v", a, err)
	}
	x.tell("An operator records the decision, with the provider's reference as evidence: a compare-and-set on the version they saw.",
		"operator marks it applied, evidence %s", orNone(ev.Ref))
	cur, err := x.svc.MarkApplied(x.ctx, reconcile.Decision{Tenant: x.tenant, Key: a, Operator: x.operator(),
		Reason: "provider lookup found the delivery under the downstream key", Evidence: ev.Ref,
		ExpectState: model.StateUnknown, ExpectVersion: op.Version})
	if err != nil {
		x.said(&parts, false, "mark applied refused ("+refusedWords(err, cur, a)+")", "mark applied refused: %s", oneLine(err.Error()))
	} else {
		parts = append(parts, "marked applied")
	}
	x.step("retry, same key")
	next, err := x.call(call{key: a, tool: "send_notification", args: args})
	if err != nil {
		return err
	}
	r := next.first()
	x.said(&parts, r.Class == model.ClassDone && r.Receipt != nil && r.Receipt.Status == "replayed" && r.Receipt.ProviderRef == ev.Ref,
		"retry "+next.words(), "retry after the decision: want the receipt with %s replayed, got %s", orNone(ev.Ref), next.words())
	row.NextResult = strings.Join(parts, "; ")
	if row.After, err = x.effects(); err != nil {
		return err
	}
	x.check(row.After == 1, "want still 1 delivery, got %d", row.After)
	row.Ledger = x.ledgerSays()
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// externalIdem: the same crash with a provider that honours downstream
// keys: once the lease ends, the retry re-dispatches under the same key and
// the provider answers with its first delivery.
func externalIdem(x *run, row *Row) error {
	args := notificationArgs("ops-oncall@globex.example", "Invoice run 2024-06 finished: 1,204 invoices.")
	a := x.key("op-a")
	if err := x.externalCrash(row, a, args, "sandbox-idem", reconcile.PointAfterDispatch); err != nil {
		return err
	}
	x.check(row.Before == 1, "the provider applied before the worker died: want 1 delivery, got %d", row.Before)
	looked, err := x.look(a)
	if err != nil {
		return err
	}
	ev := looked.Evidence
	if err := x.waitLease(a); err != nil {
		return err
	}
	x.step("retry, same key: re-dispatched under the same downstream key")
	next, err := x.call(call{key: a, tool: "send_notification", args: args})
	if err != nil {
		return err
	}
	var parts []string
	x.said(&parts, looked.Err == nil && ev.Found && ev.Ref != "", "lookup "+lookedWords(looked),
		"provider lookup: want the first delivery found, got %s", lookedWords(looked))
	r := next.first()
	x.said(&parts, r.Class == model.ClassDone && r.Receipt != nil && r.Receipt.ProviderRef == ev.Ref,
		"retry "+next.words(), "retry: want done with the first delivery %s, got %s", orNone(ev.Ref), next.words())
	row.NextResult = strings.Join(parts, "; ")
	if row.After, err = x.effects(); err != nil {
		return err
	}
	x.check(row.After == 1, "the provider must still hold one delivery, got %d", row.After)
	op, err := x.op(a)
	if err != nil {
		return err
	}
	x.check(op != nil && op.State == model.StateApplied, "want applied, got %s", stateOf(op))
	row.Ledger = x.ledgerSays()
	return nil
}

// authorizeNewKey: a worker dies after its claim, before dispatch; the lease
// ends, the sweep says unknown; the operator authorizes a new key; the old
// key's retry is told the new key and the new key applies once.
func authorizeNewKey(x *run, row *Row) error {
	args := notificationArgs("sam@initech.example", "Your password was reset by the support agent.")
	a, b := x.key("op-a"), x.key("op-b")
	if err := x.externalCrash(row, a, args, "sandbox", reconcile.PointAfterClaim); err != nil {
		return err
	}
	x.check(row.Before == 0, "a worker killed before dispatch: want 0 deliveries, got %d", row.Before)
	if err := x.sweepToUnknown(a); err != nil {
		return err
	}
	var parts []string
	looked, err := x.look(a)
	if err != nil {
		return err
	}
	// Nothing, or "cannot tell" (the claim's request may still be on its
	// way, within the grace after it): either way no delivery found.
	x.said(&parts, !looked.Evidence.Found, "lookup "+lookedWords(looked),
		"provider lookup: want no delivery found, got %s", lookedWords(looked))
	evidence := looked.Finding.Detail
	if evidence == "" {
		evidence = "provider lookup: " + lookedWords(looked)
	}
	op, err := x.op(a)
	if err != nil || op == nil {
		return fmt.Errorf("lab: %s vanished: %v", a, err)
	}
	x.step("operator authorizes new key %s", label(b))
	cur, _, err := x.svc.AuthorizeNewKey(x.ctx, reconcile.Decision{Tenant: x.tenant, Key: a, Operator: x.operator(),
		Reason: "worker died before dispatch; send it once, deliberately, under a new key", Evidence: evidence,
		ExpectState: model.StateUnknown, ExpectVersion: op.Version, NewKey: b})
	if err != nil {
		x.said(&parts, false, "new key refused ("+refusedWords(err, cur, a)+")", "authorize new key refused: %s", oneLine(err.Error()))
	} else {
		parts = append(parts, "new key "+label(b)+" authorized")
	}
	x.step("retry of the old key")
	old, err := x.call(call{key: a, tool: "send_notification", args: args})
	if err != nil {
		return err
	}
	x.said(&parts, old.first().Class == model.ClassSuperseded && old.Exit == 6 && old.first().NewKey == b, "old key "+old.words(),
		"old key: want superseded (exit 6) naming %s, got %s", label(b), old.words())
	x.step("call with the new key")
	next, err := x.call(call{key: b, tool: "send_notification", args: args})
	if err != nil {
		return err
	}
	x.said(&parts, next.first().Class == model.ClassDone && next.first().Receipt != nil && next.first().Receipt.Status == "created",
		"new key "+next.words(), "new key: want created, got %s", next.words())
	again, err := x.call(call{key: b, tool: "send_notification", args: args})
	if err != nil {
		return err
	}
	x.said(&parts, again.first().Class == model.ClassDone && again.first().Receipt != nil && again.first().Receipt.Status == "replayed",
		"again "+again.words(), "new key again: want replayed, got %s", again.words())
	row.NextResult = strings.Join(parts, "; ")
	if row.After, err = x.effects(); err != nil {
		return err
	}
	x.check(row.After == 1, "want one delivery in all, got %d", row.After)
	row.Ledger = x.ledgerSays()
	return nil
}

// scenarios is the lab's table, in order.
var scenarios = []scenario{
	{Scenario{ID: "before-commit-same-key", Name: "stops before commit, retried with the same key",
		FirstCall: "stops before commit", NextAttempt: "same key, same report", Expected: "0 → 1", Tool: "create_report_job"},
		articleCase(reconcile.PointBeforeCommit, "op-a", "weekly", 0, 1, model.ClassDone)},
	{Scenario{ID: "after-commit-same-key", Name: "stops after commit, before the acknowledgment; same key",
		FirstCall: "stops after commit, before acknowledgment", NextAttempt: "same key, same report", Expected: "1 → 1", Tool: "create_report_job"},
		articleCase(reconcile.PointAfterCommit, "op-a", "weekly", 1, 1, model.ClassDone)},
	{Scenario{ID: "after-commit-new-key", Name: "stops after commit, before the acknowledgment; new key",
		FirstCall: "stops after commit, before acknowledgment", NextAttempt: "new key, same report", Expected: "1 → 2", Tool: "create_report_job"},
		articleCase(reconcile.PointAfterCommit, "op-b", "weekly", 1, 2, model.ClassDone)},
	{Scenario{ID: "after-commit-different-report", Name: "stops after commit; same key with a different report",
		FirstCall: "stops after commit, before acknowledgment", NextAttempt: "same key, different report", Expected: "1 → 1; rejected", Tool: "create_report_job"},
		articleCase(reconcile.PointAfterCommit, "op-a", "daily", 1, 1, model.ClassConflict)},
	{Scenario{ID: "deliberate-second-job", Name: "completes normally, then a deliberate second job",
		FirstCall: "completes normally", NextAttempt: "deliberate second job, new key", Expected: "1 → 2", Tool: "create_report_job"},
		articleCase("", "op-b", "weekly", 1, 2, model.ClassDone)},
	{Scenario{ID: "lost-response", Name: "committed, the reply is lost; retry through a new connection",
		FirstCall: "commits, reply lost (caller times out)", NextAttempt: "same key, new connection", Expected: "1 → 1; stored receipt", Tool: "create_support_task"},
		lostResponse},
	{Scenario{ID: "concurrent-delivery", Name: "16 calls from 8 worker processes with one key",
		FirstCall: "—", NextAttempt: "16 calls, 8 processes, one key", Expected: "0 → 1; 16 done", Tool: "create_support_task"},
		concurrent},
	{Scenario{ID: "external-unknown-mark-applied", Name: "provider applied, worker died before the ledger recorded it",
		FirstCall: "killed after the provider applied", NextAttempt: "retry refused as unknown; marked applied; retry", Expected: "1 → 1; settled by decision", Tool: "send_notification"},
		externalMarkApplied},
	{Scenario{ID: "external-idem-redispatch", Name: "the same crash, provider honours downstream keys",
		FirstCall: "killed after the provider applied", NextAttempt: "retry re-dispatches, same downstream key", Expected: "1 → 1; safe re-dispatch", Tool: "send_notification"},
		externalIdem},
	{Scenario{ID: "authorize-new-key", Name: "unknown outcome settled by authorizing a new key",
		FirstCall: "killed after claim, before dispatch", NextAttempt: "new key authorized; old key, then new key", Expected: "0 → 1; old key told the new key", Tool: "send_notification"},
		authorizeNewKey},
}

// plural is "1 task", "2 tasks", "0 tasks".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
