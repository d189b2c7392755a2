package ui

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
)

// e and E write the current view — here the unknown tab of one tenant —
// to a new file, and say where.
func TestExportWritesTheCurrentViewAndSaysWhere(t *testing.T) {
	l := fixture(t)
	dir := t.TempDir()
	cfg := config(l)
	cfg.ExportDir, cfg.Tenant = dir, "acme"
	h := open(t, cfg, 120, 40)
	h.keys("e")
	h.contains("Exported 2 operations to", filepath.Base(dir)+"/retrysafe-unknown-")
	csvs, _ := filepath.Glob(filepath.Join(dir, "retrysafe-unknown-*.csv"))
	if len(csvs) != 1 {
		t.Fatalf("csv files: %v", csvs)
	}
	f, err := os.Open(csvs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 3 || recs[0][2] != "key" || recs[1][2] != "notify-1" || recs[2][2] != "notify-2" || recs[1][4] != "unknown" {
		t.Fatalf("csv: %v %v", err, recs)
	}
	h.keys("8", "E")
	jsonl, _ := filepath.Glob(filepath.Join(dir, "retrysafe-all-*.jsonl"))
	if len(jsonl) != 1 {
		t.Fatalf("jsonl files: %v", jsonl)
	}
	jf, err := os.Open(jsonl[0])
	if err != nil {
		t.Fatal(err)
	}
	defer jf.Close()
	n := 0
	for sc := bufio.NewScanner(jf); sc.Scan(); n++ {
		var op model.Operation
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil || op.Tenant != "acme" {
			t.Fatalf("line %d: %v %q", n, err, sc.Text())
		}
	}
	if n != 5 { // acme's operations in the fixture
		t.Fatalf("%d lines", n)
	}
	// A second export in the same second never overwrites the first.
	h.keys("E")
	h.contains("Export failed")
	if !strings.Contains(h.view(), "file exists") {
		t.Fatalf("want a clear refusal:\n%s", h.view())
	}
}

// A cell a spreadsheet would run as a formula is defused.
func TestExportDefusesFormulaCells(t *testing.T) {
	row := exportRow(model.Operation{Tenant: "acme", Key: "k", Summary: "=HYPERLINK(\"x\")"})
	if got := row[len(row)-1]; got != "'=HYPERLINK(\"x\")" {
		t.Fatalf("summary cell %q", got)
	}
}

// o writes the whole operation as JSON for the pager; control characters
// in stored text arrive escaped, never raw at the terminal.
func TestPagerFileHoldsTheWholeOperation(t *testing.T) {
	l := fixture(t)
	h := open(t, config(l), 120, 40)
	h.keys("enter")
	msg := writePagerFile(h.m.detail.d)().(pagerFileMsg)
	if msg.Err != nil {
		t.Fatal(msg.Err)
	}
	defer os.Remove(msg.Path)
	b, err := os.ReadFile(msg.Path)
	if err != nil {
		t.Fatal(err)
	}
	var d model.Detail
	if err := json.Unmarshal(b, &d); err != nil || d.Operation.Key != "notify-1" || len(d.Attempts) == 0 {
		t.Fatalf("pager file: %v %s", err, b)
	}
	for _, c := range string(b) {
		if c < 0x20 && c != '\n' {
			t.Fatalf("a raw control character %q in the pager file", c)
		}
	}
}

// y copies the key and Y a ready command, as OSC 52 to the terminal.
func TestCopyKeyAndCommandWithOSC52(t *testing.T) {
	l := fixture(t)
	var term strings.Builder
	cfg := config(l)
	cfg.Clipboard = &term
	h := open(t, cfg, 120, 40)
	h.keys("y")
	if want := osc52("notify-1"); term.String() != want {
		t.Fatalf("wrote %q, want %q", term.String(), want)
	}
	h.contains("Copied the key acme/notify-1 to the clipboard (OSC 52).")
	term.Reset()
	h.keys("Y")
	want := "retrysafe ops check --db " + l.st.Path() + " --tenant acme --key notify-1"
	if term.String() != osc52(want) {
		t.Fatalf("wrote %q, want the OSC 52 of %q", term.String(), want)
	}
	cfg.Clipboard = nil
	off := open(t, cfg, 120, 40)
	off.keys("y")
	off.contains("Cannot copy the key acme/notify-1: no terminal to copy to")
}

// y in the detail opens a copy menu: the key, ready commands, and every
// attempt's trace id whole (never cut to fit a column).
func TestCopyMenuInTheDetailCopiesWholeTraceIDs(t *testing.T) {
	l := fixture(t)
	long := "notify-with-a-long-key-0123456789-abcdefghij"
	l.unknown(t, "acme", long, "oncall@acme.example")
	var term strings.Builder
	cfg := config(l)
	cfg.Clipboard = &term
	h := open(t, cfg, 120, 40)
	if h.selected() != "acme/"+long {
		t.Fatalf("cursor on %q", h.selected())
	}
	h.keys("enter", "y")
	h.contains("Copy to the clipboard", "1 operation key", "2 show it", "3 check the provider", "4 trace id, attempt 1",
		"trace-"+long, "retrysafe ops check --db")
	if term.Len() != 0 {
		t.Fatalf("opening the menu copied %q", term.String())
	}
	h.keys("4")
	if want := osc52("trace-" + long); term.String() != want {
		t.Fatalf("wrote %q, want the whole trace id %q", term.String(), want)
	}
	h.contains("Copied the trace id trace-" + long)
	h.lacks("Copy to the clipboard")
	term.Reset()
	h.keys("y", "j", "enter") // the second item: the show command
	if want := "retrysafe ops show --db " + l.st.Path() + " --tenant acme --key " + long; term.String() != osc52(want) {
		t.Fatalf("wrote %q, want the OSC 52 of %q", term.String(), want)
	}
	term.Reset()
	h.keys("y", "esc")
	h.lacks("Copy to the clipboard")
	h.contains("Operation") // back in the detail
	if term.Len() != 0 {
		t.Fatalf("esc copied %q", term.String())
	}
}

// On a small terminal (40×12) the copy menu keeps the item under the cursor
// on screen, whole: what enter copies is what is shown. It used to draw
// the first items only, so the cursor went below the screen's edge and
// enter copied text nobody could see.
func TestCopyMenuOnASmallTerminalShowsTheChosenItem(t *testing.T) {
	l := fixture(t)
	long := "notify-with-a-long-key-0123456789-abcdefghij"
	l.unknown(t, "acme", long, "oncall@acme.example")
	var term strings.Builder
	cfg := config(l)
	cfg.Clipboard = &term
	h := open(t, cfg, 40, 12)
	h.keys("enter", "y")
	h.contains("1 operation key")
	items := len(h.m.copyMenu.items)
	if items < 4 {
		t.Fatalf("%d items", items)
	}
	for i := 1; i < items; i++ {
		h.keys("j")
		it := h.m.copyMenu.items[i]
		v := h.view()
		if lines := strings.Count(v, "\n") + 1; lines > 12 {
			t.Fatalf("the view is %d lines on a 12-line terminal:\n%s", lines, v)
		}
		if !strings.Contains(v, fmt.Sprintf("%d %s", i+1, it.Label)) {
			t.Fatalf("the cursor is on item %d (%s), which is not on the screen:\n%s", i+1, it.Label, v)
		}
		// Its text, wrapped: every word of it on the screen — or, when it
		// alone is taller than the screen, the screen says it is cut.
		if strings.Contains(v, "lines (taller screen)") {
			continue
		}
		flat := strings.NewReplacer(" ", "", "\n", "", "│", "").Replace
		if !strings.Contains(flat(v), flat(it.Text)) {
			t.Fatalf("item %d's text %q is not all on the screen:\n%s", i+1, it.Text, v)
		}
	}
	h.keys("enter")
	if want := osc52(h.m.copyMenu.items[items-1].Text); term.String() != want {
		t.Errorf("enter on the last item wrote %q, want %q", term.String(), want)
	}
}

// The copied commands quote every key a shell would read otherwise,
// including zsh's: "=rm" would become the path of rm, "^x" a glob.
func TestShellQuoteQuotesWhatShellsExpand(t *testing.T) {
	for in, want := range map[string]string{
		"order-1": "order-1", "a b": "'a b'", "it's": `'it'\''s'`, "$(rm -rf ~)": "'$(rm -rf ~)'",
		"=rm": "'=rm'", "^x": "'^x'", "": "''",
	} {
		if got := textsafe.ShellWord(in); got != want {
			t.Errorf("textsafe.ShellWord(%q) = %s, want %s", in, got, want)
		}
	}
}

// The commands the console copies carry the --provider-db and --config it
// was opened with (Config.CommandFlags): pasted without them, an ops check
// asks no provider, or the wrong file, and records that as a finding.
func TestCopiedCommandsCarryTheConsolesProviderFileAndConfig(t *testing.T) {
	l := fixture(t)
	var term strings.Builder
	cfg := config(l)
	cfg.Clipboard = &term
	cfg.CommandFlags = " --provider-db '/srv/a b/p.db' --config /etc/rs/tools.toml"
	h := open(t, cfg, 120, 40)
	h.keys("Y")
	want := "retrysafe ops check --db " + l.st.Path() + " --provider-db '/srv/a b/p.db' --config /etc/rs/tools.toml --tenant acme --key notify-1"
	if term.String() != osc52(want) {
		t.Fatalf("Y wrote %q, want the OSC 52 of %q", term.String(), want)
	}
	term.Reset()
	h.keys("enter", "y", "3")
	if term.String() != osc52(want) {
		t.Fatalf("the copy menu's check wrote %q, want the OSC 52 of %q", term.String(), want)
	}
}
