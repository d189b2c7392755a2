package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/store"
)

// Bulk generation of large, realistic ledgers (the console's benchmarks
// need a million operations). Every row is written by the call path's own
// functions — CallLocalTx, the claim of transaction A, the lease expiry of
// a sweep, the operator decisions, and real provider calls — many calls to a
// transaction, never by SQL of its own.

// ClaimTx records a new external operation as claimed — transaction A of a
// call — inside tx, without dispatching it: an in-flight operation, as a
// worker leaves it when it dies right after its claim. lease is how long the
// claim holds; 0 means it has already ended (a sweep would find it).
func (s *Service) ClaimTx(tx store.Tx, p *model.Prepared, providerName string, lease time.Duration, start time.Time) (*model.Operation, error) {
	if p.Tool.Kind() != model.EffectExternal {
		return nil, model.Errorf(model.CodeInvalid, "%s has a local effect: it is never claimed", p.Tool.Name)
	}
	if providerName == "" {
		providerName = p.Tool.Effect.Provider
	}
	prov, err := s.Providers.Get(providerName)
	if err != nil {
		return nil, model.Errorf(model.CodeInvalid, "%v", err)
	}
	dk, err := downstreamKey(tx, p.Tenant, p.Key)
	if err != nil {
		return nil, err
	}
	op := s.newOperation(tx, p)
	op.State, op.ClaimNo = model.StateInProgress, 1
	op.Provider, op.DownstreamKey = providerName, dk
	op.LeaseOwner, op.LeaseUntil = workerOr(p.WorkerID), tx.Now().Add(lease)
	s.stampClaim(op, prov)
	if err := tx.InsertOperation(op); err != nil {
		return nil, err
	}
	if _, err := s.recordClaim(tx, op, p, start, model.OutcomeDispatched); err != nil {
		return nil, err
	}
	return op, nil
}

// ExpireLeaseTx does to one claimed operation what a sweep does to a claim
// whose lease ended with no result: it becomes unknown, with a
// lease_expired attempt saying so.
func (s *Service) ExpireLeaseTx(tx store.Tx, op *model.Operation) error {
	if op.State != model.StateInProgress {
		return model.Errorf(model.CodeIllegal, "%s/%s is %s, not in_progress", op.Tenant, op.Key, op.State)
	}
	_, err := s.expireLease(tx, op, "sweep", "", "")
	return err
}

// BulkSpec shapes a generated ledger.
type BulkSpec struct {
	Ops     int    // operations to create (replays and conflicts are extra attempts)
	Tenants int    // spread over this many tenants
	Seed    uint64 // the same seed builds the same mix
	Batch   int    // calls per transaction; default 5000
	// External calls made for real through Call and the sandbox (applied,
	// rejected, not applied): slow next to the bulk path, so a few
	// hundred give every state without dominating the run. Default
	// min(Ops/1000, 300).
	RealCalls int
}

// BulkReport says what a generation made.
type BulkReport struct {
	Operations int            `json:"operations"`
	Attempts   int            `json:"attempts"`
	ByState    map[string]int `json:"by_state"`
	Decisions  int            `json:"decisions"`
	Elapsed    time.Duration  `json:"elapsed_ns"`
}

// BulkTenant is the name of the i-th generated tenant.
func BulkTenant(i int) string {
	names := []string{"acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "tyrell", "cyberdyne",
		"soylent", "wonka", "aperture", "blackmesa", "gringotts", "oscorp", "vandelay", "dunder", "pied-piper",
		"massive-dynamic", "monarch"}
	if i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("tenant-%03d", i)
}

var (
	bulkSubjects = []string{"Printer on fire", "Refund order", "Password reset for", "VPN down in", "Invoice mismatch",
		"Shipping delayed for", "Duplicate charge on", "Cannot log in to", "Export stuck for", "Escalation from"}
	bulkReports = []string{"weekly revenue", "churn by cohort", "open tickets", "latency p99", "monthly invoices",
		"failed payments", "signups by region", "inventory levels"}
)

// Bulk generates spec.Ops operations through the call path in batches, then
// settles some unknown ones by operator decisions and makes a few real
// external calls. progress (optional) is told how many operations exist.
//
// The mix per operation: 0.5% claimed and abandoned (lease ended →
// unknown), 0.2% claimed and still in flight, the rest local tool calls
// (support tasks and report jobs), of which 10% are replayed once and 1%
// get a conflicting retry. One in ten unknown operations is then settled:
// marked applied, marked not applied, or superseded by a new key in turn.
func (s *Service) Bulk(ctx context.Context, spec BulkSpec, progress func(done, total int)) (BulkReport, error) {
	start := time.Now()
	if spec.Ops < 1 {
		return BulkReport{}, model.Errorf(model.CodeInvalid, "ops must be at least 1")
	}
	if spec.Tenants < 1 {
		spec.Tenants = 1
	}
	if spec.Batch <= 0 {
		spec.Batch = 5000
	}
	if spec.RealCalls == 0 {
		spec.RealCalls = min(spec.Ops/1000, 300)
	}
	if progress == nil {
		progress = func(int, int) {}
	}
	rng := rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x9e3779b97f4a7c15))
	rep := BulkReport{ByState: map[string]int{}}
	var unknown []model.Request
	local := spec.Ops - spec.RealCalls
	for done := 0; done < local; {
		n := min(spec.Batch, local-done)
		// Draw the batch before the transaction: WithTx may run its
		// function again after a busy wait, and must then write the same.
		reqs := make([]model.Request, n)
		rolls := make([]int, n)
		for j := range reqs {
			reqs[j], rolls[j] = bulkRequest(rng, spec, done+j), rng.IntN(1000)
		}
		var batchUnknown []model.Request
		var attempts int
		byState := map[string]int{}
		err := s.Store.WithTx(ctx, func(tx store.Tx) error {
			batchUnknown, attempts = nil, 0
			clear(byState)
			for j := range reqs {
				i, req, roll := done+j, reqs[j], rolls[j]
				switch {
				case roll < 7:
					req.Tool = "send_notification"
					req.Args = notifyArgs(req.Tenant, i)
					p, err := s.Tools.Prepare(req)
					if err != nil {
						return err
					}
					lease := time.Hour
					if roll < 5 {
						lease = 0
					}
					op, err := s.ClaimTx(tx, p, "", lease, s.Store.Now())
					if err != nil {
						return err
					}
					attempts++
					if lease == 0 {
						if err := s.ExpireLeaseTx(tx, op); err != nil {
							return err
						}
						attempts++
						batchUnknown = append(batchUnknown, req)
						byState[string(model.StateUnknown)]++
					} else {
						byState[string(model.StateInProgress)]++
					}
				default:
					p, err := s.Tools.Prepare(req)
					if err != nil {
						return err
					}
					if _, err := s.CallLocalTx(tx, p, s.Store.Now()); err != nil {
						return err
					}
					attempts++
					byState[string(model.StateApplied)]++
					if roll < 107 {
						if _, err := s.CallLocalTx(tx, p, s.Store.Now()); err != nil {
							return err
						}
						attempts++
					}
					if roll >= 990 {
						changed := req
						changed.Args = []byte(fmt.Sprintf(`{%q:%q}`, p.Tool.SummaryArg, "changed "+p.Summary))
						cp, err := s.Tools.Prepare(changed)
						if err != nil {
							return err
						}
						if _, err := s.CallLocalTx(tx, cp, s.Store.Now()); err != nil {
							return err
						}
						attempts++
					}
				}
			}
			return nil
		})
		if err != nil {
			return rep, err
		}
		unknown = append(unknown, batchUnknown...)
		rep.Attempts += attempts
		for k, v := range byState {
			rep.ByState[k] += v
		}
		done += n
		rep.Operations = done
		progress(done, spec.Ops)
	}
	// Settle one unknown operation in ten, through the decision functions.
	for i := 0; i < len(unknown); i += 10 {
		r := unknown[i]
		// A generated ledger: its claims were never sent, and they are
		// decided right after their leases ended (within the grace).
		d := Decision{Tenant: r.Tenant, Key: r.Key, Operator: "gen", Reason: "generated decision", Evidence: "generated evidence", WithinGrace: true}
		var err error
		switch (i / 10) % 3 {
		case 0:
			_, err = s.MarkApplied(ctx, d)
			rep.ByState[string(model.StateApplied)]++
		case 1:
			_, err = s.MarkNotApplied(ctx, d)
			rep.ByState[string(model.StateNotApplied)]++
		case 2:
			_, _, err = s.AuthorizeNewKey(ctx, d)
			rep.ByState[string(model.StateSuperseded)]++
			rep.ByState[string(model.StateAuthorized)]++
			rep.Operations++
		}
		if err != nil {
			return rep, err
		}
		rep.ByState[string(model.StateUnknown)]--
		rep.Decisions++
	}
	// A few real external calls: applied, rejected (failed) and refused
	// before applying (not applied), each its own transactions and a real
	// sandbox dispatch.
	for i := 0; i < spec.RealCalls; i++ {
		idx := local + i
		req := bulkRequest(rng, spec, idx)
		req.Tool, req.Args = "send_notification", notifyArgs(req.Tenant, idx)
		var f provider.Faults
		switch i % 3 {
		case 1:
			f.Reject = true
		case 2:
			f.FailBefore = true
		}
		res, err := s.Call(ctx, req, CallOptions{Faults: f})
		if err != nil {
			return rep, err
		}
		rep.ByState[string(res.State)]++
		rep.Operations++
		rep.Attempts++
		progress(local+i+1, spec.Ops)
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

func bulkRequest(rng *rand.Rand, spec BulkSpec, i int) model.Request {
	tenant := BulkTenant(i % spec.Tenants)
	req := model.Request{Tenant: tenant, Key: fmt.Sprintf("op-%07d", i), PayloadVersion: 1,
		TraceID: fmt.Sprintf("call_%08x", rng.Uint32()), WorkerID: fmt.Sprintf("worker-%d", rng.IntN(8))}
	if rng.IntN(10) < 6 {
		req.Tool = "create_support_task"
		req.Args, _ = json.Marshal(map[string]string{"subject": fmt.Sprintf("%s #%d", bulkSubjects[rng.IntN(len(bulkSubjects))], rng.IntN(100000))})
	} else {
		req.Tool = "create_report_job"
		req.Args, _ = json.Marshal(map[string]string{"report": bulkReports[rng.IntN(len(bulkReports))]})
	}
	return req
}

func notifyArgs(tenant string, i int) []byte {
	b, _ := json.Marshal(map[string]string{"to": fmt.Sprintf("oncall+%d@%s.example", i%97, tenant), "body": "disk usage above 90%"})
	return b
}
