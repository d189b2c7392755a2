package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

type infoKey struct{}

// reqInfo is what a request's handlers learn about it, for its one access
// log line: set by observe, filled in by authed and the call.
type reqInfo struct {
	trace  string
	base   *slog.Logger // the gateway's logger
	log    *slog.Logger // base with the trace id, made when first needed
	tenant string
	key    string
	class  string
	// err is a ledger error behind the answer, for the log line only:
	// with its cause (a driver's words name hosts and sockets), which the
	// answer leaves out.
	err error
}

// noteErr keeps err for the request's log line.
func noteErr(ctx context.Context, err error) {
	if err != nil {
		infoOf(ctx).err = err
	}
}

// withCause is err's message and its cause's, where the message does not
// hold it already: what the operator's log says of a ledger error.
func withCause(err error) string {
	s := err.Error()
	if c := errors.Unwrap(err); c != nil && !strings.Contains(s, c.Error()) {
		s += " (" + c.Error() + ")"
	}
	return s
}

func infoOf(ctx context.Context) *reqInfo {
	if i, ok := ctx.Value(infoKey{}).(*reqInfo); ok {
		return i
	}
	return &reqInfo{base: slog.New(slog.DiscardHandler)}
}

// logger is the request's logger: every line carries its trace id.
func logger(ctx context.Context) *slog.Logger { return infoOf(ctx).logger() }

// logger makes the request's logger on first use: most requests log
// nothing below the configured level, and With costs a copy of the
// handler's state.
func (i *reqInfo) logger() *slog.Logger {
	if i.log == nil {
		i.log = i.base.With("trace_id", i.trace)
	}
	return i.log
}

// traceOf is the request's trace id (see traceID).
func traceOf(ctx context.Context) string { return infoOf(ctx).trace }

// traceID is the caller's trace: a W3C traceparent's trace-id, else
// X-Trace-Id as sent (validated with the call: printable, at most 255
// bytes), else a new random one, so every log line and attempt of a
// request can be found together.
func traceID(h http.Header) string {
	if id, ok := parseTraceparent(h.Get("traceparent")); ok {
		return id
	}
	if v := h.Get("X-Trace-Id"); v != "" {
		return v
	}
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// parseTraceparent reads "00-<32 hex trace-id>-<16 hex parent-id>-<2 hex
// flags>" (W3C Trace Context); an all-zero trace-id is invalid.
func parseTraceparent(v string) (string, bool) {
	parts := strings.Split(strings.TrimSpace(v), "-")
	if len(parts) < 4 || len(parts[0]) != 2 || parts[0] == "ff" || len(parts[1]) != 32 || len(parts[2]) != 16 || len(parts[3]) != 2 {
		return "", false
	}
	if parts[0] == "00" && len(parts) != 4 {
		return "", false
	}
	for _, p := range parts[:4] {
		if !isLowerHex(p) {
			return "", false
		}
	}
	if strings.Trim(parts[1], "0") == "" || strings.Trim(parts[2], "0") == "" {
		return "", false
	}
	return parts[1], true
}

func isLowerHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// statusWriter remembers the status for the access log and metrics. It
// passes Flush through (MCP may stream) and unwraps for
// http.ResponseController.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// route is a request's metrics label: a fixed set, never a raw path.
func route(path string) string {
	switch {
	case strings.HasPrefix(path, "/v1/tools/"):
		return "/v1/tools/{tool}"
	case path == "/v1/operations":
		return "/v1/operations"
	case strings.HasPrefix(path, "/v1/operations/"):
		return "/v1/operations/{key}"
	case path == "/mcp", path == "/healthz", path == "/metrics":
		return path
	case strings.HasPrefix(path, "/problems/"):
		return "/problems/{kind}"
	}
	return "other"
}

// observe gives each request its trace id and logger, answers with the
// trace id in X-Trace-Id, and logs and counts it when it ends.
func (g *Gateway) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		trace := traceID(r.Header)
		info := &reqInfo{trace: trace, base: g.log}
		ctx := context.WithValue(r.Context(), infoKey{}, info)
		sw := &statusWriter{ResponseWriter: w}
		sw.Header()["X-Trace-Id"] = []string{trace}
		rt := route(r.URL.Path)
		g.metrics.inFlight.Inc()
		defer func() {
			g.metrics.inFlight.Dec()
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			g.metrics.request(rt, status).Inc()
			switch {
			case info.err != nil && g.log.Enabled(ctx, slog.LevelWarn):
				info.logger().Warn("request", "method", r.Method, "route", rt, "status", status,
					"tenant", info.tenant, "key", info.key, "class", info.class,
					"duration_ms", float64(time.Since(start).Microseconds())/1000, "err", withCause(info.err))
			case rt != "/metrics" && rt != "/healthz" && g.log.Enabled(ctx, slog.LevelInfo):
				info.logger().Info("request", "method", r.Method, "route", rt, "status", status,
					"tenant", info.tenant, "key", info.key, "class", info.class,
					"duration_ms", float64(time.Since(start).Microseconds())/1000)
			}
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}
