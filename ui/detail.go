package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// The detail view: everything the ledger knows about one operation — its
// request, state, receipt, provider references, every attempt and every
// decision — in a scrollable viewport, with the decisions its state allows.

// checkOff is why a read-only console does not ask the provider.
const checkOff = "Provider checks are off in a read-only console: it opens no provider. Use `retrysafe ops check` or reopen without --read-only."

// checkState is the last provider check of the operation on screen.
type checkState struct {
	tenant, key string
	ev          provider.Evidence
	err         error
	at          time.Time
	// version is the operation's version on screen when the answer came:
	// a check the ledger did not record has no time to compare attempts
	// with, and is out of date once the operation moves on.
	version int64
	// outdated, when set, says why the check is no evidence any more: an
	// attempt that may have reached the provider came after it, or the
	// provider was asked again since (reconcile.CheckOutdated). It is
	// shown as such, and no decision takes it (current).
	outdated string
}

// current is the check while it is evidence for a decision: nil once it
// is out of date.
func (c *checkState) current() *checkState {
	if c == nil || c.outdated != "" {
		return nil
	}
	return c
}

// against is c as of op, read after it: a check that found nothing (or
// could not tell) belongs to the attempts it was made after, and is out of
// date once another attempt that may have reached the provider, or
// another lookup, is recorded. One that found the effect stands: a
// provider never takes a delivery back.
func (c *checkState) against(op model.Operation) *checkState {
	if c == nil || c.outdated != "" || c.tenant != op.Tenant || c.key != op.Key || (c.err == nil && c.ev.Found) {
		return c
	}
	why := ""
	switch ev := c.ev; {
	case !ev.CheckedAt.IsZero():
		ev.Found = false
		why = reconcile.CheckOutdated(&ev, op.Finding)
	case c.version != 0 && op.Version != c.version:
		why = fmt.Sprintf("the operation moved on since (version %d, now %d)", c.version, op.Version)
	}
	if why == "" {
		return c
	}
	out := *c
	out.outdated = why
	return &out
}

type detailModel struct {
	keys     detailKeys
	target   detailTarget
	d        *model.Detail
	vp       viewport.Model
	seq      int
	loading  bool
	err      error
	checking bool
	checkSeq int
	check    *checkState
	// replaced: a new key's binding finding, the key's it replaced.
	replaced *replacedFinding
	// history is the trail of followed links; esc walks back along it.
	history       []detailTarget
	width, height int
}

func newDetail() detailModel {
	vp := viewport.New(0, 0)
	vp.MouseWheelEnabled = true
	vp.MouseWheelDelta = 3
	return detailModel{keys: newDetailKeys(), vp: vp}
}

// open shows an operation fresh from the list, the lab or a banner.
func (d detailModel) open(t detailTarget, doCheck bool, e env) (detailModel, tea.Cmd) {
	d.history = nil
	return d.show(t, doCheck, e)
}

func (d detailModel) show(t detailTarget, doCheck bool, e env) (detailModel, tea.Cmd) {
	d.target, d.d, d.err, d.check, d.checking = t, nil, nil, nil, false
	// A provider check still in flight is for the operation being left:
	// its answer must not land on this one.
	d.checkSeq++
	d.vp.SetContent("")
	d.vp.GotoTop()
	d.seq++
	d.loading = true
	cmds := []tea.Cmd{loadDetail(e.ctx, e.st, d.seq, t)}
	switch {
	case doCheck && !e.canCheck:
		cmds = append(cmds, emit(bannerMsg{kind: bannerErr, text: checkOff}))
	case doCheck:
		var c tea.Cmd
		d, c = d.startCheck(e, t.Tenant, t.Key)
		cmds = append(cmds, c)
	}
	return d, tea.Batch(cmds...)
}

// reload re-reads the operation on screen, keeping the scroll position.
func (d detailModel) reload(e env) (detailModel, tea.Cmd) {
	if d.target == (detailTarget{}) {
		return d, nil
	}
	d.seq++
	d.loading = d.d == nil
	return d, loadDetail(e.ctx, e.st, d.seq, d.target)
}

func (d detailModel) resize(e env, w, h int) detailModel {
	d.width = w
	d.vp.Width = w
	return d.fitHeight(h).render(e)
}

// fitHeight gives the viewport the body's height less the title and status
// lines. The root calls it whenever the body changes (a banner comes or
// goes), so scrolling — G above all — reaches the last line on screen.
func (d detailModel) fitHeight(h int) detailModel {
	if h == d.height {
		return d
	}
	d.height = h
	d.vp.Height = max(h-2, 1)
	d.vp.SetYOffset(d.vp.YOffset)
	return d
}

func (d detailModel) update(msg tea.Msg, e env) (detailModel, tea.Cmd) {
	switch msg := msg.(type) {
	case detailMsg:
		if msg.Seq != d.seq {
			return d, nil
		}
		d.loading = false
		if msg.Err != nil {
			d.err = msg.Err
			return d.render(e), nil
		}
		d.err = nil
		d.d, d.replaced = msg.Detail, msg.Replaced
		op := msg.Detail.Operation
		// The check on screen belongs to the attempts it was made after:
		// the operation read again may have moved on past it.
		d.check = d.check.against(op)
		// Later reloads ask by (tenant, key): a followed link came by id.
		d.target = detailTarget{Tenant: op.Tenant, Key: op.Key}
		return d.render(e), nil
	case checkMsg:
		if msg.Seq != d.checkSeq || !d.shows(msg.Tenant, msg.Key) {
			return d, nil
		}
		d.checking = false
		d.check = &checkState{tenant: msg.Tenant, key: msg.Key, ev: msg.Evidence, err: msg.Err, at: e.now}
		if d.d != nil {
			d.check.version = d.d.Operation.Version
		}
		// The check was recorded as a finding: read it back with its
		// lookup attempt.
		return d.render(e).reload(e)
	}
	return d, nil
}

// shows reports whether the detail is of operation tenant/key.
func (d detailModel) shows(tenant, key string) bool {
	if d.d != nil {
		return d.d.Operation.Tenant == tenant && d.d.Operation.Key == key
	}
	return d.target.ID == 0 && d.target.Tenant == tenant && d.target.Key == key
}

func (d detailModel) startCheck(e env, tenant, key string) (detailModel, tea.Cmd) {
	d.checkSeq++
	d.checking = true
	return d, check(e.ctx, e.svc, d.checkSeq, tenant, key, e.operator)
}

func (d detailModel) key(msg tea.KeyMsg, e env) (detailModel, tea.Cmd) {
	k := d.keys
	switch {
	case key.Matches(msg, k.Up):
		d.vp.LineUp(1)
	case key.Matches(msg, k.Down):
		d.vp.LineDown(1)
	case key.Matches(msg, k.PageUp):
		d.vp.PageUp()
	case key.Matches(msg, k.PageDown):
		d.vp.PageDown()
	case key.Matches(msg, k.Top):
		d.vp.GotoTop()
	case key.Matches(msg, k.Bottom):
		d.vp.GotoBottom()
	case key.Matches(msg, k.Back):
		if n := len(d.history); n > 0 {
			prev := d.history[n-1]
			d.history = d.history[:n-1]
			return d.show(prev, false, e)
		}
		return d, emit(backMsg{})
	case key.Matches(msg, k.Newer):
		if d.d != nil && d.d.SupersededBy != nil {
			return d.follow(d.d.SupersededBy.ID, e)
		}
	case key.Matches(msg, k.Older):
		if d.d != nil && d.d.Supersedes != nil {
			return d.follow(d.d.Supersedes.ID, e)
		}
	case key.Matches(msg, k.Apply):
		return d, d.request(model.ActionMarkApplied)
	case key.Matches(msg, k.NotApply):
		return d, d.request(model.ActionMarkNotApplied)
	case key.Matches(msg, k.NewKey):
		return d, d.request(model.ActionAuthorizeKey)
	case key.Matches(msg, k.Copy) && d.d != nil:
		return d, emit(copyMenuMsg{Items: copyMenuItems(d.d, ledgerArg(e.st.Path()), e.cmdFlags)})
	case key.Matches(msg, k.CopyCmd) && d.d != nil:
		op := d.d.Operation
		return d, emit(copyRequestMsg{Tenant: op.Tenant, Key: op.Key, Command: true, Unknown: op.State == model.StateUnknown})
	case key.Matches(msg, k.Page):
		if d.d != nil {
			return d, writePagerFile(d.d)
		}
	case key.Matches(msg, k.Check):
		if d.d == nil || d.checking {
			return d, nil
		}
		op := d.d.Operation
		switch {
		case op.Provider == "":
			return d, emit(bannerMsg{kind: bannerInfo, text: fmt.Sprintf("%s/%s is a local %s: its effect commits with the ledger, so there is no provider to ask.", op.Tenant, op.Key, op.Tool)})
		case !e.canCheck:
			return d, emit(bannerMsg{kind: bannerErr, text: checkOff})
		}
		return d.startCheck(e, op.Tenant, op.Key)
	}
	return d, nil
}

func (d detailModel) follow(id int64, e env) (detailModel, tea.Cmd) {
	d.history = append(d.history, d.target)
	return d.show(detailTarget{ID: id}, false, e)
}

func (d detailModel) request(a model.Action) tea.Cmd {
	if d.d == nil {
		return nil
	}
	return emit(actionRequestMsg{Action: a, Op: d.d.Operation})
}

func (d detailModel) mouse(msg tea.MouseMsg) detailModel {
	d.vp, _ = d.vp.Update(msg)
	return d
}

func (d detailModel) keyMap(e env) keyMap {
	k := d.keys
	external := false
	if d.d != nil {
		external = d.d.Operation.Provider != ""
	}
	can := func(a model.Action) bool { return d.d != nil && !e.readOnly && allowed(d.d.Operation, a, e.now) }
	apply := enabled(k.Apply, can(model.ActionMarkApplied))
	notApply := enabled(k.NotApply, can(model.ActionMarkNotApplied))
	newKey := enabled(k.NewKey, can(model.ActionAuthorizeKey))
	chk := enabled(k.Check, e.canCheck && external)
	links := enabled(helpNewer, d.d != nil && (d.d.SupersededBy != nil || d.d.Supersedes != nil))
	// What the write asks for first (the typed override: within the
	// grace after its latest request, until when; against the finding
	// that binds it) is said on the keys (reconcile.OfferOf).
	aWords, nWords, sWords := "applied", "not applied", "new key"
	if apply.Enabled() {
		aWords += needsWords(d.offer(e, model.ActionMarkApplied), e)
	}
	nNeeds := ""
	if notApply.Enabled() {
		nNeeds = needsWords(d.offer(e, model.ActionMarkNotApplied), e)
		nWords += nNeeds
	}
	if w := needsWords(d.offer(e, model.ActionAuthorizeKey), e); newKey.Enabled() && w != "" {
		sWords += w
		if w == nNeeds {
			sWords = "new key: override" // why, and until when, said just before
		}
	}
	return keyMap{
		short: []key.Binding{relabel(chk, "check"), relabel(apply, aWords), relabel(notApply, nWords), relabel(newKey, sWords), k.Back,
			links, helpPage},
		full: [][]key.Binding{
			{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
			{k.Back, k.Newer, k.Older},
			{enabled(k.Apply, !e.readOnly), enabled(k.NotApply, !e.readOnly), enabled(k.NewKey, !e.readOnly), enabled(k.Check, e.canCheck), k.Page, k.Copy, k.CopyCmd},
		},
	}
}

// offer is what the write's rules say of a on the operation shown, from
// its attempts, at e.now (reconcile.OfferOf).
func (d detailModel) offer(e env, a model.Action) reconcile.Offer {
	if d.d == nil {
		return reconcile.Offer{Action: a}
	}
	return e.svc.OfferOf(a, d.d.Operation, d.d.Attempts, e.now)
}

// render lays the operation out for the viewport's width; it runs when the
// data or the width changes, not on every key.
func (d detailModel) render(e env) detailModel {
	if d.d == nil || d.width == 0 {
		return d
	}
	y := d.vp.YOffset
	d.vp.SetContent(renderDetail(e, d.d, d.replaced, d.check, d.checking, d.width))
	d.vp.SetYOffset(y)
	return d
}

func (d detailModel) view(e env, w, h int) string {
	s := e.styles
	switch {
	case d.d == nil && d.err != nil:
		return "\n" + s.BannerErr.Render("  "+localTimes(oneLine(d.err.Error()), e)) + "\n" + s.Muted.Render("  esc goes back")
	case d.d == nil:
		return "\n" + s.Muted.Render("  loading "+or(oneLine(d.target.Tenant+"/"+d.target.Key), "operation")+"…")
	}
	op := d.d.Operation
	badge := s.State(op.State).Render(strings.ToUpper(string(op.State))) + s.Muted.Render(fmt.Sprintf(" · v%d", op.Version))
	if op.Contradicted {
		badge = s.Contra.Render("! CONTRADICTED") + "  " + badge
	}
	// The state badge is never cut: a long key gives way, in its middle
	// (keys differ at their ends), and keeps a gap before the badge.
	name := clipMiddle(op.Tenant+" / "+op.Key, max(w-ansi.StringWidth(badge)-4, 8))
	title := " " + s.Title.Render(name)
	var b strings.Builder
	b.WriteString(spread(title, badge+" ", w))
	b.WriteByte('\n')
	b.WriteString(d.vp.View())
	b.WriteByte('\n')
	pos := ""
	if d.vp.TotalLineCount() > d.vp.Height {
		pos = fmt.Sprintf("%d%% · ↑/↓ pgup/pgdn scroll", int(d.vp.ScrollPercent()*100))
	}
	back := "esc back to the list"
	if len(d.history) > 0 {
		back = "esc back to " + oneLine(d.history[len(d.history)-1].Key)
	}
	status := s.Muted.Render(" " + back)
	if d.err != nil {
		status = s.BannerErr.Render(" refresh failed: " + localTimes(oneLine(d.err.Error()), e))
		if e.readBanner {
			status = s.BannerErr.Render(" refresh failed (see above)")
		}
	}
	b.WriteString(spread(status, s.Muted.Render(pos+" "), w))
	return b.String()
}

// renderDetail is the viewport's content.
func renderDetail(e env, d *model.Detail, replaced *replacedFinding, chk *checkState, checking bool, w int) string {
	s := e.styles
	op := d.Operation
	// A check out of date is said as such, and is no evidence: everything
	// below reads as if there were none.
	old := chk
	if chk = chk.current(); chk != nil {
		old = nil
	}
	var b strings.Builder
	line := func(str string) { b.WriteString(str + "\n") }
	const labelW = 15
	valW := max(w-labelW-4, 20)
	field := func(label, value string) {
		if value == "" {
			return
		}
		lines := strings.Split(wrap(value, valW, ",; "), "\n")
		for i, l := range lines {
			lab := ""
			if i == 0 {
				lab = label
			}
			line("  " + s.Label.Render(fit(lab, labelW)) + " " + l)
		}
	}
	when := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return clockTime(t, e) + s.Muted.Render(" ("+age(e.now, t)+" ago)")
	}
	para := func(style func(...string) string, text string) {
		for _, l := range strings.Split(wrap(text, max(w-4, 20), " "), "\n") {
			line("  " + style(l))
		}
	}

	// What this state means, and what a person can do about it.
	line("")
	switch op.State {
	case model.StateUnknown:
		para(s.State(model.StateUnknown).Render, "The outcome is unknown: the provider may or may not have applied it, and nothing leaves unknown by itself.")
		if late := lateApplied(op, nil); late != nil {
			// Not "may or may not": the provider said it did (contradicted.go).
			text := "! The provider said it applied it (" + late.Ref + "), in an answer that came after the call gave up (the late_result attempt)."
			if !e.readOnly {
				text += " That is evidence to mark it applied (a); marking it not applied (n) or a new key (s) goes against it: the next call would send it a second time."
			}
			para(s.BannerOK.Render, text)
		}
		if !e.readOnly {
			para(s.Bold.Render, "Check the provider (c), then decide: a mark applied · n mark not applied · s supersede: authorize a new key."+graceWords(e, d))
		}
	case model.StateInProgress:
		if leaseEnded(op, e.now) {
			// Not "a worker holds the claim": nobody does. It may be
			// decided as an unknown one is (reconcile.LegalAt, R6 D3).
			text := fmt.Sprintf("The lease ended %s ago (%s, at %s) with no result: the worker is gone and nothing holds the claim. A sweep makes it unknown, or sends it again where its provider honours keys.",
				age(e.now, op.LeaseUntil), or(op.LeaseOwner, "-"), clockTime(op.LeaseUntil, e))
			held := reconcile.HeldWords(op, e.now)
			switch {
			case op.LeaseOwner == reconcile.LeaseReleased && held != "":
				// Not "to be sent again by a sweep or the next call", nor
				// "S sweeps now": neither sends anything before then.
				text = fmt.Sprintf("Its claim was released %s ago (at %s) after a busy answer — %s. Nobody holds it; it stays in progress until then, and after it until a sweep or the next call gets a definite answer — or a person decides.",
					age(e.now, op.LeaseUntil), clockTime(op.LeaseUntil, e), held)
			case op.LeaseOwner == reconcile.LeaseReleased:
				text = fmt.Sprintf("Its claim was released %s ago (at %s) to be sent again under its key: a lost reply, or a re-send answered busy, not sent or nothing applied. Nobody holds it; it stays in progress until a sweep or the next call gets a definite answer — or a person decides.",
					age(e.now, op.LeaseUntil), clockTime(op.LeaseUntil, e))
			}
			if !e.readOnly && held == "" {
				text += " S sweeps now."
			}
			para(s.Contra.Render, text)
			if !e.readOnly {
				para(s.Bold.Render, "Nobody holds it, so you may settle it as an unknown one: check the provider (c), then a mark applied · n mark not applied · s supersede: authorize a new key."+graceWords(e, d))
			}
			break
		}
		text := fmt.Sprintf("A worker holds the claim (lease %s until %s). If the lease ends without a result, a sweep makes it unknown.",
			or(op.LeaseOwner, "-"), clockTime(op.LeaseUntil, e))
		if !e.readOnly {
			text += " No decision while its lease is live: the worker may be sending it now."
		}
		para(s.State(op.State).Render, text)
	case model.StateNotApplied:
		if op.Contradicted {
			// reconcile refuses a retry here (unless the provider honours
			// downstream keys): re-sending could apply it twice.
			para(s.State(op.State).Render, "Marked not applied, but the provider later said it applied: a retry of the key is refused as unknown (unless its provider honours downstream keys) until a person decides.")
			if !e.readOnly {
				para(s.Bold.Render, "Check the provider (c), then: a mark applied if it has the effect · s supersede: authorize a new key to send it deliberately.")
			}
			break
		}
		para(s.State(op.State).Render, "It never happened, on the evidence: the next call with the same key claims it again.")
	case model.StateFailed:
		if op.Contradicted {
			// An earlier attempt's answer said "applied" after a later
			// one was rejected: the replays' "rejected" is not the truth.
			para(s.State(op.State).Render, "Recorded as rejected, but the provider later said it applied it (an earlier attempt's answer, or a check that found it): calls of the key are told unknown — stop — until a person decides.")
			if !e.readOnly {
				para(s.Bold.Render, "Check the provider (c), then: a mark applied if it has the effect · s supersede: authorize a new key to send it deliberately.")
			}
			break
		}
		para(s.State(op.State).Render, "The provider rejected it for good; replays of the key return the stored failure.")
	case model.StateApplied:
		if op.Contradicted {
			// A late answer said rejected or not applied: the receipt may
			// report done an effect that never happened.
			para(s.State(op.State).Render, "Recorded as applied, but a later provider answer says it was not: replays of the key still return the stored receipt.")
			if !e.readOnly {
				para(s.Bold.Render, "Check the provider (c): if it holds nothing, s supersede: authorize a new key to send it deliberately (against the receipt: override).")
			}
			break
		}
		para(s.State(op.State).Render, "Done. Replays of the key return the stored receipt.")
	case model.StateSuperseded:
		nk := "the new key"
		if d.SupersededBy != nil {
			nk = oneLine(d.SupersededBy.Key)
		}
		para(s.State(op.State).Render, fmt.Sprintf("An operator authorized a new key: retries of this key are told to use %s.", nk))
		if op.Contradicted && d.SupersededBy != nil && d.SupersededBy.State != model.StateAuthorized {
			// reconcile holds a new key only while nobody has used it:
			// this one was sent before the late answer came.
			para(s.Contra.Render, fmt.Sprintf("! But the provider later said it applied this key after all, and %s was already sent (%s): its effect may be a second one. Check the provider for both keys.",
				nk, d.SupersededBy.State))
		}
	case model.StateAuthorized:
		if op.Contradicted {
			// reconcile refuses its first call: the key it replaced was
			// applied after all, and this one would send it again.
			para(s.State(op.State).Render, "A new key an operator authorized, but the provider later said it applied the key this one replaced: its first call is refused as unknown — sending it would make the effect a second time.")
			if !e.readOnly {
				para(s.Bold.Render, "a mark applied, with the replaced key's reference (< opens it): its callers then get the receipt.")
			}
			break
		}
		para(s.State(op.State).Render, "A new key an operator authorized; the first call with it claims it.")
	}
	if op.Contradicted && op.State != model.StateAuthorized { // its late result is the replaced key's, said above
		para(s.Contra.Render, "! Contradicted: "+contradictedBy(e, d)+" Look at the provider before trusting either.")
	}
	// The provider cannot tell now, but an earlier lookup said something:
	// that finding still binds a decision (the ledger's rule), and is said
	// first — above the reason it cannot tell, which can take a short
	// terminal's whole height.
	//
	// An earlier "has it" binds after any later lookup — "has nothing"
	// (on the screen or recorded) and a retry too, not only "cannot
	// tell": a provider never takes a delivery back, and the ledger
	// refuses "not applied" against it. Said unless the provider says it
	// has it now.
	settling := op.State == model.StateUnknown || op.State == model.StateInProgress || op.State == model.StateNotApplied
	var earlier *model.Finding // the binding finding from the attempts, read once per frame
	if settling {
		earlier = earlierFinding(op.Provider, d.Attempts)
	}
	earlierHasIt := false
	if settling && !(chk != nil && chk.err == nil && chk.ev.Found) && !(chk == nil && hasIt(op.Finding)) {
		if f := earlier; f != nil && f.Kind == model.FindingHasIt {
			earlierHasIt = true
		}
	}
	if settling && (cannotTellNow(op, chk) != "" || earlierHasIt) {
		if f := earlier; f != nil && f.Kind == model.FindingHasIt {
			text := fmt.Sprintf("! An earlier lookup found it: %s — %s, %s (%s ago). Cannot tell takes nothing back: ",
				or(f.Ref, "has it"), or(f.By, "a lookup"), clockTime(f.At, e), age(e.now, f.At))
			if op.State == model.StateNotApplied {
				text += "yet it is marked not applied, and the next call with this key sends it again."
			} else {
				text += "that is evidence to mark it applied (a); marking it not applied (n) goes against it: the next call would send it a second time."
			}
			para(s.BannerErr.Render, text)
		} else if f != nil && op.State != model.StateNotApplied {
			para(s.State(model.StateNotApplied).Render, fmt.Sprintf("An earlier lookup found nothing — %s, %s (%s ago); marking it applied (a) goes against it.",
				or(f.By, "a lookup"), clockTime(f.At, e), age(e.now, f.At)))
		}
	}
	// The provider's answer goes where the question was asked: at the top,
	// not only in the Provider section below the fold.
	switch {
	case checking:
		para(s.Muted.Render, "Asking "+op.Provider+" by the downstream key…")
	case chk != nil && model.IsCode(chk.err, model.CodeBusy):
		// The ledger held the finding back, not the provider: said in
		// writeErrText's words, as every other write's error.
		para(s.BannerErr.Render, "The provider check was not recorded: "+checkErrText(chk.err))
	case chk != nil && isOtherRequest(chk.err):
		// An answer, about another request under the key: no evidence
		// either way, and "mark applied" is refused on it.
		para(s.BannerErr.Render, "Provider check: "+localTimes(checkErrText(chk.err), e))
	case chk != nil && chk.err != nil:
		// "Cannot tell" is never evidence, either way.
		para(s.BannerErr.Render, "Cannot tell — no evidence either way"+cannotTellAdvice(op, e)+": "+localTimes(checkErrText(chk.err), e))
	case chk != nil && chk.ev.Found:
		text := "Provider check: " + localTimes(chk.ev.Detail, e) + "."
		style := s.BannerOK.Render
		switch {
		case op.State == model.StateNotApplied:
			// As under a recorded "has it": the check on the screen is
			// no better news.
			text, style = text+notAppliedYetHasIt(op, e), s.BannerErr.Render
		case op.State == model.StateUnknown && !e.readOnly:
			text += " That is evidence to mark it applied (a); the reference is filled in."
		}
		para(style, text)
	case chk != nil:
		text := "Provider check: " + localTimes(chk.ev.Detail, e) + "."
		if op.State == model.StateUnknown && !e.readOnly && !earlierHasIt {
			text += " If nothing can still arrive, that is evidence to mark it not applied (n)."
		}
		para(s.State(model.StateNotApplied).Render, text)
	case hasIt(op.Finding) && (op.State == model.StateUnknown || op.State == model.StateInProgress || op.State == model.StateNotApplied):
		// The provider holds the effect: the one finding a wrong decision
		// turns into a second e-mail or payment. Marked, and said plainly.
		text := "! The provider has it: " + strings.TrimPrefix(findingSentence(e, op.Finding), op.Finding.Kind.Words()+" · ") + "."
		style := s.BannerOK.Render
		switch {
		case op.State == model.StateNotApplied:
			text, style = text+notAppliedYetHasIt(op, e), s.BannerErr.Render
		case op.State == model.StateUnknown && !e.readOnly:
			text += " That is evidence to mark it applied (a); marking it not applied (n) goes against it: the next call would send it a second time."
		}
		para(style, text)
	case old != nil && (op.State == model.StateUnknown || op.State == model.StateInProgress || op.State == model.StateNotApplied):
		// The check on this screen was made before what the ledger
		// recorded since: the provider may hold the effect now.
		what := localTimes(old.ev.Detail, e)
		if old.err != nil {
			what = "cannot tell"
		}
		text := fmt.Sprintf("Your provider check at %s (%s) is out of date: %s. It is no evidence now", clockTime(old.at, e), what, localTimes(old.outdated, e))
		if !e.readOnly {
			text += " — check again (c)"
		}
		para(s.Contra.Render, text+".")
	case op.Finding != nil && (op.State == model.StateUnknown || op.State == model.StateInProgress):
		// No check on this screen: the last one recorded, by whoever.
		style := findingStyle(s, op.Finding)
		text := "Last finding: " + findingSentence(e, op.Finding)
		if f := op.Finding; f.Kind == model.FindingCannotTell && !f.Stale {
			// What it means comes before why: the provider's reason can
			// be longer than a short terminal.
			text = fmt.Sprintf("Last finding: cannot tell — no evidence either way%s. %s, %s (%s ago), %s: %s", cannotTellAdvice(op, e),
				or(f.Provider, "provider"), clockTime(f.At, e), age(e.now, f.At), or(f.By, "a lookup"), or(cannotTellWhy(f.Detail), "no reason given"))
		}
		para(style.Render, text)
	}

	line("")
	line(" " + s.Section.Render("Operation"))
	field("tenant", oneLine(op.Tenant))
	field("key", oneLine(op.Key))
	kind := "local effect"
	// The operation says itself: an external one recorded its provider.
	if op.Provider != "" {
		kind = "external effect"
	}
	field("tool", fmt.Sprintf("%s · %s · payload v%d", op.Tool, kind, op.PayloadVersion))
	field("arguments", string(op.Args))
	// One line even when narrow: both ends tell fingerprints apart.
	field("fingerprint", clipMiddle(op.Fingerprint, valW))
	field("state", fmt.Sprintf("%s · version %d · claim %d", op.State, op.Version, op.ClaimNo))
	field("created", when(op.CreatedAt))
	field("updated", when(op.UpdatedAt))
	field("lease", leaseWords(op, e))
	if !op.ExpiresAt.IsZero() {
		field("replays until", clockTime(op.ExpiresAt, e))
	}

	if op.Provider != "" || op.ProviderRef != "" || chk != nil || old != nil || checking {
		line("")
		line(" " + s.Section.Render("Provider"))
		field("provider", op.Provider)
		field("downstream key", op.DownstreamKey)
		field("keys at claim", claimKeysWords(op, e.now))
		field("provider ref", or(op.ProviderRef, "-"))
		switch {
		case replaced != nil && replaced.Finding != nil:
			// A new key was never sent: a lookup of its own key says
			// nothing; the replaced key's finding binds its decision.
			field("finding", findingStyle(s, replaced.Finding).Render(findingSentence(e, replaced.Finding))+
				s.Muted.Render(" (of the key it replaced, "+oneLine(replaced.Key)+")"))
		case replaced != nil:
			field("finding", s.Muted.Render("not checked (the key it replaced, "+oneLine(replaced.Key)+")"))
		case op.Finding != nil:
			field("finding", findingStyle(s, op.Finding).Render(findingSentence(e, op.Finding)))
		case op.Provider != "":
			field("finding", s.Muted.Render("not checked"))
		}
		switch {
		case checking:
			field("check", s.Muted.Render("asking "+op.Provider+"…"))
		case chk != nil && chk.err != nil && op.Finding != nil && op.Finding.Kind == model.FindingCannotTell &&
			strings.Contains(checkErrText(chk.err), cannotTellWhy(op.Finding.Detail)):
			// Recorded as the finding above: its reason is not said twice.
			field("check", s.BannerErr.Render("cannot tell")+s.Muted.Render(" (asked "+clockTime(chk.at, e)+"; recorded as the finding above)"))
		case chk != nil && model.IsCode(chk.err, model.CodeBusy):
			field("check", s.BannerErr.Render("not recorded: "+checkErrText(chk.err)))
		case chk != nil && isOtherRequest(chk.err) && op.Finding != nil && op.Finding.Kind == model.FindingHasOther:
			// Recorded as the finding above: not said twice.
			field("check", s.BannerErr.Render("has another request")+s.Muted.Render(" (asked "+clockTime(chk.at, e)+"; recorded as the finding above)"))
		case chk != nil && isOtherRequest(chk.err):
			field("check", s.BannerErr.Render("has another request: "+localTimes(checkErrText(chk.err), e)))
		case chk != nil && chk.err != nil:
			field("check", s.BannerErr.Render("cannot tell: "+localTimes(checkErrText(chk.err), e)))
		case chk != nil:
			style := s.State(model.StateNotApplied).Render
			if chk.ev.Found {
				style = s.BannerOK.Render
			}
			field("check", style(localTimes(chk.ev.Detail, e))+s.Muted.Render(" (asked "+clockTime(chk.at, e)+"; changes nothing)"))
		case old != nil:
			field("check", s.Muted.Render(localTimes(or(old.ev.Detail, "cannot tell"), e)+" (asked "+clockTime(old.at, e)+"; out of date: "+localTimes(old.outdated, e)+")"))
		}
	}

	if len(op.Receipt) > 0 {
		line("")
		line(" " + s.Section.Render("Receipt") + s.Muted.Render("  what a replay of this key returns"))
		var pretty bytes.Buffer
		if json.Indent(&pretty, op.Receipt, "", "  ") == nil {
			for _, l := range strings.Split(pretty.String(), "\n") {
				line("  " + truncate(l, w-2))
			}
		} else {
			field("", string(op.Receipt))
		}
	}

	line("")
	line(" " + s.Section.Render(attemptsHeading(d.Attempts)))
	if len(d.Attempts) == 0 {
		line("  " + s.Muted.Render("none recorded"))
	} else {
		writeAttempts(&b, e, d.Attempts, w)
	}

	line("")
	line(" " + s.Section.Render(fmt.Sprintf("Decisions (%d)", len(d.Decisions))))
	if len(d.Decisions) == 0 {
		line("  " + s.Muted.Render("no operator has decided anything about this operation"))
	}
	for _, dc := range d.Decisions {
		// Wrapped between its parts, not cut: the viewport would clip it.
		head := pack([]string{clockTime(dc.At, e), s.Bold.Render(dc.Operator), dc.Action.Verb(),
			s.State(dc.FromState).Render(string(dc.FromState)) + " → " + s.State(dc.ToState).Render(string(dc.ToState)),
			s.Muted.Render(fmt.Sprintf("(seen at v%d)", dc.FromVersion))}, "  ", max(w-4, 20))
		for i, l := range head {
			if i > 0 {
				l = "  " + l
			}
			line("  " + l)
		}
		field("  reason", dc.Reason)
		field("  evidence", dc.Evidence)
		field("  new key", dc.NewKey)
	}

	if d.Supersedes != nil || d.SupersededBy != nil {
		line("")
		line(" " + s.Section.Render("Links"))
		if d.SupersededBy != nil {
			field("superseded by", s.Link.Render(oneLine(op.Tenant+"/"+d.SupersededBy.Key))+"  "+s.State(d.SupersededBy.State).Render(string(d.SupersededBy.State))+s.Muted.Render("   > opens it"))
		}
		if d.Supersedes != nil {
			field("supersedes", s.Link.Render(oneLine(op.Tenant+"/"+d.Supersedes.Key))+"  "+s.State(d.Supersedes.State).Render(string(d.Supersedes.State))+s.Muted.Render("   < opens it"))
		}
	}
	return b.String()
}

// attemptCols is the attempt table's layout for a width: each column's
// width, 0 for a column given up (its value goes under the row, in full).
type attemptCols struct {
	outW, traceW, workerW, errW int
	dur                         bool
}

const attNumW, attOutW, attDurW = 3, 13, 8

// width is a row's width without the error column.
func (c attemptCols) width() int {
	n := 2 + attNumW + 1 + len(timeLayout) + 1 + c.outW
	for _, w := range []int{c.traceW, c.workerW} {
		if w > 0 {
			n += 1 + w
		}
	}
	if c.dur {
		n += 1 + attDurW
	}
	return n
}

// layoutAttempts fits the attempt table in w columns (a row takes at most
// w-1). The least useful give way first, never by being cut off at the
// screen's edge: the error column (its text goes under its row), then
// the trace and worker columns shrink to 10, then the trace column goes
// (the trace id is written under the row, as a long one always is), then
// the duration, then the worker column shrinks to 8 and then goes (the
// worker id under the row), then the outcome is shortened with an "…".
// The time, in the screen's one format, stays.
func layoutAttempts(atts []model.Attempt, w int) attemptCols {
	c := attemptCols{outW: attOutW, traceW: 12, workerW: 12, dur: true}
	for _, a := range atts {
		c.traceW = max(c.traceW, min(ansi.StringWidth(oneLine(a.TraceID)), 36))
		c.workerW = max(c.workerW, min(ansi.StringWidth(a.WorkerID), 20))
	}
	limit := w - 1
	if errW := limit - c.width() - 1; errW >= 16 {
		c.errW = errW
		return c
	}
	// Narrow: trace and worker give way before the error does.
	c.traceW, c.workerW = 10, 10
	if errW := limit - c.width() - 1; errW >= 16 {
		c.errW = errW
		return c
	}
	for _, giveUp := range []func(){
		func() { c.traceW = 0 },
		func() { c.dur = false },
		func() { c.workerW = 8 },
		func() { c.workerW = 0 },
	} {
		if c.width() <= limit {
			return c
		}
		giveUp()
	}
	if over := c.width() - limit; over > 0 {
		c.outW = max(c.outW-over, 1)
	}
	return c
}

// writeAttempts draws the attempt history as a table (layoutAttempts). An
// error too long for its column is written out in full on the lines under
// its attempt: it is usually the most useful text on the screen.
func writeAttempts(b *strings.Builder, e env, atts []model.Attempt, w int) {
	s := e.styles
	// The screen's one time format, at every width: the trace id has its
	// own line under a narrow table.
	timeW := len(timeLayout)
	c := layoutAttempts(atts, w)
	showErrCol := c.errW > 0
	row := func(num, time, outcome, trace, worker, duration string, styleOut func(string) string) string {
		cells := []string{fitRight(num, attNumW), fit(time, timeW), styleOut(fit(outcome, c.outW))}
		if c.traceW > 0 {
			cells = append(cells, fit(trace, c.traceW))
		}
		if c.workerW > 0 {
			cells = append(cells, fit(worker, c.workerW))
		}
		if c.dur {
			cells = append(cells, fitRight(duration, attDurW))
		}
		return strings.Join(cells, " ")
	}
	head := row("#", "TIME", "OUTCOME", "TRACE", "WORKER", "DURATION", func(s string) string { return s })
	if showErrCol {
		head += " " + fit("ERROR", c.errW)
	}
	b.WriteString("  " + s.TableHead.Render(head) + "\n")
	under := func(text string) {
		for i, l := range strings.Split(wrap(oneLine(text), max(w-9, 20), " "), "\n") {
			lead := "  "
			if i == 0 {
				lead = "↳ "
			}
			b.WriteString("      " + s.Muted.Render(lead+l) + "\n")
		}
	}
	for _, a := range atts {
		line := row(strconv.Itoa(a.Seq), clockTime(a.StartedAt, e), string(a.Outcome), clipMiddle(or(a.TraceID, "-"), c.traceW),
			or(a.WorkerID, "-"), dur(a.Duration), func(t string) string { return outcomeStyle(s, a.Outcome).Render(t) })
		errText := localTimes(a.Error, e)
		if a.ProviderRef != "" {
			errText = strings.TrimSpace("ref " + a.ProviderRef + "  " + errText)
		}
		if a.Outcome == model.OutcomeLookup {
			// A lookup's finding, then the provider's words (a "cannot
			// tell" says so once).
			words := localTimes(a.Detail, e)
			if a.Finding == model.FindingCannotTell {
				words = cannotTellWhy(words)
			}
			errText = strings.Join(nonEmpty(a.Finding.Words(), strings.TrimSpace(errText)), " ")
			if words != "" {
				errText += " · " + words
			}
		}
		// An error too long for its column is written out under the row
		// instead, in full.
		full := !showErrCol || ansi.StringWidth(oneLine(errText)) > c.errW
		if showErrCol && !full {
			line += " " + fit(errText, c.errW)
		}
		b.WriteString("  " + line + "\n")
		// A trace id is an opaque identifier, and a worker's names who
		// made the attempt: never shown cut. One too long for its column,
		// or whose column gave way, is written out in full under the row.
		if a.TraceID != "" && ansi.StringWidth(oneLine(a.TraceID)) > c.traceW {
			under("trace " + oneLine(a.TraceID))
		}
		if a.WorkerID != "" && ansi.StringWidth(a.WorkerID) > c.workerW {
			under("worker " + a.WorkerID)
		}
		if full && errText != "" {
			under(errText)
		}
	}
}

func outcomeStyle(s *Styles, o model.Outcome) interface{ Render(...string) string } {
	switch o {
	case model.OutcomeTimedOut, model.OutcomeLeaseExpired:
		return s.State(model.StateUnknown)
	case model.OutcomeLateResult:
		return s.Contra
	case model.OutcomeCreated, model.OutcomeApplied:
		return s.State(model.StateApplied)
	case model.OutcomeFailed, model.OutcomeConflict:
		return s.State(model.StateFailed)
	case model.OutcomeNotApplied:
		return s.State(model.StateNotApplied)
	case model.OutcomeRefused, model.OutcomeExpired:
		return s.Contra
	}
	return s.Muted
}

// hasIt reports whether f is a fresh finding that the provider holds the
// effect.
func hasIt(f *model.Finding) bool {
	return f != nil && !f.Stale && f.Kind == model.FindingHasIt
}

// cannotTellAdvice is what "cannot tell" means for the decision an
// operator is about to make on an unknown operation, or "".
func cannotTellAdvice(op model.Operation, e env) string {
	if op.State != model.StateUnknown || e.readOnly {
		return ""
	}
	return ", and it does not mean it was not sent: mark it not applied (n) only on evidence from elsewhere"
}

// nonEmpty is the strings of parts that are not empty.
func nonEmpty(parts ...string) []string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// checkErrText is a failed check's reason, without a second "cannot tell":
// the ledger's refusal to record its finding in writeErrText's words (a
// busy ledger says so, not "context deadline exceeded").
func checkErrText(err error) string {
	return strings.ReplaceAll(oneLine(writeErrText(err)), "cannot tell: ", "")
}

// leaseWords is the detail's lease row: what happened to the claim —
// held (live until T), its lease ended (at T: nobody holds it), or
// released (at T, to be sent again: a released claim's lease time is
// when it was released) — "" when there is no lease.
func leaseWords(op model.Operation, e env) string {
	switch {
	case op.LeaseOwner == "" && op.LeaseUntil.IsZero():
		return ""
	case op.State != model.StateInProgress:
		return or(op.LeaseOwner, "-") + " until " + clockTime(op.LeaseUntil, e)
	case op.LeaseOwner == reconcile.LeaseReleased && reconcile.HeldFor(op, e.now) > 0:
		// Not "to be sent again": nothing is, before its provider's
		// Retry-After (the paragraph below says it whole).
		return fmt.Sprintf("released at %s (%s ago): nobody holds the claim — held until %s (its provider's Retry-After)", clockTime(op.LeaseUntil, e), age(e.now, op.LeaseUntil), clockTime(op.RetryNotBefore, e))
	case op.LeaseOwner == reconcile.LeaseReleased:
		return fmt.Sprintf("released at %s (%s ago) to be sent again: nobody holds the claim", clockTime(op.LeaseUntil, e), age(e.now, op.LeaseUntil))
	case leaseEnded(op, e.now):
		return fmt.Sprintf("%s's lease ended at %s (%s ago): nobody holds the claim", or(op.LeaseOwner, "a worker"), clockTime(op.LeaseUntil, e), age(e.now, op.LeaseUntil))
	}
	return fmt.Sprintf("held by %s, live until %s", or(op.LeaseOwner, "a worker"), clockTime(op.LeaseUntil, e))
}

// graceWords is what the detail says, after its keys, of the grace after
// the operation's latest request: which of n and s the write takes only
// with the typed override, until when, and why (reconcile.OfferOf, the
// write's rule, at e.now); "" when neither.
func graceWords(e env, d *model.Detail) string {
	var keys []string
	var g *reconcile.GraceRefusal
	for _, k := range []struct {
		key    string
		action model.Action
	}{{"n", model.ActionMarkNotApplied}, {"s", model.ActionAuthorizeKey}} {
		if o := e.svc.OfferOf(k.action, d.Operation, d.Attempts, e.now); o.Grace != nil && !o.Against {
			// Against a finding it needs the override for good: said
			// with the finding (the grace is moot then).
			keys, g = append(keys, k.key), o.Grace
		}
	}
	if g == nil {
		return ""
	}
	verb := "needs"
	if len(keys) > 1 {
		verb = "need"
	}
	return fmt.Sprintf(" Within the grace: %s %s the typed override until %s — the provider may still apply the request sent at %s.",
		strings.Join(keys, " and "), verb, clockTime(g.Until, e), clockTime(g.Sent, e))
}

// leaseEnded reports whether op is a claim whose lease ran out with no
// result (its worker is gone), or was released: nobody holds it, and a
// decision is legal from it (reconcile.Unheld).
func leaseEnded(op model.Operation, now time.Time) bool {
	return op.State == model.StateInProgress && !op.LeaseUntil.IsZero() && op.LeaseUntil.Before(now) || reconcile.Unheld(op, now)
}

// attemptsHeading is the detail's Attempts heading: every row, and when
// some are provider lookups (questions about the effect, not calls of the
// key), how many are calls (the list's ATT: sends, replays, conflicts —
// each call of the key) and how many lookups.
func attemptsHeading(atts []model.Attempt) string {
	n, l := len(atts), model.Lookups(atts)
	if l == 0 {
		return fmt.Sprintf("Attempts (%d)", n)
	}
	return fmt.Sprintf("Attempts (%d: %s, %s)", n, plural(n-l, "call", "calls"), plural(l, "provider lookup", "provider lookups"))
}

// unheldWord is the list's STATE of an in_progress operation nobody
// holds (leaseEnded): "held" for a released claim whose provider's
// Retry-After has not passed (reconcile.HeldFor), "released" for a claim
// released to be sent again under its key (a lost reply, a re-send answered busy, not sent or
// nothing applied), "lease ended" for one whose worker's lease ran out with
// no result; "" for any other.
func unheldWord(op model.Operation, now time.Time) string {
	switch {
	case !leaseEnded(op, now):
		return ""
	case op.LeaseOwner == reconcile.LeaseReleased && reconcile.HeldFor(op, now) > 0:
		// Its provider asked to be left alone: nothing is sent before
		// then (the detail says until when).
		return "held"
	case op.LeaseOwner == reconcile.LeaseReleased:
		return "released"
	}
	return "lease ended"
}

// notAppliedYetHasIt is what a not_applied operation the provider has
// means for the next call: sent again — unless the provider's own late
// "applied" flagged it contradicted, when a retry of the key is refused
// (the paragraph above says so) and only a new key would send it again.
// The way out follows: mark it applied, where this console may.
func notAppliedYetHasIt(op model.Operation, e env) string {
	text := " Yet it is marked not applied: the next call with this key sends it again."
	if op.Contradicted {
		text = " Yet it is marked not applied: a retry of the key is refused until a person decides, and a new key would send it a second time."
	}
	if !e.readOnly && allowed(op, model.ActionMarkApplied, e.now) {
		text += " Mark it applied (a)."
	}
	return text
}

// contradictedBy names what flagged an operation contradicted: the
// provider's late result (a late_result attempt), a lookup that found
// the effect after it was settled (a check, a triage), or, of an applied
// one, a lookup that found nothing of it — the attempt the detail lists,
// not one it does not have.
func contradictedBy(e env, d *model.Detail) string {
	var late, look, nothing *model.Attempt
	applied := d.Operation.State == model.StateApplied
	for i := range d.Attempts {
		a := &d.Attempts[i]
		if a.OperationID != d.Operation.ID {
			continue
		}
		switch {
		case a.Outcome == model.OutcomeLateResult && (late == nil || a.Seq > late.Seq):
			late = a
		case a.Outcome == model.OutcomeLookup && a.Finding == model.FindingHasIt && (look == nil || a.Seq > look.Seq):
			look = a
		case applied && a.Outcome == model.OutcomeLookup && a.Finding == model.FindingHasNothing && (nothing == nil || a.Seq > nothing.Seq):
			nothing = a
		}
	}
	switch {
	case nothing != nil && (late == nil || nothing.Seq > late.Seq):
		// An applied one a lookup found nothing of (reconcile's Look):
		// the latest of what flagged it, a late answer's or this.
		return fmt.Sprintf("a provider lookup found nothing of it after it was recorded applied (%s, %s: lookup attempt #%d).",
			or(nothing.WorkerID, "a lookup"), clockTime(nothing.StartedAt, e), nothing.Seq)
	case late != nil:
		return fmt.Sprintf("a provider result arrived after the operation was settled and disagrees with it (the late_result attempt #%d).", late.Seq)
	case look != nil:
		return fmt.Sprintf("a provider lookup found the effect after the operation was settled (%s, %s: lookup attempt #%d).",
			or(look.WorkerID, "a lookup"), clockTime(look.StartedAt, e), look.Seq)
	}
	return "a provider answer came after the operation was settled and disagrees with it."
}

// claimKeysWords says whether the provider honoured downstream keys in the
// config that made op's latest claim (model.Operation.ClaimHonoursKeys), ""
// for an operation never claimed. A claim still in progress is told what
// that record means when its lease ends (or has ended): it is sent again
// under its downstream key only where the record and the sending
// process's config both say the provider honours keys (reconcile's
// notResendable).
func claimKeysWords(op model.Operation, now time.Time) string {
	if op.Provider == "" || op.ClaimNo == 0 {
		return ""
	}
	var text string
	switch {
	case op.ClaimHonoursKeys == nil:
		text = fmt.Sprintf("not recorded (claim %d was made before the ledger kept it)", op.ClaimNo)
	case *op.ClaimHonoursKeys:
		text = fmt.Sprintf("honoured, in the config that made claim %d", op.ClaimNo)
	default:
		text = fmt.Sprintf("not honoured, in the config that made claim %d", op.ClaimNo)
	}
	if op.State != model.StateInProgress {
		return text
	}
	when := "if its lease ends with no result"
	if !op.LeaseUntil.IsZero() && !op.LeaseUntil.After(now) {
		when = "its lease ended with no result"
	}
	if op.LeaseOwner == reconcile.LeaseReleased {
		when = "its claim was released"
	}
	if op.ClaimHonoursKeys != nil && *op.ClaimHonoursKeys {
		return text + " — " + when + ": a sweep or retry may send it again under this downstream key (where its own config says so too)"
	}
	return text + " — " + when + ": it is not sent again under this downstream key; a sweep or retry makes it unknown"
}

// isOtherRequest reports whether a check's error is the provider's answer
// that it holds a different request under the key (provider.OtherRequest).
func isOtherRequest(err error) bool {
	var other *provider.OtherRequest
	return errors.As(err, &other)
}
