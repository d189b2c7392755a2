package gateway

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
)

// Kind names a problem type: the class of a call's outcome (the same words
// as `retrysafe call`'s exit codes), or one of the few HTTP-only refusals
// that happen before there is a call (no token, an overloaded gateway).
type Kind string

const (
	KindInvalid      Kind = Kind(model.ClassInvalid)
	KindConflict     Kind = Kind(model.ClassConflict)
	KindInProgress   Kind = Kind(model.ClassInProgress)
	KindUnknown      Kind = Kind(model.ClassUnknown)
	KindSuperseded   Kind = Kind(model.ClassSuperseded)
	KindExpired      Kind = Kind(model.ClassExpired)
	KindFailed       Kind = Kind(model.ClassFailed)
	KindInternal     Kind = Kind(model.ClassInternal)
	KindBusy         Kind = "busy"
	KindUnauthorized Kind = "unauthorized"
	KindNotFound     Kind = "not_found"
)

// KindMisconfigured: the server cannot make this call as configured (a
// provider's dispatch reads a ${NAME} not set in its environment,
// reconcile.ErrCannotDispatch) — not the caller's request.
const KindMisconfigured Kind = "misconfigured"

// kindInfo is one row of the documented table (README, "The gateway"):
// the status a kind answers with, and what the caller must do — the CLI's
// words for the same class.
type kindInfo struct {
	Status int
	Title  string
}

// kinds returns the table; a function, not a package variable, so nothing
// can change it at run time.
func kinds() map[Kind]kindInfo {
	return map[Kind]kindInfo{
		KindInvalid:      {http.StatusBadRequest, "Invalid request: fix the request; nothing was written"},
		KindConflict:     {http.StatusUnprocessableEntity, "Conflict: the key was first used for another request (other arguments, or another tool); resend the original request — a new key only for a new action, and only once the first request's outcome is settled"},
		KindInProgress:   {http.StatusConflict, "In progress: the operation has not finished (another attempt holds the key, or the provider has not answered for good); retry later with the same key"},
		KindUnknown:      {http.StatusLocked, "Unknown outcome: stop, a person must reconcile this operation"},
		KindSuperseded:   {http.StatusGone, "Superseded: an operator authorized a new key; use new_key"},
		KindExpired:      {http.StatusPreconditionFailed, "Expired: the key is past its replay window; reconcile, do not retry under a fresh key"},
		KindFailed:       {http.StatusFailedDependency, "Failed: the provider rejected the request for good; the stored failure is replayed"},
		KindInternal:     {http.StatusInternalServerError, "Internal error: retry later with the same key"},
		KindBusy:         {http.StatusServiceUnavailable, "Busy: retry later with the same key"},
		KindUnauthorized: {http.StatusUnauthorized, "Unauthorized: send Authorization: Bearer TOKEN with a live token"},
		KindNotFound:     {http.StatusNotFound, "Not found"},

		KindMisconfigured: {http.StatusServiceUnavailable, "Server misconfigured: this server cannot make the call as it is configured (the operator must fix it); nothing was written; retry later with the same key"},
	}
}

// KindStatus is the HTTP status of a kind (the table's).
func KindStatus(k Kind) int { return kinds()[k].Status }

// TypeURI is a problem's type: a path on the gateway itself, where
// GET /problems/{kind} explains it.
func TypeURI(k Kind) string { return "/problems/" + string(k) }

// Problem is an RFC 9457 problem details object, with retrysafe's
// extension members.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`

	// Class is the call's outcome class when there was a call (the word of
	// `retrysafe call`'s exit code).
	Class      model.Class    `json:"class,omitempty"`
	Key        string         `json:"key,omitempty"`
	NewKey     string         `json:"new_key,omitempty"`
	State      model.State    `json:"state,omitempty"`
	Receipt    *model.Receipt `json:"receipt,omitempty"`
	RetryAfter int            `json:"retry_after,omitempty"`
	TraceID    string         `json:"trace_id,omitempty"`
}

// newProblem fills type, title and status from the table.
func newProblem(k Kind, detail string) *Problem {
	info := kinds()[k]
	p := &Problem{Type: TypeURI(k), Title: info.Title, Status: info.Status, Detail: detail}
	switch k {
	case KindBusy, KindMisconfigured: // the table's rows: class internal, exit 1
		p.Class = model.ClassInternal
	case KindUnauthorized, KindNotFound:
	default:
		p.Class = model.Class(k)
	}
	return p
}

// write sends p with its status (which the caller may have refined, e.g.
// 413 for an invalid body) and the headers that go with it.
func (p *Problem) write(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	if p.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(p.RetryAfter))
	}
	if p.Status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="retrysafe"`)
	}
	b, _ := json.Marshal(p)
	w.WriteHeader(p.Status)
	w.Write(append(textsafe.JSON(b), '\n'))
}

// problemDocs serves GET /problems/{kind}: the type URI dereferences to
// what the kind means and what to do.
func problemDocs(w http.ResponseWriter, r *http.Request) {
	k := Kind(r.PathValue("kind"))
	info, ok := kinds()[k]
	if !ok {
		newProblem(KindNotFound, "no such problem type").write(w)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte(string(k) + " (HTTP " + strconv.Itoa(info.Status) + "): " + info.Title + "\n"))
}
