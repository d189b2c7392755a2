package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// drawAt is the decision box whole or compact with the provider's reason
// clipped at whyMax, drawn: what the form's view chose among before it
// measured its text instead (referenceView).
func drawAt(a actionModel, e env, w int, compact bool, whyMax int) string {
	t := a.content(e, w, compact)
	t.clipWhy(whyMax)
	return a.box(e.styles, w, t.String())
}

// referenceView is the form's view as it was: drawn whole, then compact,
// then compact with the reason clipped ever shorter — up to nine draws —
// until it fits.
func referenceView(a actionModel, e env, w, h int) string {
	out := "\n" + drawAt(a, e, w, false, 0)
	if lipgloss.Height(out) > h {
		out = drawAt(a, e, w, true, 0)
	}
	for n := 240; lipgloss.Height(out) > h && a.cannotTell != "" && n >= 60; n -= 30 {
		out = drawAt(a, e, w, true, n)
	}
	return out
}

// decisionBoxes is a decision form and review in each of the shapes its
// layout depends on: plain, against a finding, the provider unable to
// tell (a long reason) with and without an earlier finding, a long key
// (the title wraps), a field error too long for the box (the box wraps
// it), a refusal above the form.
func decisionBoxes(e env) map[string]actionModel {
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	op := model.Operation{ID: 7, Tenant: "acme", Key: "notify-7", Tool: "send_notification", State: model.StateUnknown, Version: 2,
		Provider: "sandbox", DownstreamKey: "d-7", UpdatedAt: at}
	long := op
	long.Key = "a-very-long-idempotency-key-" + strings.Repeat("x", 90)
	why := "provider sandbox lookup failed: sandbox provider (file id 0a1b2c3d) no longer holds delivery sbx_4242, the newest this ledger saw it hold for acme/notify-7: it went back in time"
	hasIt := &model.Finding{Kind: model.FindingHasIt, Provider: "sandbox", Ref: "sbx_4242", Detail: "delivered", At: at, Seq: 2, By: "triage by bob"}
	nothing := &model.Finding{Kind: model.FindingHasNothing, Provider: "sandbox", Detail: "no delivery", At: at, Seq: 2, By: "triage by bob"}
	out := map[string]actionModel{}
	for _, action := range []model.Action{model.ActionMarkApplied, model.ActionMarkNotApplied, model.ActionAuthorizeKey} {
		add := func(name string, a actionModel) {
			for _, stage := range []actionStage{stageForm, stageConfirm} {
				a.stage = stage
				out[fmt.Sprintf("%s/%s/stage=%d", action, name, stage)] = a
			}
		}
		add("plain", openAction(action, op, "", nil, e.styles, 1))
		add("long-key", openAction(action, long, "", nil, e.styles, 1))
		add("against-has-it", openAction(action, op, "", reconcile.EvidenceOf(hasIt), e.styles, 1))
		add("against-nothing", openAction(action, op, "", reconcile.EvidenceOf(nothing), e.styles, 1))
		a := openAction(action, op, "", nil, e.styles, 1)
		a.cannotTell = why
		add("cannot-tell", a)
		for name, f := range map[string]*model.Finding{"earlier-has-it": hasIt, "earlier-nothing": nothing} {
			a := openAction(action, op, "", reconcile.EvidenceOf(f), e.styles, 1)
			a.cannotTell, a.earlier = why, f
			add("cannot-tell-"+name, a)
		}
		a = openAction(action, op, "", nil, e.styles, 1)
		a.cannotTell = why
		a.fields[0].err = strings.Repeat("a field's refusal far too long for the box ", 4)
		a.problem = "acme/notify-7 changed since you looked: you saw unknown (version 2); nothing was written."
		add("cannot-tell-field-error", a)
	}
	return out
}

// The form's view measures its text and draws the box once; it chooses
// what the nine draws chose, at widths 30, 60 and 100 and every height from 6 to 45.
func TestDecisionBoxFitsAsTheDrawsDid(t *testing.T) {
	e := open(t, config(newLedger(t)), 80, 24).m.env()
	for name, a := range decisionBoxes(e) {
		for _, w := range []int{30, 60, 100} {
			for h := 6; h <= 45; h++ {
				got, want := a.view(e, w, h), referenceView(a, e, w, h)
				if lipgloss.Height(want) > h {
					// Too small for the box compact (40×10, 60×15): the
					// draws overflowed, cutting the warning and the
					// override prompt off; the tiny box keeps them.
					if text := strings.Join(strings.Fields(ansi.Strip(got)), " "); a.stage == stageConfirm && a.against() &&
						(!strings.Contains(text, "Against") || !strings.Contains(text, "Type override") && !strings.Contains(text, "override+enter")) {
						t.Fatalf("%s at %d×%d lacks the warning or the prompt:\n%s", name, w, h, got)
					}
					continue
				}
				if got != want {
					t.Fatalf("%s at %d×%d:\ngot\n%s\nwant\n%s", name, w, h, got, want)
				}
			}
		}
	}
}

// The decision box on a 60×20 screen, with a long "cannot tell" reason
// and a refusal above the form: too tall whole, too tall compact, the
// reason clipped to its shortest — the view that measures against the
// one that drew nine times here (A/B in one run); and a plain form, which
// fits whole (one draw for both).
func BenchmarkDecisionBox60x20(b *testing.B) {
	e := open(b, config(newLedger(b)), 60, 20).m.env()
	for _, name := range []string{"mark_not_applied/cannot-tell-field-error/stage=0", "mark_not_applied/plain/stage=0"} {
		a := decisionBoxes(e)[name]
		for i := 0; i < 2; i++ {
			b.Run(name+"/measured", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					_ = a.view(e, 60, 20)
				}
			})
			b.Run(name+"/drawn-until-it-fits", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					_ = referenceView(a, e, 60, 20)
				}
			})
		}
	}
}
