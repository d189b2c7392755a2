package model

import (
	"encoding/json"

	"github.com/retrysafe/retrysafe/internal/textsafe"
)

// Visible returns a copy of op for a person's screen: every free-text field
// passed through textsafe.Visible, the JSON fields through textsafe.JSON
// (still valid JSON, same value). The ledger's own row stays faithful;
// only what is drawn changes. Its identity — ID, Tenant and Key — stays
// the stored value: a key's drawn form is not the key (a run of combining
// marks past the third is drawn as \u0301 text, which can be another
// operation's key), and whoever holds the copy looks up, decides and
// copies by it. Whatever draws Tenant or Key passes it through
// textsafe.Visible then.
func (op Operation) Visible() Operation {
	op.Tool = textsafe.Visible(op.Tool)
	op.Summary, op.Fingerprint = textsafe.Visible(op.Summary), textsafe.Visible(op.Fingerprint)
	op.Provider, op.DownstreamKey = textsafe.Visible(op.Provider), textsafe.Visible(op.DownstreamKey)
	op.ProviderRef, op.LeaseOwner = textsafe.Visible(op.ProviderRef), textsafe.Visible(op.LeaseOwner)
	op.Args, op.Receipt = visibleJSON(op.Args), visibleJSON(op.Receipt)
	op.Finding, op.BindingFinding = op.Finding.Visible(), op.BindingFinding.Visible()
	return op
}

// Visible returns a copy of f for a person's screen (the provider's words
// are outside text); nil stays nil.
func (f *Finding) Visible() *Finding {
	if f == nil {
		return nil
	}
	c := *f
	c.Provider, c.Ref = textsafe.Visible(c.Provider), textsafe.Visible(c.Ref)
	c.Detail, c.By = textsafe.Visible(c.Detail), textsafe.Visible(c.By)
	return &c
}

// Visible returns a copy of d for a person's screen (see Operation.Visible).
func (d *Detail) Visible() *Detail {
	if d == nil {
		return nil
	}
	out := &Detail{Operation: d.Operation.Visible(), Supersedes: d.Supersedes.visible(), SupersededBy: d.SupersededBy.visible()}
	if d.Attempts != nil {
		out.Attempts = make([]Attempt, len(d.Attempts))
	}
	for i, a := range d.Attempts {
		// The trace id stays the stored value: it is copied to search
		// logs by (the console's copy menu); what draws it sanitizes it.
		a.Fingerprint, a.WorkerID = textsafe.Visible(a.Fingerprint), textsafe.Visible(a.WorkerID)
		a.ProviderRef, a.Error = textsafe.Visible(a.ProviderRef), textsafe.Visible(a.Error)
		a.Detail = textsafe.Visible(a.Detail)
		out.Attempts[i] = a
	}
	if d.Decisions != nil {
		out.Decisions = make([]Decision, len(d.Decisions))
	}
	for i, dc := range d.Decisions {
		dc.Operator, dc.Reason = textsafe.Visible(dc.Operator), textsafe.Visible(dc.Reason)
		dc.Evidence, dc.NewKey = textsafe.Visible(dc.Evidence), textsafe.Visible(dc.NewKey)
		out.Decisions[i] = dc
	}
	return out
}

// Visible returns a copy of e for a person's screen (the audit log);
// Tenant and Key stay the stored value (see Operation.Visible).
func (e AuditEntry) Visible() AuditEntry {
	e.Tool = textsafe.Visible(e.Tool)
	e.Operator, e.Reason = textsafe.Visible(e.Operator), textsafe.Visible(e.Reason)
	e.Evidence, e.NewKey = textsafe.Visible(e.Evidence), textsafe.Visible(e.NewKey)
	return e
}

func (l *LinkRef) visible() *LinkRef {
	if l == nil {
		return nil
	}
	c := *l // the key stays the stored value (see Operation.Visible)
	return &c
}

// visibleJSON keeps valid JSON valid (escaping the way JSON does) and shows
// anything else as text.
func visibleJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return b
	}
	if json.Valid(b) {
		return textsafe.JSON(b)
	}
	return json.RawMessage(textsafe.Visible(string(b)))
}
