package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC 2.0's error codes for what a line on stdin can be wrong with.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
)

// StdioTransport is MCP over newline-delimited JSON on in and out (what
// `retrysafe mcp` speaks), made to outlive a bad line: the SDK's own stdio
// transport ends the session at the first line that is not a JSON-RPC
// message, and one stray line from a client would cut an agent off its
// tools. Here such a line is answered — -32700 parse error for a line that
// is not JSON, -32600 invalid request for JSON that is not one JSON-RPC
// message, or a line over maxLine bytes — and the session goes on. Blank
// lines are skipped. The end of in ends the session once every request
// read before it has been answered (for at most drainTimeout): a client
// may write its requests and close stdin at once, and a tool call in
// flight then must not lose its answer (its effect is committed).
func StdioTransport(in io.Reader, out io.Writer, maxLine int) mcp.Transport {
	if maxLine <= 0 {
		maxLine = mcp.DefaultMaxLineLength
	}
	w := &lockedWriter{w: out, pending: newPending()}
	pr, pw := io.Pipe()
	go filterLines(in, pw, w, maxLine)
	// The SDK reads only the lines that passed; its writes and the
	// answers to bad lines share one lock, so no line is interleaved.
	return &mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: -1}
}

// lockedWriter serializes whole-message writes from the SDK and from
// filterLines; Close does not close the underlying writer (the process's
// stdout).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
	// pending are the requests passed to the SDK and not yet answered
	// (nil: not tracked).
	pending *pending
}

// Write writes one message of the SDK's; a response answers its request.
func (l *lockedWriter) Write(b []byte) (int, error) {
	n, err := l.write(b)
	if l.pending != nil {
		if m, derr := jsonrpc.DecodeMessage(bytes.TrimSpace(b)); derr == nil {
			if r, ok := m.(*jsonrpc.Response); ok {
				l.pending.done(r.ID)
			}
		}
	}
	return n, err
}

// write writes b whole under the lock (filterLines' own answers too).
func (l *lockedWriter) write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// drainTimeout bounds how long the end of input waits for the answers to
// the requests in flight: longer than a call may take (--call-timeout,
// 30 s, plus the provider's answer).
var drainTimeout = 2 * time.Minute

// pending holds the ids of requests in flight until they are answered.
type pending struct {
	mu    sync.Mutex
	ids   map[string]int
	empty chan struct{} // closed while nothing is pending
}

func newPending() *pending {
	p := &pending{ids: map[string]int{}, empty: make(chan struct{})}
	close(p.empty)
	return p
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// add makes id pending; false if it already is (a request with this id is
// in flight, and the SDK would drop the new one without an answer).
func (p *pending) add(id jsonrpc.ID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := idKey(id)
	if p.ids[k] > 0 {
		return false
	}
	if len(p.ids) == 0 {
		p.empty = make(chan struct{})
	}
	p.ids[k] = 1
	return true
}

func (p *pending) done(id jsonrpc.ID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := idKey(id)
	if p.ids[k] == 0 {
		return
	}
	if p.ids[k]--; p.ids[k] == 0 {
		delete(p.ids, k)
	}
	if len(p.ids) == 0 {
		close(p.empty)
	}
}

// wait returns when nothing is pending, or after timeout.
func (p *pending) wait(timeout time.Duration) {
	p.mu.Lock()
	ch := p.empty
	p.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

func (l *lockedWriter) Close() error { return nil }

// filterLines copies the good lines of in to pw and answers the bad ones
// on out, until in ends (and what it asked is answered) or the SDK stops
// reading.
func filterLines(in io.Reader, pw *io.PipeWriter, out *lockedWriter, maxLine int) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r, maxLine)
		if len(line) > 0 || tooLong {
			var bad []byte
			switch {
			case tooLong:
				bad = rpcError(nil, rpcInvalidRequest, "Invalid request: the line is over the limit of the transport; it was ignored")
			default:
				bad = checkLine(line)
			}
			if bad != nil {
				if _, werr := out.write(bad); werr != nil {
					pw.CloseWithError(werr)
					return
				}
			} else {
				// A request is pending from before the SDK reads it, so its
				// answer cannot come first. One whose id is still in flight
				// is answered here: the SDK dropped it without a word, and
				// the end of input waited for its answer.
				var req *jsonrpc.Request
				dup := false
				if m, derr := jsonrpc.DecodeMessage(line); derr == nil {
					if r, ok := m.(*jsonrpc.Request); ok && r.ID.IsValid() && out.pending != nil {
						req, dup = r, !out.pending.add(r.ID)
					}
				}
				if dup {
					if _, werr := out.write(rpcError(messageID(line), rpcInvalidRequest,
						"duplicate id: a request with this id is still in flight; nothing of this one was run")); werr != nil {
						pw.CloseWithError(werr)
						return
					}
				} else if _, werr := pw.Write(append(line, '\n')); werr != nil {
					if req != nil {
						out.pending.done(req.ID)
					}
					return // the session is over
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			if out.pending != nil {
				out.pending.wait(drainTimeout)
			}
			pw.CloseWithError(err)
			return
		}
	}
}

// readLine reads one line without its end of line, trimmed of blanks. A
// line longer than max is read to its end and reported as tooLong.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		part, err := r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(part) > max+2 { // the \r\n is not counted
				tooLong, buf = true, nil
			} else {
				buf = append(buf, part...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSpace(buf), tooLong, err
	}
}

// checkLine is nil for a line that is one JSON-RPC message the SDK reads
// as sent, else the error response that answers it (see checkMessage).
func checkLine(line []byte) []byte { return checkMessage(line, "line") }

// noMethod is the error response for a JSON-RPC message (valid JSON) that
// has no method and neither a result nor an error — not a request, not a
// response, though the SDK decodes it as a response and drops it, leaving
// the client waiting — else nil.
func noMethod(msg []byte) []byte {
	var probe struct {
		Method *json.RawMessage `json:"method"`
		Result *json.RawMessage `json:"result"`
		Error  *json.RawMessage `json:"error"`
	}
	if json.Unmarshal(msg, &probe) != nil || probe.Method != nil || probe.Result != nil || probe.Error != nil {
		return nil
	}
	return rpcError(messageID(msg), rpcInvalidRequest, "Invalid request: a message without a method (and without a result or an error); it was ignored")
}

// messageID is msg's id where it is a string or a number, else nil.
func messageID(msg []byte) json.RawMessage {
	m, twice := topMembers(msg)
	if twice == "id" {
		return nil
	}
	return replyID(m["id"])
}

// rpcError is one JSON-RPC error response line; id null when the request's
// id could not be read.
func rpcError(id json.RawMessage, code int, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return append(b, '\n')
}
