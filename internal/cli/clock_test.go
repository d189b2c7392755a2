package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// serve's log says when this host's clock is off the ledger's by more than
// 1 s: at open, and again only when a later measurement moved more than
// 1 s from the one it last warned of; once back within 1 s, it says so.
func TestClockWatchWarnsOnlyOfWhatChanged(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		name    string
		offsets []time.Duration // the first is the one at open
		want    string          // per offset: w warn, i back in step, . nothing
	}{
		{"in step", []time.Duration{0, 3 * time.Millisecond, -s}, "..."},
		{"ahead at open", []time.Duration{-time.Hour}, "w"},
		{"behind at open", []time.Duration{1500 * time.Millisecond}, "w"},
		{"exactly 1 s is within", []time.Duration{s, -s}, ".."},
		{"steady skew warns once", []time.Duration{-time.Hour, -time.Hour - 300*time.Millisecond, -time.Hour + 900*time.Millisecond}, "w.."},
		{"moved more than 1 s since the warning", []time.Duration{-time.Hour, -time.Hour - 600*time.Millisecond, -time.Hour - 1200*time.Millisecond, -time.Hour - 1300*time.Millisecond}, "w.w."},
		{"drifts out after open", []time.Duration{200 * time.Millisecond, 900 * time.Millisecond, 1100 * time.Millisecond}, "..w"},
		{"fixed, then off again", []time.Duration{-time.Hour, 10 * time.Millisecond, 20 * time.Millisecond, 2 * s}, "wi.w"},
		{"back within 1 s but not 1 s from the warning", []time.Duration{1500 * time.Millisecond, 900 * time.Millisecond}, "w."},
	} {
		t.Run(c.name, func(t *testing.T) {
			var w clockWatch
			got := ""
			for _, o := range c.offsets {
				switch w.see(o) {
				case clockOff:
					got += "w"
				case clockInStep:
					got += "i"
				default:
					got += "."
				}
			}
			if got != c.want {
				t.Errorf("offsets %v: %q; want %q", c.offsets, got, c.want)
			}
		})
	}
}

// lockedBuffer is a writer a command writes from several goroutines while
// the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// clockWarnings are serve's log lines (JSON) that warn of the host's clock.
func clockWarnings(t *testing.T, log string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a log line is not JSON: %q", sc.Text())
		}
		if m["level"] == "WARN" && strings.Contains(m["msg"].(string), "clock") {
			out = append(out, m)
		}
	}
	return out
}

// serve on a host whose clock runs an hour ahead of the database server's
// warns at open — one line: the offset, the database's time and the
// host's — and again when a refresh finds the host a further 31 s ahead.
func TestServeWarnsWhenTheHostClockIsOffTheDatabases(t *testing.T) {
	url := pgURL(t)
	var skew atomic.Int64
	skew.Store(int64(time.Hour))
	ctx, cancel := context.WithCancel(withHostClock(context.Background(), func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }))
	defer cancel()
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- runServe(ctx, []string{"--db", url, "--provider-db", filepath.Join(t.TempDir(), "provider.db"), "--listen", "127.0.0.1:0"}, stdout, stderr)
	}()
	// waitFor returns the clock warnings once there are n, or those there
	// are after d.
	waitFor := func(n int, d time.Duration) []map[string]any {
		t.Helper()
		deadline := time.Now().Add(d)
		for {
			ws := clockWarnings(t, stderr.String())
			if len(ws) >= n || time.Now().After(deadline) {
				return ws
			}
			select {
			case code := <-done:
				t.Fatalf("serve exited %d:\n%s%s", code, stdout, stderr)
			default:
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	wait := func(n int) []map[string]any {
		t.Helper()
		ws := waitFor(n, 15*time.Second)
		if len(ws) < n {
			t.Fatalf("%d clock warning(s) after 15 s; want %d:\n%s", len(ws), n, stderr)
		}
		return ws
	}
	check := func(w map[string]any, want time.Duration) {
		t.Helper()
		off, err := time.ParseDuration(w["offset"].(string))
		if err != nil || (off+want).Abs() > 500*time.Millisecond {
			t.Errorf("offset %v; want about %s: %v", w["offset"], -want, w)
		}
		db, err1 := time.Parse(time.RFC3339Nano, w["database_time"].(string))
		host, err2 := time.Parse(time.RFC3339Nano, w["host_time"].(string))
		if err1 != nil || err2 != nil || (host.Sub(db)-want).Abs() > 500*time.Millisecond {
			t.Errorf("database time %v, host time %v; want the host %s ahead", w["database_time"], w["host_time"], want)
		}
		for _, words := range []string{"ahead", "leases and graces"} {
			if !strings.Contains(w["msg"].(string)+" "+w["host_clock"].(string), words) {
				t.Errorf("the warning does not say %q: %v", words, w)
			}
		}
	}
	check(wait(1)[0], time.Hour)
	// 31 s more: the refresh is due at once, and the offset moved by more
	// than 1 s since the warning. A refresh whose round trip was slow
	// (a loaded machine) keeps the offset: then 31 s more again.
	var ws []map[string]any
	for i := 0; i < 5 && len(ws) < 2; i++ {
		skew.Add(int64(31 * time.Second))
		ws = waitFor(2, 3*time.Second)
	}
	if len(ws) < 2 {
		t.Fatalf("no second clock warning after the host moved on by 31 s five times:\n%s", stderr)
	}
	check(ws[1], time.Duration(skew.Load()))
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve exited %d:\n%s", code, stderr)
	}
	if n := len(clockWarnings(t, stderr.String())); n != 2 {
		t.Errorf("%d clock warnings; want 2:\n%s", n, stderr)
	}
	if !strings.Contains(stdout.String(), "listening on") {
		t.Errorf("stdout %q", stdout)
	}
}

// serve on a host in step with the database says nothing of its clock.
func TestServeInStepWithTheDatabaseSaysNothingOfTheClock(t *testing.T) {
	url := pgURL(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout := &cancelOnWrite{cancel: cancel}
	var stderr bytes.Buffer
	code := runServe(ctx, []string{"--db", url, "--provider-db", filepath.Join(t.TempDir(), "provider.db"), "--listen", "127.0.0.1:0"}, stdout, &stderr)
	if code != 0 || len(clockWarnings(t, stderr.String())) != 0 {
		t.Errorf("exit %d, log:\n%s", code, stderr.String())
	}
}

// ops check on PostgreSQL says how far this host's clock is from the
// database server's, and in words an operator acts on when it is more
// than 1 s; --json carries the offset. A SQLite ledger's clock is the
// host's: nothing is said.
func TestOpsCheckSaysHowFarThisHostsClockIsFromTheDatabases(t *testing.T) {
	url := pgURL(t)
	pdb := filepath.Join(t.TempDir(), "provider.db")
	if _, errText, code := cli(t, callArgs(url, "acme", "k", "send_notification", notifyArgs, "--provider-db", pdb, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup: exit %d %s", code, errText)
	}
	check := []string{"--db", url, "--provider-db", pdb, "--tenant", "acme", "--key", "k", "--operator", "oncall"}
	for _, c := range []struct {
		name string
		skew time.Duration
		want []string
		bad  []string
	}{
		{"an hour ahead", time.Hour,
			[]string{`this host's clock is 1h0m0s ahead of the database server's, more than 1 s: `, "leases and graces are judged by the database server's clock", "set this host's clock right"},
			nil},
		{"5 s behind", -5 * time.Second,
			[]string{`this host's clock is [45]\.?\d*s behind the database server's, more than 1 s: `}, nil},
		{"in step", 0,
			[]string{`this host's clock is (within 1ms of|\d+ms (ahead of|behind)) the database server's \(leases and graces are judged by the database server's clock\)$`},
			[]string{"more than 1 s", "set this host's clock"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := withHostClock(context.Background(), func() time.Time { return time.Now().Add(c.skew) })
			var out, errb bytes.Buffer
			if code := opsCheck(ctx, check, &out, &errb); code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			var line string
			for _, l := range lines {
				if strings.HasPrefix(l, "clock: ") {
					line = l
				}
			}
			if line == "" {
				t.Fatalf("no clock line:\n%s", out.String())
			}
			for _, w := range c.want {
				if !regexp.MustCompile(w).MatchString(line) {
					t.Errorf("the clock line lacks %q: %s", w, line)
				}
			}
			for _, b := range c.bad {
				if strings.Contains(line, b) {
					t.Errorf("the clock line says %q: %s", b, line)
				}
			}
			out.Reset()
			if code := opsCheck(ctx, append(check, "--json"), &out, &errb); code != 0 {
				t.Fatalf("--json: exit %d\n%s%s", code, out.String(), errb.String())
			}
			var got struct {
				Clock *struct {
					Offset   float64   `json:"offset_seconds"`
					Database time.Time `json:"database_time"`
					Host     time.Time `json:"host_time"`
					Over     bool      `json:"more_than_1s"`
				} `json:"clock"`
			}
			if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Clock == nil {
				t.Fatalf("--json: %v\n%s", err, out.String())
			}
			if d := got.Clock.Offset + c.skew.Seconds(); d < -0.5 || d > 0.5 || got.Clock.Over != (c.skew.Abs() > time.Second) ||
				(got.Clock.Host.Sub(got.Clock.Database)-c.skew).Abs() > 500*time.Millisecond {
				t.Errorf("--json clock %+v; want offset %g s", *got.Clock, -c.skew.Seconds())
			}
		})
	}
	// Cannot tell (the provider file is not there): the refusal is one
	// line, and a clock more than 1 s off adds its own.
	elsewhere := []string{"--db", url, "--provider-db", filepath.Join(t.TempDir(), "none.db"), "--tenant", "acme", "--key", "k", "--operator", "oncall"}
	for _, c := range []struct {
		skew  time.Duration
		lines int
	}{{0, 1}, {-time.Hour, 2}} {
		var out, errb bytes.Buffer
		code := opsCheck(withHostClock(context.Background(), func() time.Time { return time.Now().Add(c.skew) }), elsewhere, &out, &errb)
		lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
		if code != 2 || len(lines) != c.lines || !strings.Contains(lines[0], "cannot tell") ||
			(c.lines == 2 && !strings.HasPrefix(lines[1], "clock: this host's clock is 1h0m0s behind the database server's, more than 1 s")) {
			t.Errorf("cannot tell, host %s ahead: exit %d; want 2 and %d line(s):\n%s%s", c.skew, code, c.lines, out.String(), errb.String())
		}
	}
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("SQLite setup: exit %d", code)
	}
	for _, extra := range [][]string{nil, {"--json"}} {
		out, errText, code := cli(t, append([]string{"ops", "check", "--db", db, "--tenant", "acme", "--key", "k"}, extra...)...)
		if code != 0 || strings.Contains(out+errText, "clock") {
			t.Errorf("SQLite %v: exit %d; want no word of the clock:\n%s%s", extra, code, out, errText)
		}
	}
}
