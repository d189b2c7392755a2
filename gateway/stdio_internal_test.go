package gateway

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// filterLines passes JSON-RPC lines through whole and answers every other
// line in place, an over-long one included, without losing its place in the
// stream.
func TestFilterLinesPassesMessagesAndAnswersTheRest(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	in := strings.Join([]string{
		ping,
		`nope`,
		"   ",
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", 200) + `"}}`,
		ping + "\r",
	}, "\n") + "\n"
	pr, pw := io.Pipe()
	var answered bytes.Buffer
	go filterLines(strings.NewReader(in), pw, &lockedWriter{w: &answered}, 100)
	passed, err := io.ReadAll(pr)
	if err != nil {
		t.Fatal(err)
	}
	if want := ping + "\n" + ping + "\n"; string(passed) != want {
		t.Errorf("passed %q, want %q", passed, want)
	}
	lines := strings.Split(strings.TrimSpace(answered.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"code":-32700`) || !strings.Contains(lines[1], `"code":-32600`) ||
		!strings.Contains(lines[1], "over the limit") {
		t.Errorf("answers %q", answered.String())
	}
}

// A message with an id and no method, result or error is neither a request
// nor a response: -32600 with its id (the SDK read it as a response and
// dropped it, and the client waited for ever).
func TestCheckLineAnswersAMessageWithoutAMethod(t *testing.T) {
	for _, line := range []string{`{"jsonrpc":"2.0","id":5}`, `{"jsonrpc":"2.0","id":5,"params":{}}`} {
		got := string(checkLine([]byte(line)))
		if !strings.Contains(got, `"code":-32600`) || !strings.Contains(got, `"id":5`) {
			t.Errorf("%s: %q; want -32600 with id 5", line, got)
		}
	}
	for _, line := range []string{`{"jsonrpc":"2.0","id":5,"result":{}}`, `{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"x"}}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`} {
		if got := checkLine([]byte(line)); got != nil {
			t.Errorf("%s: %q; want it passed", line, got)
		}
	}
}
