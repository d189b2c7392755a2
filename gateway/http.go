package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// postTool is POST /v1/tools/{tool}: one attempt of one call. Every refusal
// before the call (unknown tool, content type, key, body) writes nothing;
// the call itself validates the arguments before it writes.
func (g *Gateway) postTool(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	info := infoOf(ctx)
	tool := r.PathValue("tool")
	// A refusal before the call is class invalid in the log line too.
	info.class = string(model.ClassInvalid)
	ti, ok := g.tools[tool]
	if !ok {
		g.metrics.refused("", KindInvalid)
		p := newProblem(KindInvalid, "unknown tool "+strconv.Quote(tool)+" (want one of "+strings.Join(g.cfg.Tools.Names(), ", ")+"); nothing was written")
		p.Status = http.StatusNotFound
		p.write(w)
		return
	}
	// Two of a header the call reads one of: which one did the client
	// mean? (Two Authorization headers are refused by authenticate.)
	for _, name := range []string{"Content-Type", "X-Trace-Id", "Traceparent"} {
		if n := len(r.Header.Values(name)); n > 1 {
			g.metrics.refused(tool, KindInvalid)
			newProblem(KindInvalid, name+" header given "+strconv.Itoa(n)+" times; send it once; nothing was written").write(w)
			return
		}
	}
	if p := checkContentType(r.Header.Get("Content-Type")); p != nil {
		g.metrics.refused(tool, KindInvalid)
		w.Header().Set("Accept-Post", "application/json")
		p.write(w)
		return
	}
	key, err := idempotencyKey(r.Header)
	if err != nil {
		g.metrics.refused(tool, KindInvalid)
		newProblem(KindInvalid, err.Error()).write(w)
		return
	}
	info.key = key
	if r.ContentLength > g.cfg.MaxBody {
		g.metrics.refused(tool, KindInvalid)
		tooLarge(r.ContentLength, g.cfg.MaxBody).write(w)
		return
	}
	body, err := readBody(w, r, g.cfg.MaxBody)
	if err != nil {
		g.metrics.refused(tool, KindInvalid)
		if p := unreadBody(err); p != nil {
			p.write(w)
			return
		}
		tooLarge(-1, g.cfg.MaxBody).write(w)
		return
	}
	// An argument the tool no longer declares, in the very request
	// recorded under the key before it changed, gets the operation's
	// answer, not "fix the arguments" — answered, never made
	// (reconcile.Service.Recorded, CallRecorded).
	var why error
	if path, known := g.checked.unknownArgument(tool, ti.args, body); path != "" {
		if !g.svc.Recorded(ctx, model.Request{Tenant: tenantOf(ctx), Key: key, Tool: tool, Args: body}) {
			g.metrics.refused(tool, KindInvalid)
			g.writeResult(w, reconcile.Result{Class: model.ClassInvalid, Message: unknownArgumentMessage(tool, path, known)}, nil, key)
			return
		}
		why = model.Errorf(model.CodeInvalid, "%s", unknownArgumentMessage(tool, path, known))
	}
	// No payload version: the tool's, and a retry under a key recorded
	// before the operator raised it is compared under the recorded one
	// (model.Prepared.SameRequest) — a caller of the gateway cannot name one.
	res, err := g.call(ctx, model.Request{Tenant: tenantOf(ctx), Key: key, Tool: tool, Args: body, TraceID: traceOf(ctx)}, why)
	info.class = string(res.Class)
	if res.Class == model.ClassInternal || res.Class == model.ClassUnknown {
		noteErr(ctx, err)
	}
	g.writeResult(w, res, err, key)
}

// unreadBody is the answer for a body that failed to arrive (nil for
// none, and for one over the limit, which the caller answers): 408 for one
// that did not arrive within the server's read timeout, else 400 — in
// words of their own, without the socket's addresses the error names.
func unreadBody(err error) *Problem {
	var mbe *http.MaxBytesError
	if err == nil || errors.As(err, &mbe) {
		return nil
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		p := newProblem(KindInvalid, "the request body did not arrive in time; nothing was written")
		p.Status = http.StatusRequestTimeout
		return p
	}
	return newProblem(KindInvalid, "the request body could not be read (the connection broke or the body was cut short); nothing was written")
}

func tooLarge(n, max int64) *Problem {
	msg := "the request body is over the limit of " + strconv.FormatInt(max, 10) + " bytes; nothing was written"
	if n > 0 {
		msg = "the request body is " + strconv.FormatInt(n, 10) + " bytes, over the limit of " + strconv.FormatInt(max, 10) + "; nothing was written"
	}
	p := newProblem(KindInvalid, msg)
	p.Status = http.StatusRequestEntityTooLarge
	return p
}

// checkContentType accepts application/json and any +json type, in
// UTF-8 (a charset parameter, if any, must say utf-8: the body is read
// as UTF-8 whatever it says, and another charset's bytes would be
// recorded as other text than the client meant).
func checkContentType(v string) *Problem {
	if v == "application/json" { // what nearly every client sends
		return nil
	}
	if p := checkCharset(v); p != nil {
		return p
	}
	mt, _, err := mime.ParseMediaType(v)
	if v == "" || err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		got := "none"
		if v != "" {
			got = strconv.Quote(v)
		}
		p := newProblem(KindInvalid, "Content-Type must be application/json (got "+got+"); nothing was written")
		p.Status = http.StatusUnsupportedMediaType
		return p
	}
	return nil
}

// checkCharset refuses a Content-Type whose charset parameter is not
// utf-8 (/v1/tools and /mcp): the body is read as UTF-8 whatever it says.
func checkCharset(v string) *Problem {
	_, params, err := mime.ParseMediaType(v)
	if cs, ok := params["charset"]; err == nil && ok && !strings.EqualFold(cs, "utf-8") {
		p := newProblem(KindInvalid, "Content-Type charset must be utf-8 (got "+strconv.Quote(cs)+"); send the body as UTF-8 JSON; nothing was written")
		p.Status = http.StatusUnsupportedMediaType
		return p
	}
	return nil
}

// idempotencyKey reads the Idempotency-Key header. The draft makes it a
// Structured Field String ("…" with \" and \\ escapes, no parameters); a
// bare token is accepted as is. A comma outside a string is two values
// folded into one header (as proxies combine repeated headers): refused
// like two headers. The key's own rules (length, printable) are the call's.
func idempotencyKey(h http.Header) (string, error) {
	vals := h.Values("Idempotency-Key")
	if len(vals) == 0 {
		return "", model.Errorf(model.CodeInvalid, "Idempotency-Key header is required: the operation id, the same on every retry of this request; nothing was written")
	}
	var keys []string
	for _, v := range vals {
		ks, err := keyList(trimOWS(v))
		if err != nil {
			return "", err
		}
		keys = append(keys, ks...)
	}
	if len(keys) > 1 {
		return "", model.Errorf(model.CodeInvalid, "Idempotency-Key header given %d times; send it once (a key with a comma is sent as a quoted string); nothing was written", len(keys))
	}
	if keys[0] == "" {
		return "", model.Errorf(model.CodeInvalid, "Idempotency-Key must not be empty; nothing was written")
	}
	return keys[0], nil
}

// keyList reads one Idempotency-Key field value: its members, separated
// by commas outside strings — one for a well-formed header.
func keyList(v string) ([]string, error) {
	var keys []string
	for {
		var key string
		if strings.HasPrefix(v, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(v) && v[i] != '"'; i++ {
				c := v[i]
				if c == '\\' {
					if i+1 >= len(v) || (v[i+1] != '"' && v[i+1] != '\\') {
						return nil, model.Errorf(model.CodeInvalid, "Idempotency-Key is not a valid structured string (bad escape); nothing was written")
					}
					i++
					c = v[i]
				}
				b.WriteByte(c)
			}
			if i >= len(v) {
				return nil, model.Errorf(model.CodeInvalid, "Idempotency-Key is not a valid structured string (no closing quote); nothing was written")
			}
			key, v = b.String(), trimOWS(v[i+1:])
			switch {
			case strings.HasPrefix(v, ";"):
				return nil, model.Errorf(model.CodeInvalid, "Idempotency-Key must be a string without parameters (got %q after it); nothing was written", v)
			case v != "" && v[0] != ',':
				return nil, model.Errorf(model.CodeInvalid, "Idempotency-Key is not a valid structured string (unescaped quote or bytes after it); nothing was written")
			}
		} else {
			var found bool
			key, v, found = strings.Cut(v, ",")
			key = trimOWS(key)
			if found {
				v = "," + v
			}
		}
		keys = append(keys, key)
		if v == "" {
			return keys, nil
		}
		v = trimOWS(v[1:]) // past the comma: another member
	}
}

// writeResult answers a call: the receipt for done (201 created, 200
// replayed), else the class's problem.
func (g *Gateway) writeResult(w http.ResponseWriter, res reconcile.Result, err error, key string) {
	replayed := res.Receipt != nil && res.Receipt.Status == "replayed"
	h := w.Header()
	if replayed {
		h["Idempotent-Replayed"] = hdrTrue
	}
	if res.Class == model.ClassDone && res.Receipt != nil {
		// The header names are canonical already: set without the
		// canonicalising of Header.Set, on every call's path.
		loc := []string{operationPath(key)}
		h["Content-Type"], h["Cache-Control"], h["Content-Location"] = hdrJSON, hdrNoStore, loc
		status := http.StatusOK
		if !replayed {
			status = http.StatusCreated
			h["Location"] = loc
		}
		w.WriteHeader(status)
		w.Write(g.receipts.encode(res.Receipt))
		return
	}
	k := Kind(res.Class)
	if _, ok := kinds()[k]; !ok || res.Class == model.ClassDone {
		k = KindInternal
	}
	if res.Class == model.ClassInternal && model.IsCode(err, model.CodeBusy) {
		k = KindBusy
	}
	if res.Class == model.ClassInternal && errors.Is(err, reconcile.ErrCannotDispatch) {
		k = KindMisconfigured
	}
	detail := res.Message
	if k == KindMisconfigured {
		detail = misconfiguredDetail // the log has the reason, for the operator
	}
	p := newProblem(k, detail)
	p.Class, p.Key, p.NewKey, p.State = res.Class, key, res.NewKey, res.State
	if res.Class == model.ClassInvalid && !strings.Contains(p.Detail, "nothing was") {
		p.Detail += "; nothing was written"
	}
	if res.Class == model.ClassFailed {
		p.Receipt = res.Receipt
	}
	if res.Class == model.ClassInProgress || k == KindBusy || k == KindInternal || k == KindMisconfigured {
		p.RetryAfter = g.retryAfter()
		if res.RetryAfter > 0 {
			// The provider's own wait (reconcile caps it): sooner, a
			// provider that ignores keys is sent a new request each time.
			p.RetryAfter = seconds(res.RetryAfter)
		}
	}
	if res.Class != model.ClassInvalid {
		p.Instance = operationPath(key)
	}
	p.write(w)
}

// Header values shared by every answer (never modified).
var (
	hdrTrue    = []string{"true"}
	hdrJSON    = []string{"application/json"}
	hdrNoStore = []string{"no-store"}
)

// operationPath is the URL path of key's operation: one path segment.
// url.PathEscape leaves dots alone, and the segments "." and ".." are
// removed by every URL resolver (/v1/operations/.. is /v1/): their dots
// are percent-encoded, which the mux decodes back to the key.
func operationPath(key string) string {
	if key == "." || key == ".." {
		return "/v1/operations/" + strings.Repeat("%2E", len(key))
	}
	return "/v1/operations/" + url.PathEscape(key)
}

// operationView is what a tenant sees of its own operation.
type operationView struct {
	Key            string          `json:"key"`
	Tool           string          `json:"tool"`
	PayloadVersion int             `json:"payload_version"`
	Summary        string          `json:"summary,omitempty"`
	State          model.State     `json:"state"`
	Version        int64           `json:"version"`
	Receipt        json.RawMessage `json:"receipt,omitempty"`
	ProviderRef    string          `json:"provider_ref,omitempty"`
	Contradicted   bool            `json:"contradicted,omitempty"`
	NewKey         string          `json:"new_key,omitempty"`
	SupersedesKey  string          `json:"supersedes_key,omitempty"`
	AttemptCount   int             `json:"attempt_count"`
	Attempts       []attemptView   `json:"attempts,omitempty"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
	ExpiresAt      time.Time       `json:"expires_at,omitzero"`
	// LeaseUntil is when the claim of an in_progress operation ends (or
	// ended, or was released); LeaseEnded and ClaimReleased are
	// reconcile.LeaseEnded and reconcile.ClaimReleased on the ledger's
	// clock, as ops show --json says them.
	LeaseUntil    time.Time `json:"lease_until,omitzero"`
	LeaseEnded    bool      `json:"lease_ended"`
	ClaimReleased bool      `json:"claim_released"`
	// RetryNotBefore: until when a busy provider asked to be left alone
	// (no retry of the key is sent before it).
	RetryNotBefore time.Time `json:"retry_not_before,omitzero"`
}

type attemptView struct {
	Seq       int           `json:"seq"`
	Outcome   model.Outcome `json:"outcome"`
	TraceID   string        `json:"trace_id,omitempty"`
	Error     string        `json:"error,omitempty"`
	StartedAt time.Time     `json:"started_at"`
}

// viewOf is op as its tenant sees it at now (the ledger's clock).
func viewOf(op model.Operation, now time.Time) operationView {
	v := operationView{Key: op.Key, Tool: op.Tool, PayloadVersion: op.PayloadVersion, Summary: op.Summary,
		State: op.State, Version: op.Version, Receipt: op.Receipt, ProviderRef: op.ProviderRef,
		Contradicted: op.Contradicted, AttemptCount: op.AttemptCount,
		CreatedAt: op.CreatedAt, UpdatedAt: op.UpdatedAt, ExpiresAt: op.ExpiresAt,
		LeaseEnded: reconcile.LeaseEnded(op, now), ClaimReleased: reconcile.ClaimReleased(op, now),
		RetryNotBefore: op.RetryNotBefore}
	if op.State == model.StateInProgress {
		v.LeaseUntil = op.LeaseUntil
	}
	return v
}

// notFound is the one answer for a key this tenant does not have — whether
// it never existed or belongs to another tenant.
func notFound(key string) *Problem {
	p := newProblem(KindNotFound, "no operation with key "+strconv.Quote(key))
	p.Instance = operationPath(key)
	return p
}

// getOperation is GET /v1/operations/{key}, in the token's tenant only.
func (g *Gateway) getOperation(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	if key == "" {
		newProblem(KindNotFound, "no such endpoint: GET /v1/operations/ (the list is GET /v1/operations; one operation, GET /v1/operations/{key})").write(w)
		return
	}
	// It reads no parameter: one the client believes applies (a filter, a
	// tenant) is refused, as the list refuses one it does not read.
	for name := range r.URL.Query() {
		newProblem(KindInvalid, "unknown query parameter "+strconv.Quote(name)+" (GET /v1/operations/{key} takes none)").write(w)
		return
	}
	infoOf(r.Context()).key = key
	if model.ValidateIdentity(tenantOf(r.Context()), key) != nil {
		notFound(key).write(w)
		return
	}
	d, err := g.ledger.Detail(r.Context(), tenantOf(r.Context()), key)
	if model.IsCode(err, model.CodeNotFound) {
		// A compacted key of this tenant answers as a call of it would:
		// expired, reconcile. Another tenant's tombstone is not found.
		ts, err := g.tombstone(r.Context(), tenantOf(r.Context()), key)
		switch {
		case err == nil:
			g.writeResult(w, reconcile.TombstoneResult(key, ts), nil, key)
		case model.IsCode(err, model.CodeNotFound):
			notFound(key).write(w)
		default:
			g.storeProblem(r.Context(), err).write(w)
		}
		return
	}
	if err != nil {
		g.storeProblem(r.Context(), err).write(w)
		return
	}
	v := viewOf(d.Operation, g.ledger.Now())
	v.AttemptCount = len(d.Attempts)
	if d.SupersededBy != nil {
		v.NewKey = d.SupersededBy.Key
	}
	if d.Supersedes != nil {
		v.SupersedesKey = d.Supersedes.Key
	}
	for _, a := range d.Attempts {
		v.Attempts = append(v.Attempts, attemptView{Seq: a.Seq, Outcome: a.Outcome, TraceID: a.TraceID, Error: a.Error, StartedAt: a.StartedAt})
	}
	writeJSON(w, http.StatusOK, v)
}

// tombstone reads tenant's tombstone under key on the read side.
func (g *Gateway) tombstone(ctx context.Context, tenant, key string) (*model.Tombstone, error) {
	return g.ledger.Tombstone(ctx, tenant, key)
}

// listOperations is GET /v1/operations?state=S&limit=N&before=KEY: the
// token's tenant's operations, newest first.
func (g *Gateway) listOperations(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	lq := store.ListQuery{Tenant: tenantOf(r.Context()), Limit: 50}
	refuse := func(detail string) {
		newProblem(KindInvalid, detail+" (GET /v1/operations takes "+listParams+")").write(w)
	}
	// Only its own parameters: one it does not read (tool=, tenant=, a
	// misspelt state) is a filter the client believes applies, and a
	// page that ignores it reads as an answer to it.
	for name := range q {
		if name != "state" && name != "limit" && name != "before" {
			refuse("unknown query parameter " + strconv.Quote(name))
			return
		}
	}
	// One value each: a repeated parameter (state=unknown&state=applied)
	// is refused, not read as its first value — the list filters on one
	// state.
	for _, name := range []string{"state", "limit", "before"} {
		if len(q[name]) > 1 {
			refuse("query parameter " + name + " given " + strconv.Itoa(len(q[name])) + " times; send it once (the list takes one value)")
			return
		}
	}
	if vs, ok := q["state"]; ok {
		st, err := model.ParseState(vs[0])
		if err != nil || vs[0] == "" {
			msg := "state must name one state"
			if err != nil && vs[0] != "" {
				msg = err.Error()
			}
			refuse(msg + "; leave it out for every state")
			return
		}
		lq.State = st
	}
	if vs, ok := q["limit"]; ok {
		n, ok := positive(vs[0])
		if !ok || n > 500 {
			refuse("limit must be a number from 1 to 500, in digits")
			return
		}
		lq.Limit = int(n)
	}
	if vs, ok := q["before"]; ok {
		// The cursor is the tenant's own key (next_before): looked up in
		// its tenant only, so another tenant's key reads as one never used.
		op, err := g.ledger.Get(r.Context(), lq.Tenant, vs[0])
		if model.IsCode(err, model.CodeNotFound) || err == nil && op == nil || vs[0] == "" {
			refuse("before must be the next_before of a previous page: no operation of yours has the key " + strconv.Quote(vs[0]))
			return
		}
		if err != nil {
			g.storeProblem(r.Context(), err).write(w)
			return
		}
		lq.BeforeID = op.ID
	}
	ops, err := g.ledger.List(r.Context(), lq)
	if err != nil {
		g.storeProblem(r.Context(), err).write(w)
		return
	}
	out := struct {
		Operations []operationView `json:"operations"`
		NextBefore string          `json:"next_before,omitempty"`
	}{Operations: []operationView{}}
	now := g.ledger.Now()
	for _, op := range ops {
		out.Operations = append(out.Operations, viewOf(op, now))
	}
	if len(ops) == lq.Limit {
		out.NextBefore = ops[len(ops)-1].Key
	}
	writeJSON(w, http.StatusOK, out)
}

// listParams are the parameters GET /v1/operations reads.
const listParams = "state, limit, before: state=S (one state), limit=N (1 to 500, default 50), before=KEY (a page's next_before)"

// positive reads a positive decimal integer spelt in digits only: no
// sign, no spaces, no other base.
func positive(s string) (int64, bool) {
	if s == "" || len(s) > 18 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 1
}

func (g *Gateway) storeProblem(ctx context.Context, err error) *Problem {
	noteErr(ctx, err)
	if model.IsCode(err, model.CodeBusy) {
		p := newProblem(KindBusy, err.Error())
		p.RetryAfter = g.retryAfter()
		return p
	}
	return newProblem(KindInternal, err.Error())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		newProblem(KindInternal, err.Error()).write(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(textsafe.JSON(b), '\n'))
}
