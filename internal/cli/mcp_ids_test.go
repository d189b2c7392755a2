package cli

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/internal/reexec"
)

const mcpInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// mcpCallLine is a tools/call line with the id spelled as given.
func mcpCallLine(id, key string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"create_support_task","arguments":{"subject":"marker-` + key + `","idempotency_key":"` + key + `"}}}`
}

// mcpAnswer is one line the server wrote, its id as sent.
type mcpAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	line string
}

func readAnswers(t *testing.T, out []byte) []mcpAnswer {
	t.Helper()
	var as []mcpAnswer
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a mcpAnswer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("stdout line %q: %v", sc.Text(), err)
		}
		a.line = sc.Text()
		as = append(as, a)
	}
	return as
}

// JSON-RPC ids go through the SDK as float64 and back as int64: an id it
// cannot hold exactly was answered under another id (123…890 as
// -9223372036854775808, 9007199254740993 as …992, 7.5 as 7) while the call
// ran and wrote, and two such ids in flight collapsed into one — the
// second call was neither run nor answered. Such a message is refused,
// -32600 with its id as sent (null where the id is not a string or a
// number), and nothing of it runs; ids the SDK holds exactly are echoed.
func TestMCPStdioAnswersUnderTheIDAsSentOrRefuses(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []string
		want  []string // per answer after initialize, in order: "id code" (code 0: a result)
	}{
		{"integer past int64", []string{mcpCallLine("123456789012345678901234567890", "k")}, []string{"123456789012345678901234567890 -32600"}},
		{"negative integer past int64", []string{mcpCallLine("-123456789012345678901234567890", "k")}, []string{"-123456789012345678901234567890 -32600"}},
		{"integer past 2^53", []string{mcpCallLine("9007199254740993", "k")}, []string{"9007199254740993 -32600"}},
		{"integer below -2^53", []string{mcpCallLine("-9007199254740993", "k")}, []string{"-9007199254740993 -32600"}},
		{"fraction", []string{mcpCallLine("7.5", "k")}, []string{"7.5 -32600"}},
		{"exponent", []string{mcpCallLine("1e3", "k")}, []string{"1e3 -32600"}},
		{"integral fraction", []string{mcpCallLine("5.0", "k")}, []string{"5.0 -32600"}},
		{"negative zero", []string{mcpCallLine("-0", "k")}, []string{"-0 -32600"}},
		{"lone surrogate", []string{mcpCallLine(`"\ud800"`, "k")}, []string{`"\ud800" -32600`}},
		{"null", []string{mcpCallLine("null", "k")}, []string{"null -32600"}},
		{"object", []string{mcpCallLine(`{"a":1}`, "k")}, []string{"null -32600"}},
		{"boolean", []string{mcpCallLine("true", "k")}, []string{"null -32600"}},
		{"id named twice", []string{`{"jsonrpc":"2.0","id":5,"id":6,"method":"tools/call","params":{"name":"create_support_task","arguments":{"subject":"s","idempotency_key":"k"}}}`}, []string{"null -32600"}},
		{"params named twice", []string{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{},"params":{"name":"create_support_task","arguments":{"subject":"s","idempotency_key":"k"}}}`}, []string{"5 -32600"}},
		{"jsonrpc 1.0", []string{strings.Replace(mcpCallLine("8", "k"), `"2.0"`, `"1.0"`, 1)}, []string{"8 -32600"}},
		// A member named twice inside params: the SDK acted on the last
		// (another tool, other arguments).
		{"name named twice in params", []string{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"create_support_task","arguments":{"subject":"s","idempotency_key":"k"},"name":"open_incident"}}`}, []string{"5 -32600"}},
		{"arguments named twice in params", []string{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"create_support_task","arguments":{"subject":"a","idempotency_key":"k"},"arguments":{"subject":"b","idempotency_key":"k"}}}`}, []string{"5 -32600"}},
		{"_meta named twice in params", []string{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{},"name":"create_support_task","arguments":{"subject":"s","idempotency_key":"k"},"_meta":{}}}`}, []string{"5 -32600"}},
		{"params member twice, once escaped", []string{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"create_support_task","arguments":{"subject":"s","idempotency_key":"k"},"n\u0061me":"open_incident"}}`}, []string{"5 -32600"}},
		{"two huge ids in flight", []string{mcpCallLine("123456789012345678901234567890", "hid-1"), mcpCallLine("987654321098765432109876543210", "hid-2")},
			[]string{"123456789012345678901234567890 -32600", "987654321098765432109876543210 -32600"}},
		{"2^53", []string{mcpCallLine("9007199254740992", "k")}, []string{"9007199254740992 0"}},
		{"-2^53", []string{mcpCallLine("-9007199254740992", "k")}, []string{"-9007199254740992 0"}},
		{"string", []string{mcpCallLine(`"abc"`, "k")}, []string{`"abc" 0`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := newLedgerFile(t)
			before := digest(t, db)
			in := mcpInit + strings.Join(c.lines, "\n") + "\n"
			cmd := reexec.Command(t, asCLI, nil, "mcp", "--db", db, "--tenant", "agents")
			var out, errb bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(in), &out, &errb
			start := time.Now()
			if err := cmd.Run(); err != nil {
				t.Fatalf("mcp: %v\n%s", err, errb.String())
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("the server took %v to exit at the end of input", d)
			}
			// The refusals are written as the lines are read: they may come
			// before the answer to initialize.
			var as []mcpAnswer
			initialized := false
			for _, a := range readAnswers(t, out.Bytes()) {
				if string(a.ID) == "0" && !initialized {
					initialized = true
					continue
				}
				as = append(as, a)
			}
			if !initialized {
				t.Fatalf("no answer to initialize:\n%s", out.String())
			}
			var got []string
			for _, a := range as {
				code := 0
				if a.Error != nil {
					code = a.Error.Code
				} else if a.Result == nil {
					t.Errorf("neither a result nor an error: %s", a.line)
				}
				if strings.Contains(a.line, "marker-") && a.Error != nil {
					t.Errorf("the error echoes the message: %s", a.line)
				}
				got = append(got, string(a.ID)+" "+itoa(code))
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("answers (id code):\n%s\nwant:\n%s\nstdout:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"), out.String())
			}
			if strings.HasSuffix(c.want[0], " 0") {
				if stdout, _, _ := cli(t, "ops", "list", "--db", db, "--tenant", "agents"); !strings.Contains(stdout, " k ") {
					t.Fatalf("the accepted call is not in the ledger:\n%s", stdout)
				}
			} else if after := digest(t, db); after != before {
				t.Fatalf("a refused message wrote:\n%s\n%s", before, after)
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// Two requests with the same id in flight: the SDK dropped the second
// without a word (nothing run, no answer) and the server, waiting for its
// answer, exited two minutes after the end of input. The second is refused
// at once, -32600 under its id, nothing of it runs, and the end of input
// ends the session as soon as the first is answered.
func TestMCPStdioRefusesAnIDStillInFlight(t *testing.T) {
	db := newLedgerFile(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := reexec.CommandContext(ctx, t, asCLI, nil, "mcp", "--db", db, "--tenant", "agents", "--call-timeout", "60s")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	var all bytes.Buffer
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(what string) mcpAnswer {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("%s: stdout ended\n%s", what, errb.String())
			}
			all.WriteString(l + "\n")
			return readAnswers(t, []byte(l))[0]
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no answer in 30s; so far:\n%s", what, all.String())
		}
		return mcpAnswer{}
	}
	io.WriteString(stdin, mcpInit)
	if a := next("initialize"); string(a.ID) != "0" {
		t.Fatalf("initialize: %s", a.line)
	}
	// Hold the ledger's write lock: the first call waits on it, in flight.
	sdb, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	conn, err := sdb.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	io.WriteString(stdin, mcpCallLine("6", "dup-1")+"\n"+mcpCallLine("6", "dup-2")+"\n")
	a := next("the second id 6")
	if string(a.ID) != "6" || a.Error == nil || a.Error.Code != -32600 || !strings.Contains(a.Error.Message, "duplicate id") {
		t.Fatalf("the second request with id 6: %s; want -32600 duplicate id under id 6", a.line)
	}
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	a = next("the first id 6")
	if string(a.ID) != "6" || a.Result == nil || strings.Contains(a.line, `"isError":true`) {
		t.Fatalf("the first request with id 6: %s; want its receipt", a.line)
	}
	stdin.Close()
	for l := range lines {
		t.Errorf("a further answer: %s", l)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("mcp: %v\n%s", err, errb.String())
	}
	if d := time.Since(before); d > 30*time.Second {
		t.Errorf("the server exited %v after the calls; want promptly once the first was answered", d)
	}
	out, _, _ := cli(t, "ops", "list", "--db", db, "--tenant", "agents")
	if !strings.Contains(out, "dup-1") || strings.Contains(out, "dup-2") {
		t.Fatalf("the ledger holds (want dup-1, not dup-2):\n%s", out)
	}
}
