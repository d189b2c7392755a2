package ui

import (
	"context"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// All store I/O of the console happens here, inside tea.Cmds: Update never
// waits on the ledger. Each command returns one small named message with an
// Err field and the sequence number of the request, so a screen that has
// moved on drops an answer it no longer wants.

// ioTimeout bounds one read or decision; a ledger locked longer than this by
// another writer gives a clear error instead of a frozen spinner.
const ioTimeout = 10 * time.Second

// countsMsg carries the state counts of a tenant scope ("" = all).
type countsMsg struct {
	Seq    int
	Tenant string
	Counts store.Counts
	// AllUnknown counts unknown operations in every tenant: a console
	// scoped to one tenant still tells the on-call about the others.
	AllUnknown int
	Err        error
}

func loadCounts(ctx context.Context, st store.Ledger, seq int, tenant string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		c, err := st.Counts(ctx, tenant)
		all := c.ByState[model.StateUnknown]
		if err == nil && tenant != "" {
			var every store.Counts
			if every, err = st.Counts(ctx, ""); err == nil {
				all = every.ByState[model.StateUnknown]
			}
		}
		return countsMsg{Seq: seq, Tenant: tenant, Counts: c, AllUnknown: all, Err: err}
	}
}

// anchorKind says where a page of the list starts.
type anchorKind int

const (
	anchorTop    anchorKind = iota // the newest rows
	anchorBefore                   // rows older than id
	anchorAfter                    // the rows just newer than id
	anchorBottom                   // the oldest rows
)

// anchor pins a page to the ledger by row id (keyset pagination), so paging
// costs the same on page 1 and page 50,000 and never reads the whole ledger.
type anchor struct {
	kind anchorKind
	id   int64
	// row is operation id as the list showed it, when known: a sorted
	// page is bounded by its values then (store.ListQuery.BeforeRow), not
	// by wherever a decision or a sweep has moved it since.
	row *model.Operation
}

// rowAnchor anchors kind at op, by its values as read.
func rowAnchor(kind anchorKind, op model.Operation) anchor {
	return anchor{kind: kind, id: op.ID, row: &op}
}

// pageReq asks for one page of the list.
type pageReq struct {
	Seq    int
	Query  store.ListQuery // filters; the cursor fields are set from Anchor
	Anchor anchor
	Limit  int
	Offset int // the page's position (rows newer than its first) if it loads as asked
	Total  int // rows matching the filters, or -1 if not known (a search)
	// KeepID is the operation under the cursor: if a refresh of the newest
	// page pushed it off, the page is re-anchored so it stays in view.
	KeepID int64
	// KeepPos is KeepID's position before the refresh, and OldTopID the
	// first row's id then; together they say where the re-anchored page is.
	KeepPos  int
	OldTopID int64
	// Newest is the id of the list's first row when it was last known (0:
	// not known): in the default order, the rows newer than it came in
	// above the page since.
	Newest int64
}

// posCap bounds the rows a refresh reads to count those above its page
// (placePage): a page that started further down than this moves by the
// rows that came in at the top instead, so a refresh deep in a million
// rows stays one page's work plus the new rows. A refresh of page 7 (204
// rows above it) took about 5 ms on SQLite, against about 1 ms for the
// page alone (BenchmarkReloadKeptPage, a loaded 2-core machine).
var posCap = 250 // a variable for the tests only

// newCap bounds the rows newer than the list's first row that a refresh
// past posCap reads (the store's largest page): as many as came in since
// the last refresh, which is the work the ledger did meanwhile.
const newCap = store.MaxPage

// pageMsg is one page, newest first.
type pageMsg struct {
	Seq    int
	Rows   []model.Operation
	Anchor anchor
	Offset int
	// Near is the row next to the anchor in the direction the page was
	// asked for (the first row after it, or the last before it), when the
	// answer was another page (the last or the first, the read being
	// short): where the cursor goes if the anchor row itself is not on the
	// page (it moved or went), instead of back over rows already seen.
	Near int64
	// Newest is the id of the list's first row, when the read learned it
	// (0: not learned): pageReq.Newest of the next refresh.
	Newest int64
	// Attempts are the attempts the grace after each unknown or
	// in_progress row's latest request is read from
	// (reconcile.RequestOutcomes), by operation id, read with the page
	// (pageRequests): its help line says what n needs before it is
	// pressed (reconcile.OfferOf, the write's rule). A row missing here
	// (the read failed) is said nothing of; the review still checks.
	Attempts map[int64][]model.Attempt
	Err      error
}

// pageRequests reads the attempts the grace is read from of the rows a
// decision within it may concern (unknown, in_progress), in one batched
// read of the ledger (store.Ledger.RequestHistories), by operation id.
func pageRequests(ctx context.Context, st store.Ledger, rows []model.Operation) (map[int64][]model.Attempt, error) {
	var keys []store.OpKey
	for _, op := range rows {
		if op.State == model.StateUnknown || op.State == model.StateInProgress {
			keys = append(keys, store.OpKey{Tenant: op.Tenant, Key: op.Key})
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	hs, err := st.RequestHistories(ctx, keys, reconcile.RequestOutcomes())
	if err != nil {
		return nil, err
	}
	out := make(map[int64][]model.Attempt, len(hs))
	for _, h := range hs {
		out[h.Operation.ID] = h.Attempts
	}
	return out, nil
}

func loadPage(ctx context.Context, st store.Ledger, req pageReq) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		rows, a, off, near, err := fetchPage(ctx, st, req)
		var newest int64
		if err == nil && req.KeepID != 0 {
			off, newest, err = placePage(ctx, st, req, rows, a, off)
		}
		if err == nil && a.kind == anchorTop && len(rows) > 0 {
			newest = rows[0].ID
		}
		for i := range rows {
			rows[i] = rows[i].Visible() // the one sanitizer; tenant and key stay stored (the row is opened and decided by them) and are drawn through oneLine
		}
		if err != nil {
			return pageMsg{Seq: req.Seq, Err: err}
		}
		attempts, _ := pageRequests(ctx, st, rows) // a failed read leaves the rows without a word on the grace; the review still checks
		return pageMsg{Seq: req.Seq, Rows: rows, Anchor: a, Offset: off, Near: near, Newest: newest, Attempts: attempts}
	}
}

func fetchPage(ctx context.Context, st store.Ledger, req pageReq) (rows []model.Operation, a anchor, off int, near int64, err error) {
	q := req.Query
	q.Limit = req.Limit
	list := func(before, after int64, limit int) ([]model.Operation, error) {
		q := q
		q.BeforeID, q.AfterID, q.Limit = before, after, limit
		if r := req.Anchor.row; r != nil && r.ID == before && before > 0 {
			q.BeforeRow = r
		}
		if r := req.Anchor.row; r != nil && r.ID == after && after > 0 {
			q.AfterRow = r
		}
		if after < 0 {
			// The last rows: the first of the opposite order, turned round.
			q.AfterID, q.Reverse = 0, !q.Reverse
			rows, err := st.List(ctx, q)
			slices.Reverse(rows)
			return rows, err
		}
		return st.List(ctx, q)
	}
	a, off = req.Anchor, req.Offset
	switch a.kind {
	case anchorTop:
		rows, err = list(0, 0, req.Limit)
	case anchorBefore:
		rows, err = list(a.id, 0, req.Limit)
		if err == nil && len(rows) < req.Limit {
			if len(rows) > 0 {
				near = rows[0].ID
			}
			// The last page is short: show the oldest full page instead, so
			// the screen never ends half empty with rows above it unseen.
			a = anchor{kind: anchorBottom}
			rows, err = fetchBottom(list, req.Limit)
			off = bottomOffset(req.Total, len(rows), off)
		}
	case anchorAfter:
		rows, err = list(0, a.id, req.Limit)
		if err == nil && len(rows) < req.Limit {
			if len(rows) > 0 {
				near = rows[len(rows)-1].ID
			}
			// Fewer rows above than a page: this is the newest page.
			a, off = anchor{kind: anchorTop}, 0
			rows, err = list(0, 0, req.Limit)
		}
	case anchorBottom:
		rows, err = fetchBottom(list, req.Limit)
		off = bottomOffset(req.Total, len(rows), off)
	}
	if err != nil {
		return nil, req.Anchor, req.Offset, 0, err
	}
	if req.KeepID != 0 && a.kind == anchorTop && !contains(rows, req.KeepID) {
		// New rows pushed the selected operation off the first page. Show
		// the page that holds it (if it still matches the filters).
		if q.Sort != "" && q.Sort != model.SortAge {
			rows, a, off, err := keepSorted(list, req, rows, a, off)
			return rows, a, off, 0, err
		}
		kept, err := list(0, req.KeepID-1, req.Limit)
		if err != nil {
			return nil, req.Anchor, req.Offset, 0, err
		}
		if len(kept) > 0 && kept[len(kept)-1].ID == req.KeepID {
			// The rows newer than the old first row came in above it (a
			// page of them may be fewer than came: count them all, up to
			// posCap; placePage counts exactly below that).
			newer := 0
			if req.OldTopID != 0 {
				n, err := list(0, req.OldTopID, posCap+1)
				if err != nil {
					return nil, req.Anchor, req.Offset, 0, err
				}
				newer = len(n)
			}
			off = req.KeepPos + newer - (len(kept) - 1)
			if off < 0 {
				off = 0
			}
			return kept, anchor{kind: anchorAfter, id: req.KeepID - 1}, off, 0, nil
		}
	}
	return rows, a, off, near, nil
}

// placePage is where a page read again under a kept operation (a live
// refresh, a resize, following a link) starts in the list now: rows came
// in above it, or left, since its offset was counted. Off the first page
// (0), where it started within posCap rows of the top, it counts the rows
// above the page's first, up to posCap — the last page too: the total it
// was placed by (bottomOffset) is the counts' from before this refresh.
// Further down, in the default order, the offset moves by the rows newer
// than the list's first row was (up to newCap); rows that change state
// above it there (a decision, a sweep) are not counted.
// It returns the offset and, when it learned it, the list's first row's
// id now.
func placePage(ctx context.Context, st store.Ledger, req pageReq, rows []model.Operation, a anchor, off int) (int, int64, error) {
	if len(rows) == 0 || a.kind == anchorTop {
		return off, 0, nil
	}
	q := req.Query
	q.BeforeID, q.BeforeRow, q.AfterRow = 0, nil, nil
	if req.Offset <= posCap {
		first := rows[0]
		q.AfterID, q.AfterRow, q.Limit = first.ID, &first, posCap+1
		above, err := st.List(ctx, q)
		if err != nil {
			return off, 0, err
		}
		if len(above) <= posCap {
			newest := first.ID
			if len(above) > 0 {
				newest = above[0].ID
			}
			return len(above), newest, nil
		}
	}
	if a.kind != req.Anchor.kind || q.Sort != "" && q.Sort != model.SortAge || q.Reverse || req.Newest == 0 {
		// Re-anchored (fetchPage counted that), or a sorted list, where
		// rows move anywhere: the offset as fetchPage has it.
		return off, 0, nil
	}
	q.AfterID, q.AfterRow, q.Limit = req.Newest, nil, newCap
	newer, err := st.List(ctx, q)
	if err != nil {
		return off, 0, err
	}
	newest := req.Newest
	if len(newer) > 0 {
		newest = newer[0].ID
	}
	return off + len(newer), newest, nil
}

// keepSorted is the page that starts with the kept operation in a sorted
// list: anchored after the row just before it in that order.
func keepSorted(list func(before, after int64, limit int) ([]model.Operation, error), req pageReq, rows []model.Operation, a anchor, off int) ([]model.Operation, anchor, int, error) {
	prev, err := list(0, req.KeepID, 1)
	if err != nil || len(prev) == 0 {
		return rows, a, off, err
	}
	kept, err := list(prev[0].ID, 0, req.Limit)
	if err != nil {
		return nil, req.Anchor, req.Offset, err
	}
	if len(kept) == 0 || kept[0].ID != req.KeepID {
		return rows, a, off, nil
	}
	if len(kept) < req.Limit {
		// Near the end of the order: the last full page holds it, and the
		// screen never ends half empty with rows above it unseen.
		last, err := fetchBottom(list, req.Limit)
		if err != nil {
			return nil, req.Anchor, req.Offset, err
		}
		return last, anchor{kind: anchorBottom}, bottomOffset(req.Total, len(last), max(req.KeepPos, 1)), nil
	}
	return kept, rowAnchor(anchorBefore, prev[0]), max(req.KeepPos, 1), nil
}

// fetchBottom reads the last page: the first rows of the opposite order,
// turned round.
func fetchBottom(list func(before, after int64, limit int) ([]model.Operation, error), limit int) ([]model.Operation, error) {
	return list(0, -1, limit)
}

func bottomOffset(total, n, fallback int) int {
	if total < 0 {
		return fallback
	}
	if off := total - n; off > 0 {
		return off
	}
	return 0
}

func contains(rows []model.Operation, id int64) bool {
	for _, r := range rows {
		if r.ID == id {
			return true
		}
	}
	return false
}

// detailMsg carries one operation with its history.
type detailMsg struct {
	Seq    int
	Detail *model.Detail
	Err    error
	// Replaced: a new key not yet used (authorized) was never sent, so
	// the finding that binds its decision is the key's it replaced
	// (reconcile's bindingFindingTx): that key and its finding as its
	// FINDING column shows it (nil: not checked).
	Replaced *replacedFinding
}

// replacedFinding is the finding of the key a new key replaced.
type replacedFinding struct {
	Key     string
	Finding *model.Finding
}

// detailTarget names the operation a detail view shows: by (tenant, key),
// or by row id when following a link.
type detailTarget struct {
	Tenant, Key string
	ID          int64
}

func loadDetail(ctx context.Context, st store.Ledger, seq int, t detailTarget) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		var d *model.Detail
		var err error
		if t.ID != 0 {
			d, err = st.DetailByID(ctx, t.ID)
		} else {
			d, err = st.Detail(ctx, t.Tenant, t.Key)
		}
		msg := detailMsg{Seq: seq, Detail: d.Visible(), Err: err}
		if err == nil && d.Operation.State == model.StateAuthorized && d.Operation.SupersedesID != 0 {
			old, oerr := st.DetailByID(ctx, d.Operation.SupersedesID)
			switch {
			case oerr == nil:
				o := old.Visible().Operation
				msg.Replaced = &replacedFinding{Key: o.Key, Finding: o.Shown()}
			case !model.IsCode(oerr, model.CodeNotFound):
				msg.Err = oerr
			}
		}
		return msg
	}
}

// watchMsg hands over the pinned connection that notices other writers.
type watchMsg struct {
	Watcher store.Watcher
	Err     error
}

func openWatcher(ctx context.Context, st store.Ledger) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		w, err := st.Watch(ctx)
		return watchMsg{Watcher: w, Err: err}
	}
}

// tickMsg is the refresh heartbeat.
type tickMsg struct{ At time.Time }

func tick(d time.Duration) tea.Cmd {
	return tea.Tick(d, func(t time.Time) tea.Msg { return tickMsg{At: t} })
}

// changedMsg says whether another connection committed since the last poll
// (PRAGMA data_version: one tiny query, not a re-read of the ledger).
type changedMsg struct {
	Changed bool
	Err     error
}

func pollChanged(ctx context.Context, w store.Watcher) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		ch, err := w.Changed(ctx)
		return changedMsg{Changed: ch, Err: err}
	}
}

// decisionMsg is the outcome of an operator decision.
type decisionMsg struct {
	Seq    int
	Action model.Action
	Tenant string
	Key    string
	From   model.State
	Op     *model.Operation // after the decision
	NewOp  *model.Operation // authorize a new key: the authorized operation
	Err    error
}

func decide(ctx context.Context, svc *reconcile.Service, seq int, action model.Action, d reconcile.Decision) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		msg := decisionMsg{Seq: seq, Action: action, Tenant: d.Tenant, Key: d.Key, From: d.ExpectState}
		switch action {
		case model.ActionMarkApplied:
			msg.Op, msg.Err = svc.MarkApplied(ctx, d)
		case model.ActionMarkNotApplied:
			msg.Op, msg.Err = svc.MarkNotApplied(ctx, d)
		case model.ActionAuthorizeKey:
			msg.Op, msg.NewOp, msg.Err = svc.AuthorizeNewKey(ctx, d)
		default:
			msg.Err = model.Errorf(model.CodeInvalid, "unknown action %q", action)
		}
		msg.Op, msg.NewOp = visibleOp(msg.Op), visibleOp(msg.NewOp)
		return msg
	}
}

// actionOpMsg is a fresh read of the operation an open decision is about,
// with who changed it last.
type actionOpMsg struct {
	Seq int
	Op  *model.Operation
	// Last is the operation's latest decision, if it has one: who moved
	// it on under the open form.
	Last *model.Decision
	// Attempts is its history: the form looks for an earlier lookup that
	// found the effect when the last one could not tell.
	Attempts []model.Attempt
	Err      error
}

func loadActionOp(ctx context.Context, st store.Ledger, seq int, tenant, key string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		d, err := st.Detail(ctx, tenant, key)
		if err != nil {
			return actionOpMsg{Seq: seq, Err: err}
		}
		d = d.Visible()
		msg := actionOpMsg{Seq: seq, Op: &d.Operation, Attempts: d.Attempts}
		if op := d.Operation; op.State == model.StateAuthorized && op.SupersedesID != 0 {
			// A new key not yet used was never sent: the lookups that bind
			// its decision are the replaced key's (a held key's "has it",
			// whose reference its mark applied starts from), as the
			// ledger checks them when it writes.
			old, err := st.DetailByID(ctx, op.SupersedesID)
			switch {
			case err == nil:
				msg.Attempts = old.Visible().Attempts
			case !model.IsCode(err, model.CodeNotFound):
				return actionOpMsg{Seq: seq, Err: err}
			default:
				msg.Attempts = nil
			}
		}
		if n := len(d.Decisions); n > 0 {
			msg.Last = &d.Decisions[n-1]
		}
		return msg
	}
}

// checkMsg is what the provider said about an operation's downstream key.
type checkMsg struct {
	Seq         int
	Tenant, Key string
	Evidence    provider.Evidence
	Err         error
}

// check asks the provider and records the finding (the console never
// checks read-only: it opens no provider then).
func check(ctx context.Context, svc *reconcile.Service, seq int, tenant, key, operator string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		_, looked, err := svc.CheckAndRecord(ctx, tenant, key, "console by "+operator)
		ev := looked.Evidence
		switch {
		case err == nil && looked.InFlight:
			// The provider answered, but a claim was live: its "has
			// nothing" is no evidence (reconcile.Look), and it did not fail.
			err = model.Wrap(model.CodeUnavailable, looked.Err, "provider %s was %v", ev.Provider, looked.Err)
		case err == nil && looked.Finding.Kind == model.FindingHasOther:
			// The provider answered, about another request under the key:
			// no evidence either way, and it did not fail.
			err = model.Wrap(model.CodeUnavailable, looked.Err, "%v", looked.Err)
		case err == nil && looked.Err != nil:
			err = model.Wrap(model.CodeUnavailable, looked.Err, "provider %s lookup failed: %v", ev.Provider, looked.Err)
		}
		// A provider's answer is outside text too.
		ev.Provider, ev.DownstreamKey = textsafe.Visible(ev.Provider), textsafe.Visible(ev.DownstreamKey)
		ev.Ref, ev.Status, ev.Detail = textsafe.Visible(ev.Ref), textsafe.Visible(ev.Status), textsafe.Visible(ev.Detail)
		if looked.ReplacedKey != "" {
			// A new key was never sent: the check asked about the key it
			// replaced (reconcile.CheckAndRecord), and says so.
			ev.Detail = "asked about the key it replaced, " + textsafe.Visible(looked.ReplacedKey) + " (this new key was never sent): " + ev.Detail
		}
		return checkMsg{Seq: seq, Tenant: tenant, Key: key, Evidence: ev, Err: err}
	}
}

// visibleOp is op for the screen (model.Operation.Visible), nil stays nil.
func visibleOp(op *model.Operation) *model.Operation {
	if op == nil {
		return nil
	}
	v := op.Visible()
	return &v
}

// emit turns a message into a command (screens ask the root for navigation
// this way instead of reaching into each other).
func emit(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }
