package reconcile_test

// Many hosts on one PostgreSQL: worker processes with their own worker ids
// call against one ledger, some are killed with SIGKILL, and the server
// itself is stopped the way a power cut would stop it (pg_ctl stop -m
// immediate) in the middle of the load, then started again. Nothing
// acknowledged may be lost, no effect doubled, no interrupted external call
// guessed, and every next attempt must get the class the contract says.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/reexec"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// Environment of the crash test: a PostgreSQL server of its own (the test
// stops it), the script that controls it and its directory.
const (
	crashURLEnv = "RETRYSAFE_TEST_POSTGRES_CRASH"
	crashCtlEnv = "RETRYSAFE_TEST_POSTGRES_CTL"
	crashDirEnv = "RETRYSAFE_TEST_POSTGRES_CRASH_DIR"
)

type hostSpec struct {
	Ledger, ProviderDB, Worker string
	Requests                   []model.Request
	Pause                      time.Duration
	StartAt                    int64
}

// hostLine is one call's acknowledgment (or the error that stood in for one).
type hostLine struct {
	Key    string           `json:"key"`
	Result reconcile.Result `json:"result"`
	Err    string           `json:"err,omitempty"`
}

func runHost(specJSON string) int {
	var spec hostSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "host spec:", err)
		return 3
	}
	st, err := postgres.Open(spec.Ledger, store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "host open:", err)
		return 3
	}
	defer st.Close()
	sb, err := sandbox.Open(spec.ProviderDB)
	if err != nil {
		fmt.Fprintln(os.Stderr, "host sandbox:", err)
		return 3
	}
	defer sb.Close()
	svc := reconcile.New(st, config.Default().Tools, sb.Providers())
	time.Sleep(time.Until(time.UnixMilli(spec.StartAt)))
	out := bufio.NewWriter(os.Stdout)
	for _, r := range spec.Requests {
		r.WorkerID = spec.Worker
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		res, err := svc.Call(ctx, r, reconcile.CallOptions{Provider: "sandbox"})
		cancel()
		line := hostLine{Key: r.Key, Result: res}
		if err != nil {
			line.Err = err.Error()
		}
		line.Result.Op = nil
		b, _ := json.Marshal(line)
		out.Write(append(b, '\n'))
		out.Flush() // acknowledged the moment the line is out
		time.Sleep(spec.Pause)
	}
	return 0
}

type host struct {
	cmd   *exec.Cmd
	errb  bytes.Buffer
	mu    sync.Mutex
	lines []hostLine
	done  chan struct{}
}

func startHost(t *testing.T, spec hostSpec) *host {
	t.Helper()
	h := &host{cmd: reexec.Command(t, hostWorker, spec), done: make(chan struct{})}
	h.cmd.Stderr = &h.errb
	pipe, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(h.done)
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var l hostLine
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				h.mu.Lock()
				h.lines = append(h.lines, l)
				h.mu.Unlock()
			}
		}
		h.cmd.Wait()
	}()
	return h
}

func pgctl(t *testing.T, verb string) {
	t.Helper()
	out, err := exec.Command(os.Getenv(crashCtlEnv), verb, os.Getenv(crashDirEnv)).CombinedOutput()
	if err != nil {
		t.Fatalf("postgres.sh %s: %v\n%s", verb, err, out)
	}
}

func TestManyHostsOnPostgreSQLSurviveKilledWorkersAndAServerCrash(t *testing.T) {
	base := os.Getenv(crashURLEnv)
	if base == "" {
		t.Skip(crashURLEnv + " is not set: this test needs a PostgreSQL server of its own to stop (.ci/run starts one)")
	}
	if os.Getenv(crashCtlEnv) == "" || os.Getenv(crashDirEnv) == "" {
		t.Fatalf("%s is set but %s and %s are not: the test cannot stop and start the server", crashURLEnv, crashCtlEnv, crashDirEnv)
	}
	t.Setenv(pgtest.Env, base)
	url := pgtest.URL(t) // a fresh schema, dropped at the end (the server is up again by then)
	st, err := postgres.Open(url, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	pdb := t.TempDir() + "/provider.db"
	sb, err := sandbox.Open(pdb)
	if err != nil {
		t.Fatal(err)
	}
	sb.Close()

	// Six hosts; each has keys of its own and all share some, local and
	// external tools mixed, in its own order.
	const hosts = 6
	request := func(i int, key string) model.Request {
		if i%2 == 0 {
			return task("acme", key, "subject "+key)
		}
		return notify("acme", key, key+"@example.com")
	}
	all := map[string]model.Request{}
	var specs []hostSpec
	start := time.Now().Add(2 * time.Second)
	for h := 0; h < hosts; h++ {
		var reqs []model.Request
		for j := 0; j < 14; j++ {
			k := fmt.Sprintf("h%d-%02d", h, j)
			reqs = append(reqs, request(j, k))
		}
		for j := 0; j < 6; j++ {
			reqs = append(reqs, request(j, fmt.Sprintf("shared-%02d", j)))
		}
		rand.Shuffle(len(reqs), func(a, b int) { reqs[a], reqs[b] = reqs[b], reqs[a] })
		for _, r := range reqs {
			all[r.Key] = r
		}
		specs = append(specs, hostSpec{Ledger: url, ProviderDB: pdb, Worker: fmt.Sprintf("host-%d", h),
			Requests: reqs, Pause: 120 * time.Millisecond, StartAt: start.UnixMilli()})
	}
	var hs []*host
	for _, s := range specs {
		hs = append(hs, startHost(t, s))
	}
	// Mid-load: two hosts die, then the server.
	time.Sleep(time.Until(start) + 700*time.Millisecond)
	for _, h := range hs[:2] {
		h.cmd.Process.Signal(syscall.SIGKILL)
	}
	time.Sleep(500 * time.Millisecond)
	pgctl(t, "crash")
	crashedAt := time.Now()
	time.Sleep(1500 * time.Millisecond)
	pgctl(t, "start")
	t.Logf("server down for %v", time.Since(crashedAt).Round(time.Millisecond))
	for i, h := range hs {
		select {
		case <-h.done:
		case <-time.After(90 * time.Second):
			h.cmd.Process.Kill()
			t.Fatalf("host %d never finished: %s", i, h.errb.String())
		}
		if i >= 2 && h.cmd.ProcessState.ExitCode() != 0 {
			t.Errorf("host %d exit %d: %s", i, h.cmd.ProcessState.ExitCode(), h.errb.String())
		}
	}

	ctx := context.Background()
	st, err = postgres.Open(url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sb, err = sandbox.Open(pdb)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()

	// Every acknowledged operation is there, with what was acknowledged.
	acked, failedDuringOutage := 0, 0
	for i, h := range hs {
		for _, l := range h.lines {
			if l.Err != "" || l.Result.Class == model.ClassInternal {
				failedDuringOutage++
				// An error is "retry the same key later" — or, for an
				// external call whose answer could not be recorded,
				// "unknown": never done, never a conflict.
				c := l.Result.Class
				external := all[l.Key].Tool == "send_notification"
				if c != model.ClassInternal && c != "" && !(external && c == model.ClassUnknown) {
					t.Errorf("host %d, %s: an error with class %s", i, l.Key, c)
				}
				continue
			}
			if l.Result.Class != model.ClassDone {
				// in_progress elsewhere is a fine answer to a shared key
				if l.Result.Class != model.ClassInProgress {
					t.Errorf("host %d, %s: class %s (%s)", i, l.Key, l.Result.Class, l.Result.Message)
				}
				continue
			}
			acked++
			op, err := st.Get(ctx, "acme", l.Key)
			if err != nil {
				t.Errorf("host %d acknowledged %s, and the ledger lost it: %v", i, l.Key, err)
				continue
			}
			var stored model.Receipt
			if op.State != model.StateApplied || json.Unmarshal(op.Receipt, &stored) != nil ||
				!bytes.Equal(stored.Result, l.Result.Receipt.Result) {
				t.Errorf("%s: acknowledged %s, stored %s %s", l.Key, l.Result.Receipt.Result, op.State, op.Receipt)
			}
		}
	}
	t.Logf("%d calls acknowledged, %d failed while the server was down or killed", acked, failedDuringOutage)
	if acked == 0 || failedDuringOutage == 0 {
		t.Errorf("%d acknowledged, %d failed: the crash did not land mid-load", acked, failedDuringOutage)
	}

	lid, err := st.LedgerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkEffects := func(when string) {
		t.Helper()
		if problems, err := st.Audit(ctx); err != nil || len(problems) > 0 {
			t.Errorf("%s: audit %v %v", when, problems, err)
		}
		for key, r := range all {
			if r.Tool != "send_notification" {
				continue
			}
			n, err := sb.Deliveries(ctx, reconcile.DownstreamKey(lid, "acme", key))
			if err != nil {
				t.Fatal(err)
			}
			op, gerr := st.Get(ctx, "acme", key)
			switch {
			case n > 1:
				t.Errorf("%s: %s delivered %d times", when, key, n)
			case gerr == nil && op.State == model.StateApplied && n != 1:
				t.Errorf("%s: %s applied with %d deliveries", when, key, n)
			}
		}
	}
	checkEffects("after the crash")

	// Interrupted calls are in_progress or unknown — never guessed.
	ops, err := st.List(ctx, store.ListQuery{Tenant: "acme", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		ok := op.State == model.StateApplied ||
			(op.Tool == "send_notification" && (op.State == model.StateInProgress || op.State == model.StateUnknown))
		if !ok {
			t.Errorf("%s (%s) is %s after the crash", op.Key, op.Tool, op.State)
		}
	}

	// The next attempt of every key, from a fresh process's service.
	svc := reconcile.New(st, config.Default().Tools, sb.Providers())
	for key, r := range all {
		before, gerr := st.Get(ctx, "acme", key)
		res, err := svc.Call(ctx, r, reconcile.CallOptions{Provider: "sandbox"})
		if err != nil {
			t.Errorf("%s: next attempt failed: %v", key, err)
			continue
		}
		var want []model.Class
		switch {
		case gerr != nil: // never committed: the key is free
			want = []model.Class{model.ClassDone}
		case before.State == model.StateApplied:
			want = []model.Class{model.ClassDone}
		case before.State == model.StateInProgress && before.LeaseUntil.After(time.Now()):
			want = []model.Class{model.ClassInProgress}
		case before.State == model.StateInProgress, before.State == model.StateUnknown:
			want = []model.Class{model.ClassUnknown}
		}
		okClass := false
		for _, c := range want {
			okClass = okClass || res.Class == c
		}
		if !okClass {
			state := "absent"
			if before != nil {
				state = string(before.State)
			}
			t.Errorf("%s (%s): next attempt %s (%s); want %v", key, state, res.Class, res.Message, want)
		}
		if gerr == nil && before.State == model.StateApplied && res.Outcome != model.OutcomeReplayed {
			t.Errorf("%s: next attempt %s; an applied operation replays", key, res.Outcome)
		}
	}
	checkEffects("after the next attempts")
	var states []string
	c, _ := st.Counts(ctx, "acme")
	for s, n := range c.ByState {
		states = append(states, fmt.Sprintf("%s %d", s, n))
	}
	t.Logf("ledger: %s", strings.Join(states, ", "))
}
