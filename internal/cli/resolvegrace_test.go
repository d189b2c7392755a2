package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// unknownByTimeout makes tenant acme's key unknown: its request timed out
// and the provider had nothing (the delayed request never landed).
func unknownByTimeout(t *testing.T, db, key string) {
	t.Helper()
	if _, errText, code := cli(t, callArgs(db, "acme", key, "send_notification", notifyArgs, "--fault", "delay=2s", "--timeout", "300ms", "--lease", "1s")...); code != 5 {
		t.Fatalf("setup call %s: exit %d; want 5: %s", key, code, errText)
	}
}

// Within the grace after an operation's latest request the provider may
// still apply it: `ops resolve --as not-applied` and `ops supersede` are
// refused — naming the key, when it was sent and when to decide — and
// nothing is written, not even a lookup; --within-grace (in --help) is the
// explicit override.
func TestOneKeyNotAppliedOrNewKeyWithinTheGraceIsRefused(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "1h")
	for _, tc := range []struct {
		name string
		args []string // after --db DB --tenant acme --key k
	}{
		{"not applied", []string{"--reason", "provider console shows nothing", "--evidence", "INC-7"}},
		{"new key", []string{"--reason", "send it again", "--new-key", "k2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := newLedgerFile(t)
			unknownByTimeout(t, db, "k")
			cmd := []string{"ops", "resolve", "--as", "not-applied"}
			if tc.name == "new key" {
				cmd = []string{"ops", "supersede"}
			}
			args := append(append(append([]string{}, cmd...), "--db", db, "--tenant", "acme", "--key", "k"), tc.args...)
			out, errText, code := cli(t, args...)
			if code != 2 {
				t.Fatalf("%s within the grace: exit %d, %q %q; want 2", tc.name, code, out, errText)
			}
			for _, want := range []string{"acme/k", "sent at ", "decide after ", "(UTC)", "nothing was written", "--within-grace"} {
				if !strings.Contains(errText, want) {
					t.Errorf("refusal %q does not say %q", errText, want)
				}
			}
			if strings.Contains(errText, "provider check") {
				t.Errorf("the provider was asked before the refusal: %q", errText)
			}
			show, _, _ := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "k", "--json")
			var det struct {
				Operation struct {
					State   string           `json:"state"`
					Version int64            `json:"version"`
					Finding *json.RawMessage `json:"finding"`
				} `json:"operation"`
				Decisions []json.RawMessage `json:"decisions"`
			}
			if err := json.Unmarshal([]byte(show), &det); err != nil {
				t.Fatalf("ops show --json: %v\n%s", err, show)
			}
			if det.Operation.State != "unknown" || len(det.Decisions) != 0 || det.Operation.Finding != nil {
				t.Fatalf("after the refusal: %s, %d decisions, finding %s; want unknown, nothing written", det.Operation.State, len(det.Decisions), show)
			}
			out, errText, code = cli(t, append(args, "--within-grace")...)
			if code != 0 {
				t.Fatalf("%s --within-grace: exit %d, %q %q; want written", tc.name, code, out, errText)
			}
		})
	}
	for _, cmd := range [][]string{{"ops", "resolve"}, {"ops", "supersede"}} {
		out, errText, _ := cli(t, append(cmd, "--help")...)
		if help := out + errText; !strings.Contains(help, "-within-grace") {
			t.Errorf("%s --help does not document --within-grace:\n%s", strings.Join(cmd, " "), help)
		}
	}
}

// A bulk "not applied" skips the rows within the grace, each with its
// reason, and writes the others; --dry-run says which are within it.
func TestBulkNotAppliedSkipsTheRowsWithinTheGrace(t *testing.T) {
	const grace = 3 * time.Second
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", grace.String())
	db := newLedgerFile(t)
	unknownByTimeout(t, db, "old")
	// The claim recorded that the provider may apply it until its lease
	// end (1s) plus the grace: "old" is past that, "new" is not.
	time.Sleep(grace + time.Second + 300*time.Millisecond)
	unknownByTimeout(t, db, "new")
	base := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--state", "unknown", "--as", "not-applied", "--reason", "INC-7", "--evidence", "provider incident INC-7"}
	out, errText, code := cli(t, append(base, "--dry-run")...)
	if code != 0 {
		t.Fatalf("--dry-run: exit %d %q %q", code, out, errText)
	}
	var newLine, oldLine string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(l, " new "):
			newLine = l
		case strings.Contains(l, " old "):
			oldLine = l
		}
	}
	if !strings.Contains(newLine, "within the grace") || !strings.Contains(newLine, "decide after") || strings.Contains(oldLine, "grace") ||
		!strings.Contains(out, "dry run: mark not applied 1 operation") {
		t.Fatalf("--dry-run does not show which row is within the grace:\n%s", out)
	}
	out, errText, code = cli(t, append(base, "--yes")...)
	if code != 2 {
		t.Fatalf("--yes: exit %d %q %q; want 2 (one skipped)", code, out, errText)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 3 {
			rows[f[1]] = l
		}
	}
	if !strings.Contains(rows["new"], "skipped") || !strings.Contains(rows["new"], "decide after") || !strings.Contains(rows["old"], "written") {
		t.Fatalf("--yes: want new skipped (within the grace) and old written:\n%s\n%s", out, errText)
	}
	if !strings.Contains(errText, "within the grace") {
		t.Errorf("--yes summary does not count the skipped row: %q", errText)
	}
}

// After `ops check` found nothing, `ops resolve --as not-applied` without
// evidence or --check is refused as before — it does not decide on a
// finding the command did not show — but says so: the recorded "has
// nothing", and --check, which asks again and decides on it.
func TestNotAppliedWithoutEvidenceNamesTheRecordedHasNothingAndCheck(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // a lookup after the grace
	db := newLedgerFile(t)
	unknownByTimeout(t, db, "k")
	if out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k"); code != 0 || !strings.Contains(out+errText, "has nothing") {
		t.Fatalf("ops check: exit %d %q %q; want has nothing", code, out, errText)
	}
	_, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "k", "--as", "not-applied", "--reason", "nothing came")
	if code != 2 || !strings.Contains(errText, "has nothing") || !strings.Contains(errText, "--check") {
		t.Fatalf("not applied without evidence after a has-nothing check: exit %d %q; want 2 naming the finding and --check", code, errText)
	}
	out, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "k", "--as", "not-applied", "--reason", "nothing came", "--check")
	if code != 0 {
		t.Fatalf("with --check: exit %d %q %q", code, out, errText)
	}
}
