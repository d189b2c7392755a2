package ui

import (
	"context"
	"fmt"
	"sort"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// Marked rows of the list, for a bulk decision: space marks the row under
// the cursor, v marks every row between the last one marked and the
// cursor, * marks every operation in the view (tab, search, tenant), esc
// clears the marks. Each mark keeps the operation as it was on screen —
// its state and version are what its decision will expect.

// marks is a set of operations by row id, in the order they were marked.
type marks struct {
	ops   map[int64]model.Operation
	order []int64
	// anchor is the last operation marked one at a time: v marks from it.
	anchor int64
}

func (mk marks) has(id int64) bool { _, ok := mk.ops[id]; return ok }
func (mk marks) len() int          { return len(mk.ops) }

func (mk marks) clone() marks {
	out := marks{ops: make(map[int64]model.Operation, len(mk.ops)+1), order: append([]int64(nil), mk.order...), anchor: mk.anchor}
	for k, v := range mk.ops {
		out.ops[k] = v
	}
	return out
}

func (mk marks) add(op model.Operation) marks {
	if mk.has(op.ID) {
		return mk
	}
	mk.ops[op.ID] = op
	mk.order = append(mk.order, op.ID)
	return mk
}

func (mk marks) toggle(op model.Operation) marks {
	mk = mk.clone()
	if mk.has(op.ID) {
		delete(mk.ops, op.ID)
		for i, id := range mk.order {
			if id == op.ID {
				mk.order = append(mk.order[:i], mk.order[i+1:]...)
				break
			}
		}
		return mk
	}
	mk.anchor = op.ID
	return mk.add(op)
}

// list is the marked operations, newest first (as the list shows them).
func (mk marks) list() []model.Operation {
	out := make([]model.Operation, 0, len(mk.ops))
	for _, id := range mk.order {
		out = append(out, mk.ops[id])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out
}

// markAllMsg is every operation in the view, for *.
type markAllMsg struct {
	Seq       int
	Ops       []model.Operation
	Truncated bool // more than reconcile.MaxBulk match
	Err       error
}

func loadMarkAll(ctx context.Context, st store.Ledger, seq int, q store.ListQuery) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		q.Limit = reconcile.MaxBulk + 1
		ops, err := st.List(ctx, q)
		for i := range ops {
			ops[i] = ops[i].Visible() // for the screen; tenant and key stay the stored ones (the marks and their decisions name them)
		}
		msg := markAllMsg{Seq: seq, Err: err}
		if len(ops) > reconcile.MaxBulk {
			ops, msg.Truncated = ops[:reconcile.MaxBulk], true
		}
		msg.Ops = ops
		return msg
	}
}

// markKey handles the marking keys; ok is false if msg is not one.
func (l listModel) markKey(k string, e env) (listModel, tea.Cmd, bool) {
	switch k {
	case " ", "space":
		op, ok := l.selected()
		if !ok {
			return l, nil, true
		}
		l.marked = l.marked.toggle(op)
		l, c := l.down(e)
		return l, c, true
	case "v":
		op, ok := l.selected()
		if !ok {
			return l, nil, true
		}
		from := -1
		for i, r := range l.rows {
			if r.ID == l.marked.anchor {
				from = i
			}
		}
		mk := l.marked.clone()
		if from < 0 {
			// The anchor is not on this page: v marks the cursor row.
			mk = mk.toggle(op)
		} else {
			lo, hi := min(from, l.cursor), max(from, l.cursor)
			for _, r := range l.rows[lo : hi+1] {
				mk = mk.add(r)
			}
			mk.anchor = op.ID
		}
		l.marked = mk
		return l, nil, true
	case "*":
		l.markSeq++
		return l, loadMarkAll(e.ctx, e.st, l.markSeq, l.query_(e)), true
	}
	return l, nil, false
}

// markedAll takes the answer to *.
func (l listModel) markedAll(msg markAllMsg) (listModel, tea.Cmd) {
	if msg.Seq != l.markSeq {
		return l, nil
	}
	if msg.Err != nil {
		return l, emit(bannerMsg{kind: bannerErr, text: "Cannot mark all: " + oneLine(msg.Err.Error())})
	}
	mk := l.marked.clone()
	for _, op := range msg.Ops {
		mk = mk.add(op)
	}
	l.marked = mk
	text := fmt.Sprintf("Marked %s in this view (%s marked). a or n decides on all of them; esc clears the marks.",
		plural(len(msg.Ops), "operation", "operations"), count(mk.len()))
	if msg.Truncated {
		text = fmt.Sprintf("Marked the newest %s in this view (a bulk decision takes at most that many); esc clears the marks.", count(len(msg.Ops)))
	}
	return l, emit(bannerMsg{kind: bannerInfo, text: text})
}
