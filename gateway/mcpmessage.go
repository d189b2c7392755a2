package gateway

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxExactID is the largest integer id the SDK answers under unchanged: it
// reads an id as a float64 and writes it back as an int64, so past 2^53 (or
// with a fraction or an exponent) the answer came under another id, and two
// such ids in flight collapsed into one.
const maxExactID = 1 << 53

// checkMessage is nil for one JSON-RPC 2.0 message the SDK reads as sent,
// else the error response that answers it, and nothing of it runs: -32700
// for what is not JSON, -32600 for a batch, for what is not one JSON-RPC
// 2.0 object, for a member (jsonrpc, id, method, params, result, error)
// named twice, or a member of params named twice, for an id that is not a string or an integer within ±2^53
// (MCP takes no null id), and for a message without a method, a result or
// an error. The answer carries the id as sent where it is a string or a
// number, else null; it never repeats the message. unit is "line" or
// "request", what one message travels in.
func checkMessage(msg []byte, unit string) []byte {
	if !json.Valid(msg) {
		return rpcError(nil, rpcParseError, "Parse error: the "+unit+" is not JSON"+notJSONWhy(msg)+"; nothing of it was run")
	}
	msg = bytes.TrimSpace(msg)
	if msg[0] == '[' {
		return rpcError(nil, rpcInvalidRequest, "Invalid request: JSON-RPC batches are not supported; send one message per "+unit)
	}
	members, twice := topMembers(msg)
	if members == nil {
		return rpcError(nil, rpcInvalidRequest, "Invalid request: a JSON-RPC message is a JSON object; nothing of it was run")
	}
	id, hasID := members["id"]
	if twice == "id" {
		id = nil
	}
	reply := replyID(id)
	if twice != "" {
		return rpcError(reply, rpcInvalidRequest, "Invalid request: the message names "+strconv.Quote(twice)+" twice; nothing of it was run")
	}
	if name, ok := paramsTwice(members["params"]); ok {
		return rpcError(reply, rpcInvalidRequest, "Invalid request: the message's params name "+name+" twice; nothing of it was run")
	}
	if v, ok := members["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return rpcError(reply, rpcInvalidRequest, `Invalid request: "jsonrpc" must be "2.0"; nothing of it was run`)
	}
	if hasID && !exactID(id) {
		return rpcError(reply, rpcInvalidRequest, "Invalid request: the id must be a string or an integer between -2^53 and 2^53 "+
			"(this server could not answer under this one exactly); nothing of it was run")
	}
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		if strings.Contains(err.Error(), "nesting depth") {
			// Valid JSON the SDK reads to a lesser depth than
			// encoding/json (10000 levels): say so, in /v1/tools' words.
			levels := "the levels"
			if _, n, ok := strings.Cut(err.Error(), "depth of "); ok {
				levels = "the " + n + " levels"
			}
			return rpcError(reply, rpcInvalidRequest, "Invalid request: the message nests arrays or objects deeper than "+levels+
				" an MCP message is read to (exceeded max depth); nothing of it was run")
		}
		return rpcError(reply, rpcInvalidRequest, "Invalid request: not a JSON-RPC 2.0 message; nothing of it was run")
	}
	return noMethod(msg)
}

// utf8BOM is the UTF-8 byte order mark, which JSON text must not start
// with (RFC 8259 §8.1).
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// notJSONWhy names, for a message that is not JSON, a reason a client
// cannot see in the parser's words: a byte order mark at its start, or a
// nesting deeper than encoding/json reads (10000 levels). "" otherwise.
func notJSONWhy(msg []byte) string {
	if bytes.HasPrefix(bytes.TrimLeft(msg, " \t\r\n"), utf8BOM) {
		return ": it starts with a UTF-8 byte order mark (bytes EF BB BF), which JSON does not allow — send it without one"
	}
	var v json.RawMessage
	if err := json.Unmarshal(msg, &v); err != nil && strings.Contains(err.Error(), "exceeded max depth") {
		return ": it nests arrays or objects deeper than 10000 levels (exceeded max depth)"
	}
	return ""
}

// topMembers are the members of the JSON object msg (valid JSON) by exact
// name (the SDK matches names exactly), and the first of jsonrpc, id,
// method, params, result and error named twice, if any — the SDK kept one
// of each, which no other reader need agree on. nil if msg is not an
// object.
func topMembers(msg []byte) (map[string]json.RawMessage, string) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, ""
	}
	m := map[string]json.RawMessage{}
	twice := ""
	for dec.More() {
		t, err := dec.Token()
		name, ok := t.(string)
		if err != nil || !ok {
			return nil, ""
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, ""
		}
		if _, seen := m[name]; seen && twice == "" {
			switch name {
			case "jsonrpc", "id", "method", "params", "result", "error":
				twice = name
			}
		}
		m[name] = v
	}
	return m, twice
}

// paramsTwice reports whether params (a JSON value, valid) is an object
// that names a member twice — the SDK acts on the last (another tool,
// other arguments), which a client's log need not show — and how the
// answer names it: quoted where it is one of MCP's (name, arguments,
// _meta, …), else "a member", so the answer never repeats the message.
// Duplicates inside the arguments are the tool call's to refuse (Fix the
// arguments).
func paramsTwice(params json.RawMessage) (string, bool) {
	if len(params) == 0 || params[0] != '{' {
		return "", false
	}
	name := twiceNamed(params, 0)
	if name == "" {
		return "", false
	}
	switch name {
	case "name", "arguments", "_meta", "cursor", "uri", "protocolVersion", "capabilities", "clientInfo", "level", "ref", "argument", "progressToken":
		return strconv.Quote(name), true
	}
	return "a member", true
}

// replyID is the id an error answer carries: id as sent where it is a
// string (of valid UTF-8) or a number, else null.
func replyID(id json.RawMessage) json.RawMessage {
	if len(id) > 0 && (id[0] == '"' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9')) && utf8.Valid(id) {
		return id
	}
	return nil
}

// exactID reports whether the SDK answers under id (a JSON value) exactly
// as sent: a string that decodes to what it says (no lone surrogate, no
// invalid UTF-8, which decode to U+FFFD), or an integer spelled without a
// fraction or an exponent, not -0, within ±2^53.
func exactID(id json.RawMessage) bool {
	switch {
	case len(id) == 0:
		return false
	case id[0] == '"':
		return exactString(id)
	case id[0] == '-' || (id[0] >= '0' && id[0] <= '9'):
		n, err := strconv.ParseInt(string(id), 10, 64)
		return err == nil && strconv.FormatInt(n, 10) == string(id) && n >= -maxExactID && n <= maxExactID
	}
	return false
}

// exactString reports whether the JSON string s is valid UTF-8 whose
// \u escapes pair every surrogate.
func exactString(s []byte) bool {
	if !utf8.Valid(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		i++
		if i >= len(s) || s[i] != 'u' {
			continue
		}
		r, ok := hex4(s, i+1)
		if !ok {
			return false
		}
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return false
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 >= len(s) || s[i+1] != '\\' || s[i+2] != 'u' {
				return false
			}
			lo, ok := hex4(s, i+3)
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 6
		}
	}
	return true
}

func hex4(s []byte, at int) (rune, bool) {
	if at+4 > len(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(s[at:at+4]), 16, 32)
	return rune(n), err == nil
}
