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
