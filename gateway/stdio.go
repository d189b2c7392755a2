package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

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
// lines are skipped. The end of in ends the session.
func StdioTransport(in io.Reader, out io.Writer, maxLine int) mcp.Transport {
	if maxLine <= 0 {
		maxLine = mcp.DefaultMaxLineLength
	}
	w := &lockedWriter{w: out}
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
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (l *lockedWriter) Close() error { return nil }

// filterLines copies the good lines of in to pw and answers the bad ones
// on out, until in ends or the SDK stops reading.
func filterLines(in io.Reader, pw *io.PipeWriter, out io.Writer, maxLine int) {
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
				if _, werr := out.Write(bad); werr != nil {
					pw.CloseWithError(werr)
					return
				}
			} else if _, werr := pw.Write(append(line, '\n')); werr != nil {
				return // the session is over
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
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

// checkLine is nil for a line that is one JSON-RPC message, else the error
// response that answers it.
func checkLine(line []byte) []byte {
	if !json.Valid(line) {
		return rpcError(nil, rpcParseError, "Parse error: the line is not JSON; it was ignored")
	}
	if line[0] == '[' {
		return rpcError(nil, rpcInvalidRequest, "Invalid request: JSON-RPC batches are not supported; send one message per line")
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		var id json.RawMessage
		if json.Unmarshal(line, &probe) == nil && len(probe.ID) > 0 && (probe.ID[0] == '"' || probe.ID[0] == '-' || (probe.ID[0] >= '0' && probe.ID[0] <= '9')) {
			id = probe.ID
		}
		return rpcError(id, rpcInvalidRequest, "Invalid request: not a JSON-RPC 2.0 message ("+err.Error()+"); it was ignored")
	}
	return nil
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
