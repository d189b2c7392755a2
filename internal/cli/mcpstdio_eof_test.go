package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/internal/reexec"
)

// A client may write its requests and close its end of stdin at once (a
// script piping lines in; the MCP spec's shutdown is closing stdin). Every
// request sent before the end is answered before the server exits: the end
// of input used to end the session with the tool calls in flight, so a
// call whose effect was committed got no answer at all, and later requests
// none either.
func TestMCPStdioAnswersEveryRequestSentBeforeStdinEnds(t *testing.T) {
	db := newLedgerFile(t)
	var in bytes.Buffer
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	const calls = 20
	want := map[string]bool{"0": true}
	for i := 1; i <= calls; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"create_support_task","arguments":{"subject":"s%d","idempotency_key":"eof-%d"}}}`+"\n", i, i, i)
		want[fmt.Sprint(i)] = true
		if i%5 == 0 {
			in.WriteString("not json\n") // garbage between them changes nothing
		}
	}
	fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":"list","method":"tools/list"}`+"\n"+`{"jsonrpc":"2.0","id":"p","method":"ping"}`+"\n")
	want[`"list"`], want[`"p"`] = true, true
	stdin := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(stdin, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(stdin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := reexec.Command(t, asCLI, nil, "mcp", "--db", db, "--tenant", "agents")
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = f, &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcp: %v\n%s", err, errb.String())
	}
	got := map[string]bool{}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result *struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout line %q: %v", sc.Text(), err)
		}
		if m.Result != nil && m.Result.IsError {
			t.Errorf("an error result: %s", sc.Text())
		}
		got[string(m.ID)] = true
	}
	var missing []string
	for id := range want {
		if !got[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Errorf("no answer to %d of %d requests (ids %s) before the server exited", len(missing), len(want), strings.Join(missing, " "))
	}
	stdout, _, code := cli(t, "ops", "list", "--db", db, "--tenant", "agents", "--limit", "100")
	if code != 0 || strings.Count(stdout, "eof-") != calls {
		t.Errorf("the ledger holds %d of the %d calls:\n%s", strings.Count(stdout, "eof-"), calls, stdout)
	}
}
