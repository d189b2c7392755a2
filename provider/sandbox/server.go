package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/provider"
)

// FaultKind is one of the server's fault switches.
type FaultKind string

const (
	// FaultNone answers normally.
	FaultNone FaultKind = ""
	// FaultDropAfterApply applies the delivery, then drops the connection
	// without a reply: the caller cannot know it was applied.
	FaultDropAfterApply FaultKind = "drop-after-apply"
	// FaultDelay waits, then applies and answers — whether or not the
	// caller is still waiting (a real server does not undo its work).
	FaultDelay FaultKind = "delay"
	// FaultReject refuses for good: 422, nothing applied.
	FaultReject FaultKind = "reject"
	// Fault5xx answers 500 without applying — the caller cannot know that.
	Fault5xx FaultKind = "5xx"
	// FaultBusy answers 429 with Retry-After: 1, nothing applied.
	FaultBusy FaultKind = "busy"
	// FaultFailBefore answers 503 "not accepted: nothing was applied" — a
	// provider that documents its 503 as a guarantee (classify it
	// not_applied in the caller's config).
	FaultFailBefore FaultKind = "fail-before"
	// FaultStall waits, then drops the connection without applying
	// anything: a provider too slow to take the request, which it drops.
	FaultStall FaultKind = "stall"
)

// FaultKinds is every fault switch.
var FaultKinds = []FaultKind{FaultDropAfterApply, FaultDelay, FaultReject, Fault5xx, FaultBusy, FaultFailBefore, FaultStall}

// Fault is a switch and, for delay, how long.
type Fault struct {
	Kind  FaultKind     `json:"fault"`
	Delay time.Duration `json:"delay,omitempty"`
	// Count is how many dispatches it applies to (queued faults; 0 = 1).
	Count int `json:"count,omitempty"`
}

// ParseFault reads "drop-after-apply", "delay=2s", "reject", "5xx",
// "busy", "fail-before", "stall=2s".
func ParseFault(s string) (Fault, error) {
	if s == "" {
		return Fault{}, nil
	}
	for _, k := range []FaultKind{FaultDelay, FaultStall} {
		if d, ok := strings.CutPrefix(s, string(k)+"="); ok {
			dur, err := time.ParseDuration(d)
			if err != nil || dur <= 0 || dur > maxFaultDelay {
				return Fault{}, fmt.Errorf("fault %s=%s: not a duration above 0 and at most %s", k, d, maxFaultDelay)
			}
			return Fault{Kind: k, Delay: dur}, nil
		}
	}
	for _, k := range FaultKinds {
		if string(k) == s && k != FaultDelay && k != FaultStall {
			return Fault{Kind: k}, nil
		}
	}
	return Fault{}, fmt.Errorf("unknown fault %q (want drop-after-apply, delay=DURATION, reject, 5xx, busy, fail-before or stall=DURATION)", s)
}

// maxFaultDelay bounds a delay or stall: a sandbox switch, not a way to
// hold a server's goroutines.
const maxFaultDelay = 10 * time.Minute

// FaultHeader, on a delivery request, selects that request's fault (the
// ParseFault syntax) instead of the queued or standing one: a caller that
// plays many outcomes at once (the demo) picks each call's. Only the
// sandbox server reads it; a real API would ignore it.
const FaultHeader = "X-Sandbox-Fault"

// TimeHeader, on a delivery request, is the moment (RFC 3339) the delivery
// is stamped with instead of the server's clock: a caller that plays
// traffic on an earlier clock (the demo) dates the provider's records on
// it too. It is used for the stamp only, and refused when it is not a
// time, later than the server's clock or more than MaxTimeHeaderAge back.
const TimeHeader = "X-Sandbox-Time"

// MaxTimeHeaderAge is how far back a TimeHeader may date a delivery.
const MaxTimeHeaderAge = 7 * 24 * time.Hour

// KeyHeader is where the server reads the downstream key.
const KeyHeader = "Idempotency-Key"

// maxBody bounds a delivery's body, like the ledger's arguments.
const maxBody = 64 << 10

// Server serves a sandbox file over HTTP, standing in for a third party's
// API:
//
//	POST /v1/{provider}/deliveries            body: JSON object; Idempotency-Key: KEY
//	     → 201 {"id": "sbx_N", "status": "delivered"}
//	GET  /v1/{provider}/deliveries/{key}      → 200 {"id", "count", "created_at"} | 404
//	POST /_sandbox/faults                     {"fault": "drop-after-apply", "count": 1}: queue faults
//	DELETE /_sandbox/faults                   clear them
//	GET  /_sandbox/health                     → 200
//
// A provider name listed in honour-keys answers a repeated key with its
// first delivery; any other name makes a new delivery on every request.
type Server struct {
	sb      *Sandbox
	honours map[string]bool

	mu       sync.Mutex
	standing Fault   // applies when the queue is empty
	queue    []Fault // each dispatch takes the first
}

// NewServer serves sb; honourKeys lists the provider names that honour
// downstream keys; standing is the fault every dispatch meets when no
// queued fault is waiting.
func NewServer(sb *Sandbox, honourKeys []string, standing Fault) *Server {
	h := map[string]bool{}
	for _, n := range honourKeys {
		h[n] = true
	}
	return &Server{sb: sb, honours: h, standing: standing}
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/{provider}/deliveries", s.deliver)
	mux.HandleFunc("GET /v1/{provider}/deliveries/{key}", s.lookup)
	mux.HandleFunc("POST /_sandbox/faults", s.setFaults)
	mux.HandleFunc("DELETE /_sandbox/faults", s.clearFaults)
	mux.HandleFunc("GET /_sandbox/health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	return mux
}

func (s *Server) takeFault() Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return s.standing
	}
	f := s.queue[0]
	if f.Count <= 1 {
		s.queue = s.queue[1:]
	} else {
		s.queue[0].Count--
	}
	return f
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func errorJSON(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func (s *Server) deliver(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("provider")
	key := r.Header.Get(KeyHeader)
	if key == "" {
		errorJSON(w, http.StatusBadRequest, "missing "+KeyHeader+" header")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		errorJSON(w, http.StatusBadRequest, "reading the body: "+err.Error())
		return
	}
	var obj map[string]any
	if len(body) > maxBody || json.Unmarshal(body, &obj) != nil || obj == nil {
		errorJSON(w, http.StatusBadRequest, "the body must be one JSON object of at most 64 KiB")
		return
	}
	// The delivery is the server's work: a caller that hangs up does not
	// undo it.
	ctx := context.WithoutCancel(r.Context())
	if v := r.Header.Get(TimeHeader); v != "" {
		at, err := time.Parse(time.RFC3339Nano, v)
		now := time.Now()
		if err != nil || at.After(now) || now.Sub(at) > MaxTimeHeaderAge {
			errorJSON(w, http.StatusBadRequest, TimeHeader+" must be an RFC 3339 time, not later than the server's clock and at most "+MaxTimeHeaderAge.String()+" back")
			return
		}
		ctx = withClock(ctx, at)
	}
	var f Fault
	if v := r.Header.Get(FaultHeader); v != "" {
		if f, err = ParseFault(v); err != nil {
			errorJSON(w, http.StatusBadRequest, FaultHeader+": "+err.Error())
			return
		}
	} else {
		f = s.takeFault()
	}
	honours := s.honours[name]
	p := s.sb.servedProvider(name, honours)
	if honours {
		// A repeated key gets the first result, whatever this request
		// would have met.
		if ev, err := p.Lookup(ctx, key); err == nil && ev.Found {
			if f.Kind == FaultDropAfterApply {
				drop(w)
				return
			}
			writeJSON(w, http.StatusOK, map[string]string{"id": ev.Ref, "status": "delivered"})
			return
		}
	}
	switch f.Kind {
	case FaultReject:
		errorJSON(w, http.StatusUnprocessableEntity, "recipient refused")
		return
	case Fault5xx:
		errorJSON(w, http.StatusInternalServerError, "internal error")
		return
	case FaultBusy:
		w.Header().Set("Retry-After", "1")
		errorJSON(w, http.StatusTooManyRequests, "slow down")
		return
	case FaultFailBefore:
		errorJSON(w, http.StatusServiceUnavailable, "not accepted: nothing was applied")
		return
	case FaultStall:
		time.Sleep(f.Delay)
		drop(w)
		return
	case FaultDelay:
		time.Sleep(f.Delay)
	}
	// Not told the tool: the delivery is kept under the provider's name,
	// as taken over HTTP (LookupQuery does not compare it).
	resp, err := p.Dispatch(ctx, provider.Request{DownstreamKey: key, Tool: name, Args: body})
	if err != nil || resp.Status != provider.Applied {
		errorJSON(w, http.StatusInternalServerError, fmt.Sprintf("sandbox: %v %s", err, resp.Detail))
		return
	}
	if f.Kind == FaultDropAfterApply {
		drop(w)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"id": resp.Ref, "status": "delivered"})
}

// drop closes the connection without a reply.
func drop(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler) // HTTP/2: abort the stream
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request) {
	name, key := r.PathValue("provider"), r.PathValue("key")
	ev, err := s.sb.Provider(name, s.honours[name]).Lookup(r.Context(), key)
	if err != nil {
		errorJSON(w, http.StatusInternalServerError, "sandbox: "+err.Error())
		return
	}
	if !ev.Found {
		errorJSON(w, http.StatusNotFound, ev.Detail)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": ev.Ref, "count": ev.Effects, "created_at": ev.At.Format(time.RFC3339Nano)})
}

func (s *Server) setFaults(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Fault string `json:"fault"`
		Count int    `json:"count"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&in); err != nil {
		errorJSON(w, http.StatusBadRequest, "want {\"fault\": \"drop-after-apply\", \"count\": 1}")
		return
	}
	f, err := ParseFault(in.Fault)
	if err != nil || in.Count < 0 {
		errorJSON(w, http.StatusBadRequest, fmt.Sprint(err))
		return
	}
	f.Count = max(in.Count, 1)
	s.mu.Lock()
	s.queue = append(s.queue, f)
	n := 0 // dispatches the queue covers: a fault of count N is N of them
	for _, q := range s.queue {
		n += q.Count
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]int{"queued": n})
}

func (s *Server) clearFaults(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.queue = nil
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]int{"queued": 0})
}
