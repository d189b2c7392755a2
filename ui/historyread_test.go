package ui

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// fromOp is what the decision form would take as its earlier finding from
// the operation as the screen shows it (its binding finding, filled in by
// the store from the attempts), were it not to read the operation's
// lookups when it opens.
func fromOp(op model.Operation) *model.Finding {
	if f := op.Binding(); f.Conclusive() {
		return f
	}
	return nil
}

// sameFinding compares two findings but for Earlier (which only says
// whether the latest lookup is another one: the form does not use it).
func sameFinding(a, b *model.Finding) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Earlier, y.Earlier = false, false
	return reflect.DeepEqual(x, y)
}

// The decision form reads an operation's lookups when it opens (the
// provider cannot tell now, the last lookup found nothing, or is stale) to
// find an earlier lookup that binds the decision. Over every kind of
// history, on the same ledger, that read gives what the operation's
// binding finding, as the list and the detail show it, already says.
func TestTheFormsHistoryReadEqualsTheListedBindingFinding(t *testing.T) {
	const (
		it      = model.FindingHasIt
		nothing = model.FindingHasNothing
		cannot  = model.FindingCannotTell
		retry   = model.FindingKind("")
	)
	histories := [][]model.FindingKind{
		nil,
		{it}, {nothing}, {cannot},
		{it, retry}, {nothing, retry}, {cannot, retry},
		{it, cannot}, {it, nothing}, {nothing, cannot}, {nothing, it}, {cannot, it}, {cannot, nothing},
		{it, nothing, cannot}, {it, retry, cannot}, {nothing, retry, cannot}, {nothing, cannot, retry},
		{it, it}, {it, cannot, it}, {nothing, nothing}, {nothing, retry, nothing}, {it, retry, nothing, cannot},
		{cannot, cannot}, {retry, cannot}, {retry, it}, {it, nothing, retry}, {nothing, it, cannot, retry},
	}
	l := newLedger(t)
	ctx := context.Background()
	keys := map[string][]model.FindingKind{}
	for i, hist := range histories {
		key := fmt.Sprintf("h-%02d", i)
		keys[key] = hist
		l.inFlight(t, "acme", key, "cfo@acme.example")
		recordLookups(t, l, key, hist)
	}
	l.clock.Advance(2 * time.Hour)
	if _, err := l.svc.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	listed, err := l.st.List(ctx, store.ListQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, row := range listed {
		hist, ok := keys[row.Key]
		if !ok {
			continue
		}
		seen++
		d := l.get(t, "acme", row.Key).Visible()
		read := earlierFinding(d.Operation.Provider, d.Attempts) // what the form's read gives
		name := strings.Trim(fmt.Sprint(hist), "[]")
		if got := fromOp(row.Visible()); !sameFinding(got, read) {
			t.Errorf("%s (%s): the list row's binding finding %+v, the form's read %+v", row.Key, name, got, read)
		}
		if got := fromOp(d.Operation); !sameFinding(got, read) {
			t.Errorf("%s (%s): the detail's binding finding %+v, the form's read %+v", row.Key, name, got, read)
		}
	}
	if seen != len(histories) {
		t.Fatalf("listed %d of %d operations", seen, len(histories))
	}
}

// The read is not redundant all the same: it is made when the form opens,
// and the row on screen may be older. Here another process records a
// lookup that found the effect after the list was drawn; the list still
// says "cannot tell". The "not applied" form, reading the lookups, asks
// for the override before anything is written — from the row alone it
// would not know.
func TestTheFormReadsALookupRecordedAfterTheListWasDrawn(t *testing.T) {
	l := newLedger(t)
	l.inFlight(t, "acme", "late-1", "cfo@acme.example")
	l.clock.Advance(2 * time.Hour)
	if _, err := l.svc.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	recordLookups(t, l, "late-1", []model.FindingKind{model.FindingCannotTell})
	h := open(t, config(l), 120, 40)
	selectOp(t, h, "acme/late-1")
	h.contains("cannot tell")
	recordLookups(t, l, "late-1", []model.FindingKind{model.FindingHasIt, model.FindingCannotTell}) // another console's triage
	row := h.m.list.rows[h.m.list.cursor]
	if fromOp(row) != nil {
		t.Fatalf("the row on screen already knows the later lookup: %+v", row.Binding())
	}
	h.keys("n")
	containsText(t, h, "! Against an earlier check", "found the effect (sbx_earlier)")
}
