package ui

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	toolconfig "github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// clock is the ledger's and the console's time in tests (internal/testledger):
// fixed, moved by hand, so ages, "refreshed" times and decision times are
// the same on every run.
type clock = testledger.Clock

func newClock() *clock { return testledger.NewClock(time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)) }

// ledger is a real ledger file with its sandbox provider in t.TempDir()
// (internal/testledger).
type ledger struct {
	tl    *testledger.Ledger
	path  string
	st    store.Ledger
	sb    *sandbox.Sandbox
	svc   *reconcile.Service
	clock *clock
}

func newLedger(t testing.TB) *ledger {
	t.Helper()
	tl := testledger.New(t, testledger.WithClock(newClock()), testledger.Fast(), testledger.ID("52534c4752534c4752534c4752534c47"))
	return &ledger{tl: tl, path: tl.Path, st: tl.Store, sb: tl.Sandbox, svc: tl.Svc, clock: tl.Clock}
}

// second opens the same ledger again: another process's view, for writes
// the console must notice (and decisions that race the console's).
func (l *ledger) second(t testing.TB) *reconcile.Service {
	t.Helper()
	return l.tl.Second(t)
}

// call makes one real call through the call path.
func (l *ledger) call(t testing.TB, tenant, key, tool, args string, f provider.Faults) reconcile.Result {
	t.Helper()
	res, err := l.svc.Call(context.Background(), model.Request{Tenant: tenant, Key: key, Tool: tool, PayloadVersion: 1,
		Args: []byte(args), TraceID: "trace-" + key, WorkerID: "worker-1"}, reconcile.CallOptions{Faults: f})
	if err != nil && res.Class != model.ClassUnknown {
		t.Fatalf("call %s/%s: %v", tenant, key, err)
	}
	l.clock.Advance(time.Second)
	return res
}

func (l *ledger) task(t testing.TB, tenant, key, subject string) {
	l.call(t, tenant, key, "create_support_task", `{"subject":`+quote(subject)+`}`, provider.Faults{})
}

func (l *ledger) notify(t testing.TB, tenant, key, to string, f provider.Faults) reconcile.Result {
	return l.call(t, tenant, key, "send_notification", `{"to":`+quote(to)+`,"body":"disk full"}`, f)
}

// unknown makes an operation whose reply was lost after the provider applied
// it: the sandbox holds the effect, the ledger says unknown.
func (l *ledger) unknown(t testing.TB, tenant, key, to string) {
	t.Helper()
	if res := l.notify(t, tenant, key, to, provider.Faults{LoseReply: true}); res.Class != model.ClassUnknown {
		t.Fatalf("%s/%s: want unknown, got %s", tenant, key, res.Class)
	}
}

// inFlight leaves an external operation claimed and not dispatched, as a
// worker that died right after its claim does.
func (l *ledger) inFlight(t testing.TB, tenant, key, to string) {
	t.Helper()
	p, err := toolconfig.Default().Tools.Prepare(model.Request{Tenant: tenant, Key: key, Tool: "send_notification", PayloadVersion: 1,
		Args: []byte(`{"to":` + quote(to) + `,"body":"disk full"}`), WorkerID: "worker-2"})
	if err != nil {
		t.Fatal(err)
	}
	err = l.st.WithTx(context.Background(), func(tx store.Tx) error {
		_, err := l.svc.ClaimTx(tx, p, "", time.Hour, l.clock.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	l.clock.Advance(time.Second)
}

// sweptAtDispatch calls tenant/key (to: the notification's address) with
// a claim that outlives its lease: at its dispatch another process sweeps
// it unknown and runs then (nil: nothing more); the provider's answer,
// applied, comes after.
func (l *ledger) sweptAtDispatch(t testing.TB, tenant, key, to string, then func(ctx context.Context, other *reconcile.Service)) {
	t.Helper()
	ctx := context.Background()
	other := l.second(t)
	l.svc.Lease = time.Second
	l.svc.At = func(p reconcile.Point) {
		if p != reconcile.PointAfterDispatch {
			return
		}
		l.clock.Advance(time.Minute)
		if _, err := other.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if then != nil {
			then(ctx, other)
		}
	}
	defer func() { l.svc.At, l.svc.Lease = nil, reconcile.DefaultLease }()
	l.notify(t, tenant, key, to, provider.Faults{})
}

// contradicted makes an operation a late provider result contradicts: the
// worker's claim outlives its lease, a sweep makes it unknown, an operator
// marks it not applied — and then the provider's "applied" arrives.
func (l *ledger) contradicted(t testing.TB, tenant, key, to string) {
	t.Helper()
	l.sweptAtDispatch(t, tenant, key, to, func(ctx context.Context, other *reconcile.Service) {
		if _, err := other.MarkNotApplied(ctx, reconcile.Decision{Tenant: tenant, Key: key, Operator: "bob",
			Reason: "provider console showed nothing", Evidence: "screenshot 42", WithinGrace: true}); err != nil {
			t.Fatal(err)
		}
	})
}

func (l *ledger) decide(t testing.TB, action model.Action, tenant, key string) *model.Operation {
	t.Helper()
	// Another operator, right after the call: within the grace after its
	// request, on purpose (what the tests look at is what follows).
	d := reconcile.Decision{Tenant: tenant, Key: key, Operator: "bob", Reason: "checked the provider", Evidence: "sbx_1", WithinGrace: true}
	var op *model.Operation
	var err error
	switch action {
	case model.ActionMarkApplied:
		op, err = l.svc.MarkApplied(context.Background(), d)
	case model.ActionMarkNotApplied:
		op, err = l.svc.MarkNotApplied(context.Background(), d)
	case model.ActionAuthorizeKey:
		d.NewKey = key + "-2"
		op, _, err = l.svc.AuthorizeNewKey(context.Background(), d)
	}
	if err != nil {
		t.Fatal(err)
	}
	l.clock.Advance(time.Second)
	return op
}

func (l *ledger) get(t testing.TB, tenant, key string) *model.Detail {
	t.Helper()
	d, err := l.st.Detail(context.Background(), tenant, key)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// fixture is a small ledger with every state, three tenants, replays, a
// conflict, decisions, a superseded/authorized pair and a contradiction.
func fixture(t testing.TB) *ledger {
	t.Helper()
	l := newLedger(t)
	l.task(t, "acme", "task-1", "Printer on fire")
	l.task(t, "acme", "task-1", "Printer on fire") // replay
	l.call(t, "acme", "task-1", "create_support_task", `{"subject":"Printer smoking"}`, provider.Faults{})
	l.call(t, "globex", "report-7", "create_report_job", `{"report":"weekly revenue"}`, provider.Faults{})
	l.notify(t, "initech", "notify-ok", "bill@initech.example", provider.Faults{})
	l.notify(t, "initech", "notify-rejected", "nobody@initech.example", provider.Faults{Reject: true})
	l.notify(t, "globex", "notify-refused", "hank@globex.example", provider.Faults{FailBefore: true})
	l.inFlight(t, "acme", "notify-inflight", "ops@acme.example")
	l.unknown(t, "globex", "notify-super", "mr.burns@globex.example")
	l.decide(t, model.ActionAuthorizeKey, "globex", "notify-super")
	l.unknown(t, "initech", "notify-settled", "peter@initech.example")
	l.decide(t, model.ActionMarkApplied, "initech", "notify-settled")
	l.contradicted(t, "acme", "notify-contra", "ops@acme.example")
	l.unknown(t, "acme", "notify-2", "oncall@acme.example")
	l.unknown(t, "acme", "notify-1", "oncall@acme.example")
	return l
}

// asciiRenderer pins the colour profile: no escape codes depend on where
// the tests run, and no package global changes.
func asciiRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return r
}

func config(l *ledger) Config {
	return Config{
		Store: l.st, Service: l.svc, Ledger: "ledger.db", Operator: "alice",
		Renderer: asciiRenderer(), Now: l.clock.Now, Location: time.UTC, NoTimers: true,
	}
}

// harness drives a Model as the program would: every command's message is
// fed back to Update, until nothing is left to do. Commands run
// synchronously (NoTimers keeps timers out), so after each step the model
// holds the ledger's answer.
type harness struct {
	t    testing.TB
	m    Model
	quit bool
	// pin, when set, rewrites each message before the model sees it (the
	// goldens pin the wall-clock fields the call path stamps).
	pin func(tea.Msg) tea.Msg
}

func open(t testing.TB, cfg Config, w, h int) *harness {
	t.Helper()
	hs := &harness{t: t, m: New(cfg)}
	// Close whatever the model holds at the end (its watcher pins one of
	// the store's reader connections), not the model as it is now.
	t.Cleanup(func() { hs.m.Close() })
	hs.do(hs.m.Init())
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

func (h *harness) send(msg tea.Msg) *harness {
	h.t.Helper()
	next, cmd := h.m.Update(msg)
	h.m = next.(Model)
	h.do(cmd)
	return h
}

func (h *harness) do(cmd tea.Cmd) {
	h.t.Helper()
	queue := []tea.Cmd{cmd}
	for steps := 0; len(queue) > 0; steps++ {
		if steps > 500 {
			h.t.Fatal("commands do not settle")
		}
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		msg := c()
		switch msg := msg.(type) {
		case nil:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case tea.QuitMsg:
			h.quit = true
		default:
			if h.pin != nil {
				msg = h.pin(msg)
			}
			next, cmd := h.m.Update(msg)
			h.m = next.(Model)
			queue = append(queue, cmd)
		}
	}
}

// keys sends key presses: names ("enter", "esc", "tab", "down", …) or
// text, one rune per press.
func (h *harness) keys(keys ...string) *harness {
	h.t.Helper()
	for _, k := range keys {
		h.send(keyMsg(k))
	}
	return h
}

func (h *harness) typeText(s string) *harness {
	h.t.Helper()
	for _, r := range s {
		h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	return h
}

var namedKeys = map[string]tea.KeyType{
	"enter": tea.KeyEnter, "esc": tea.KeyEsc, "tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab,
	"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
	"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd,
	"ctrl+c": tea.KeyCtrlC, "backspace": tea.KeyBackspace, "space": tea.KeySpace,
}

func keyMsg(k string) tea.KeyMsg {
	if t, ok := namedKeys[k]; ok {
		return tea.KeyMsg{Type: t}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// view is the screen as text.
func (h *harness) view() string { return ansi.Strip(h.m.View()) }

func (h *harness) contains(want ...string) {
	h.t.Helper()
	v := h.view()
	for _, w := range want {
		if !strings.Contains(v, w) {
			h.t.Fatalf("screen lacks %q:\n%s", w, v)
		}
	}
}

func (h *harness) lacks(bad ...string) {
	h.t.Helper()
	v := h.view()
	for _, b := range bad {
		if strings.Contains(v, b) {
			h.t.Fatalf("screen shows %q:\n%s", b, v)
		}
	}
}

// selected is the operation under the list's cursor.
func (h *harness) selected() string {
	op, ok := h.m.list.selected()
	if !ok {
		return ""
	}
	return op.Tenant + "/" + op.Key
}

// tick is one refresh heartbeat: the watcher is asked whether the ledger
// changed, and the screen reloads if it did.
func (h *harness) tick() *harness {
	return h.send(tickMsg{At: h.m.cfg.Now()})
}

// confirmMarkApplied presses a on the selected operation, fills the form
// (evidence, then reason) and submits it: the confirmation is on screen.
func (h *harness) confirmMarkApplied(evidence, reason string) *harness {
	h.keys("a")
	h.typeText(evidence)
	h.keys("tab")
	h.typeText(reason)
	h.keys("enter")
	return h
}

// settleElsewhere is another operator marking acme/notify-1 not applied
// through their own connection while this console looks at it.
func settleElsewhere(t *testing.T, l *ledger) {
	t.Helper()
	if _, err := l.second(t).MarkNotApplied(context.Background(), reconcile.Decision{Tenant: "acme", Key: "notify-1",
		Operator: "bob", Reason: "nothing at the provider", Evidence: "lookup", WithinGrace: true}); err != nil {
		t.Fatal(err)
	}
}

// contradictLate records, as an older ledger did, a provider's late answer
// on tenant/key (a late_result attempt with reference ref, "" none, and
// the words said) and flags the operation contradicted.
func (l *ledger) contradictLate(t testing.TB, tenant, key, ref, said string) {
	t.Helper()
	err := l.st.WithTx(context.Background(), func(tx store.Tx) error {
		op, err := tx.GetOperation(tenant, key)
		if err != nil {
			return err
		}
		if err := tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLateResult, Fingerprint: op.Fingerprint,
			ProviderRef: ref, Error: said, WorkerID: "w", StartedAt: tx.Now()}); err != nil {
			return err
		}
		from, ver := op.State, op.Version
		op.Contradicted = true
		return tx.UpdateOperation(op, from, ver)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// supersedeWhileDispatching makes acme/k's first call (to a@example.com)
// outlive its lease: at its dispatch another process sweeps it unknown and
// authorizes the new key k2, then runs then (nil: nothing more); the
// provider's answer, applied, comes after.
func (l *ledger) supersedeWhileDispatching(t testing.TB, then func(ctx context.Context, other *reconcile.Service)) {
	t.Helper()
	l.sweptAtDispatch(t, "acme", "k", "a@example.com", func(ctx context.Context, other *reconcile.Service) {
		if _, _, err := other.AuthorizeNewKey(ctx, reconcile.Decision{Tenant: "acme", Key: "k", NewKey: "k2", Operator: "bob",
			Reason: "provider console showed nothing", WithinGrace: true}); err != nil {
			t.Fatal(err)
		}
		if then != nil {
			then(ctx, other)
		}
	})
}
