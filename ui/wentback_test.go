package ui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	toolconfig "github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/testfiles"
	rsledger "github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// A sandbox provider file restored from an older backup: every lookup
// through it cannot tell, saying why ("it went back in time"), and must
// never read as "not sent". acme/refund-1 and acme/refund-2 were both
// delivered after the backup with their replies lost (unknown); a lookup
// found refund-1 before the restore; after it, each is looked up again and
// cannot tell. The console is opened as the command line opens it: the
// file is looked up, never dispatched through.
func wentBackLedger(t *testing.T) *ledger {
	t.Helper()
	ctx := context.Background()
	l := newLedger(t)
	l.unknown(t, "acme", "before-1", "ops@acme.example")
	backup := filepath.Join(t.TempDir(), "backup.provider.db")
	l.tl.Close()
	testfiles.Copy(t, l.tl.ProviderDB, backup)
	l.tl.Open()
	l.st, l.sb, l.svc = l.tl.Store, l.tl.Sandbox, l.tl.Svc
	l.unknown(t, "acme", "refund-1", "cfo@acme.example")
	l.unknown(t, "acme", "refund-2", "cfo@acme.example")
	if _, looked, err := l.svc.CheckAndRecord(ctx, "acme", "refund-1", "ops check by bob"); err != nil || !looked.Evidence.Found {
		t.Fatalf("before the restore, refund-1's lookup: found=%v %v %v", looked.Evidence.Found, looked.Err, err)
	}
	// never-1: claimed, never sent, its lease ended (a sweep made it
	// unknown); a lookup before the restore found nothing.
	l.inFlight(t, "acme", "never-1", "cfo@acme.example")
	l.clock.Advance(2 * time.Hour)
	if _, err := l.svc.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, looked, err := l.svc.CheckAndRecord(ctx, "acme", "never-1", "ops check by bob"); err != nil || looked.Err != nil || looked.Evidence.Found {
		t.Fatalf("before the restore, never-1's lookup: found=%v %v %v", looked.Evidence.Found, looked.Err, err)
	}
	l.tl.Close()
	testfiles.Copy(t, backup, l.tl.ProviderDB) // the restore
	lg, err := rsledger.OpenConfig(ctx, l.tl.Path, toolconfig.Default(), rsledger.ConfigOptions{ProviderDB: l.tl.ProviderDB, Use: rsledger.LookupsOnly, Store: l.tl.Options()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	l.st = lg.Store()
	l.svc = reconcile.New(l.st, toolconfig.Default().Tools, lg.Service().Providers)
	for _, key := range []string{"refund-1", "refund-2", "never-1"} {
		_, looked, err := l.svc.CheckAndRecord(ctx, "acme", key, "ops check by bob")
		if err != nil || looked.Err == nil || !strings.Contains(looked.Err.Error(), "went back in time") {
			t.Fatalf("after the restore, %s's lookup: found=%v %v %v", key, looked.Evidence.Found, looked.Err, err)
		}
	}
	return l
}

// selectOp moves the list's cursor to tenant/key, failing if it is not
// among the first rows.
func selectOp(t *testing.T, h *harness, ref string) {
	t.Helper()
	for i := 0; h.selected() != ref; i++ {
		if i > 30 {
			t.Fatalf("%s is not in the list (%v):\n%s", ref, h.m.list.err, h.view())
		}
		h.keys("down")
	}
}

// The detail and the "not applied" form of an operation whose provider
// cannot tell (its file went back in time) name the reason and what a
// wrong "not applied" does, at every size the console runs at; nothing
// is cut: the box keeps its fields and its bottom edge.
func TestTheProviderCannotTellReasonIsOnTheDetailAndTheNotAppliedForm(t *testing.T) {
	l := wentBackLedger(t)
	for _, size := range []struct{ w, h int }{{120, 40}, {80, 24}, {60, 20}} {
		for _, from := range []string{"list", "detail"} {
			t.Run(fmt.Sprintf("%dx%d from the %s", size.w, size.h, from), func(t *testing.T) {
				h := open(t, config(l), size.w, size.h)
				selectOp(t, h, "acme/refund-2")
				if from == "detail" {
					h.keys("enter")
					containsText(t, h, "cannot tell", "it went back in time", "it does not mean it was not sent")
				}
				h.keys("n")
				containsText(t, h, "Mark not applied", "! The provider cannot tell", "went back in time", "the next call sends it a second time", "▸ Reason", "Evidence")
				h.contains("╰")
				h.lacks("Against")
				h.typeText("customer says no mail came")
				h.keys("tab")
				h.typeText("ticket 4411")
				h.keys("enter")
				containsText(t, h, "Write this decision", "! The provider cannot tell", "went back in time", "sends it a second time", "y write it")
				h.contains("╰")
			})
		}
	}
}

// An earlier lookup that found the effect stands when a later one cannot
// tell: the detail says so first, "not applied" is against it (its form
// says so, naming the reason the last check cannot tell, and the review
// takes the typed override — y writes nothing), and "applied" starts
// with its reference — from the list as from the detail.
func TestAnEarlierLookupThatFoundItStandsWhenTheLastCannotTell(t *testing.T) {
	l := wentBackLedger(t)
	var ref string
	for _, a := range l.get(t, "acme", "refund-1").Attempts {
		if a.Finding == model.FindingHasIt {
			ref = a.ProviderRef
		}
	}
	if ref == "" {
		t.Fatal("refund-1 has no lookup that found it")
	}
	for _, size := range []struct{ w, h int }{{120, 40}, {80, 24}, {60, 20}} {
		for _, from := range []string{"list", "detail"} {
			t.Run(fmt.Sprintf("%dx%d from the %s", size.w, size.h, from), func(t *testing.T) {
				h := open(t, config(l), size.w, size.h)
				selectOp(t, h, "acme/refund-1")
				if from == "detail" {
					h.keys("enter")
					containsText(t, h, "! An earlier lookup found it: "+ref, "marking it not applied (n) goes against it")
				}
				h.keys("a")
				containsText(t, h, "Mark applied", "an earlier check found the effect ("+ref+")", "› "+ref)
				h.keys("esc")
				h.keys("n")
				containsText(t, h, "! Against an earlier check", "found the effect ("+ref+")", "went back in time", "sends it a second time", "▸ Reason", "Evidence")
				h.contains("╰")
				h.typeText("customer says no mail came")
				h.keys("tab")
				h.typeText("ticket 4411")
				h.keys("enter")
				containsText(t, h, "Type override and press enter")
				h.keys("y")
				if op := l.get(t, "acme", "refund-1").Operation; op.State != model.StateUnknown {
					t.Fatalf("y wrote a decision against the earlier finding: %s", op.State)
				}
			})
		}
	}
}

// The review waits for the operation's lookups when the provider cannot
// tell: until they are read, enter keeps the form (an earlier "has it"
// must not be missed), and if they cannot be read nothing is written.
func TestTheNotAppliedReviewWaitsForTheLookupsWhenTheProviderCannotTell(t *testing.T) {
	l := wentBackLedger(t)
	h := open(t, config(l), 100, 30)
	selectOp(t, h, "acme/refund-1")
	op, _ := h.m.list.selected()
	fill := func() {
		h.typeText("customer says no mail came")
		h.keys("tab")
		h.typeText("ticket 4411")
		h.keys("enter")
	}

	// The history's read is held back: the form cannot go on.
	next, read := h.m.Update(actionRequestMsg{Action: model.ActionMarkNotApplied, Op: op})
	h.m = next.(Model)
	fill()
	containsText(t, h, "still reading its earlier lookups")
	h.lacks("Write this decision", "Type override")
	h.do(read)
	h.keys("enter")
	containsText(t, h, "! Against an earlier check", "Type override and press enter")
	h.keys("esc", "esc")

	// It fails: nothing can be written.
	next, _ = h.m.Update(actionRequestMsg{Action: model.ActionMarkNotApplied, Op: op})
	h.m = next.(Model)
	h.send(actionOpMsg{Seq: h.m.action.seq, Err: errors.New("database is locked")})
	fill()
	containsText(t, h, "could not be read (database is locked)", "nothing is written without them")
	h.lacks("Write this decision", "Type override")
	if op := l.get(t, "acme", "refund-1").Operation; op.State != model.StateUnknown {
		t.Fatalf("written: %s", op.State)
	}
}

// wentBackWordsPinned rewrites what differs from run to run in a went-back
// reason (the file's path in t.TempDir() and its random id) and in a
// sandbox delivery's words (its wall-clock time), so goldens hold still.
var (
	fileWords     = regexp.MustCompile(`file \S+ \(file id [0-9a-f]+\)`)
	deliveredWord = regexp.MustCompile(`(delivered sbx_\d+) at \S+`)
)

func pinWentBack(msg tea.Msg) tea.Msg {
	fix := func(s string) string {
		return deliveredWord.ReplaceAllString(fileWords.ReplaceAllString(s, "file ledger.provider.db (file id 5eed)"), "$1")
	}
	fixOp := func(op *model.Operation) {
		if op != nil && op.Finding != nil {
			f := *op.Finding
			f.Detail = fix(f.Detail)
			op.Finding = &f
		}
		if op != nil && op.BindingFinding != nil {
			f := *op.BindingFinding
			f.Detail = fix(f.Detail)
			op.BindingFinding = &f
		}
	}
	msg = pinAttempts(msg)
	switch m := msg.(type) {
	case detailMsg:
		if m.Detail != nil {
			cp := *m.Detail
			fixOp(&cp.Operation)
			cp.Attempts = append([]model.Attempt(nil), cp.Attempts...)
			for i := range cp.Attempts {
				cp.Attempts[i].Detail = fix(cp.Attempts[i].Detail)
			}
			m.Detail = &cp
		}
		return m
	case pageMsg:
		m.Rows = append([]model.Operation(nil), m.Rows...)
		for i := range m.Rows {
			fixOp(&m.Rows[i])
		}
		return m
	case actionOpMsg:
		// The detail's pin, for the same attempts read by the form.
		if m.Op != nil {
			pinned := pinAttempts(detailMsg{Detail: &model.Detail{Operation: *m.Op, Attempts: m.Attempts}}).(detailMsg)
			m.Attempts = pinned.Detail.Attempts
		}
		for i := range m.Attempts {
			m.Attempts[i].Detail = fix(m.Attempts[i].Detail)
		}
		return m
	}
	return msg
}

// Goldens: the detail and the "not applied" form of both operations at
// 80×24 and 60×20, where the reason is longest for the room it has.
func TestGoldenTheProviderCannotTell(t *testing.T) {
	l := wentBackLedger(t)
	for _, size := range []struct{ w, h int }{{80, 24}, {60, 20}} {
		name := func(what string) string { return fmt.Sprintf("%s_%dx%d", what, size.w, size.h) }
		for _, key := range []string{"refund-1", "refund-2"} {
			// Pinned from the first page on.
			h := &harness{t: t, m: New(config(l)), pin: pinWentBack}
			t.Cleanup(func() { h.m.Close() })
			h.do(h.m.Init())
			h.send(tea.WindowSizeMsg{Width: size.w, Height: size.h})
			selectOp(t, h, "acme/"+key)
			h.keys("enter")
			what := map[string]string{"refund-1": "earlier_has_it", "refund-2": "cannot_tell"}[key]
			golden(t, name("detail_"+what), h.view())
			h.keys("n")
			golden(t, name("form_"+what), h.view())
			h.m.Close() // its watcher holds one of the store's readers
		}
	}
}

// A bulk "not applied" over rows whose provider cannot tell says why on
// each row and, above its keys, that y writes them on the typed evidence
// alone and what that risks. refund-1's lookups went has it → cannot
// tell: the list's FINDING column shows the earlier "has it", and the
// review counts it against that finding (refused without the override,
// as the ledger would), not among the rows y writes on evidence alone.
func TestABulkNotAppliedReviewSaysWhyTheProviderCannotTell(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {60, 20}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			l := wentBackLedger(t) // y writes: each size its own
			h := open(t, config(l), size.w, size.h)
			containsText(t, h, "has it (earlier)")
			if size.w == 80 {
				golden(t, "list_earlier_has_it_80x24", h.view())
			}
			selectOp(t, h, "acme/refund-2")
			h.keys("space")
			selectOp(t, h, "acme/refund-1")
			h.keys("space", "n")
			h.typeText("customer says no mail came")
			h.keys("tab")
			h.typeText("ticket 4411")
			h.keys("enter")
			if size.w == 80 { // at 60×20 the refused row comes first and refund-2's is "… and 1 more"
				containsText(t, h, "cannot tell (its file went back in time)")
			}
			containsText(t, h, "refused: the provider has it (earlier",
				"! The provider cannot tell about 1 of them (its file went back in time): y writes it on your evidence alone. If one was sent, its next call sends it a second time.",
				"1 operation goes against the provider's finding")
			if size.w == 80 {
				golden(t, "bulk_review_cannot_tell_80x24", h.view())
			}
			// y writes refund-2 on the typed evidence and refund-1 not.
			h.keys("y")
			for key, want := range map[string]model.State{"refund-1": model.StateUnknown, "refund-2": model.StateNotApplied} {
				if got := l.get(t, "acme", key).Operation.State; got != want {
					t.Errorf("%s after y: %s; want %s", key, got, want)
				}
			}
		})
	}
}

// An earlier lookup that found nothing binds "applied" when a later one
// cannot tell, as the ledger's rule does when it writes: the form says so
// and the review takes the typed override, which writes it — the console
// used to offer only y, which the ledger refused, with no way on.
func TestAnEarlierLookupThatFoundNothingNeedsTheOverrideForApplied(t *testing.T) {
	l := wentBackLedger(t)
	h := open(t, config(l), 80, 24)
	selectOp(t, h, "acme/never-1")
	h.keys("enter")
	containsText(t, h, "An earlier lookup found nothing — ops check by bob", "marking it applied (a) goes against it")
	h.keys("a")
	containsText(t, h, "! Against an earlier check: the provider check found nothing", "went back in time")
	h.typeText("sbx_999")
	h.keys("tab")
	h.typeText("the customer has the mail")
	h.keys("enter")
	containsText(t, h, "Type override and press enter")
	h.keys("y")
	if op := l.get(t, "acme", "never-1").Operation; op.State != model.StateUnknown {
		t.Fatalf("y wrote against the earlier finding: %s", op.State)
	}
	h.keys("backspace") // the y went into the override's field
	h.typeText("override")
	h.keys("enter")
	if op := l.get(t, "acme", "never-1").Operation; op.State != model.StateApplied {
		t.Fatalf("override did not write it: %s\n%s", op.State, h.view())
	}
}
