package lab

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/retrysafe/retrysafe/internal/textsafe"
)

// WriteTable prints the lab's table: one line per scenario, then what the
// next attempts returned and, for any row that failed, every check that did
// not hold. Every text cell passes through the one sanitizer
// (textsafe.Visible): results and failures quote what workers printed and
// what ledgers and providers said.
func WriteTable(w io.Writer, rows []Row) {
	v := textsafe.Visible
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// The verdict columns come first and the long ledger summary last, so
	// a narrow terminal wraps only what is least needed at a glance.
	fmt.Fprintln(tw, "SCENARIO\tEFFECTS\tEXPECTED\tOK\tFIRST CALL\tNEXT ATTEMPT\tLEDGER SAYS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d → %d\t%s\t%s\t%s\t%s\t%s\n", v(r.Scenario), r.Before, r.After, v(r.Expected),
			okText(r.OK), v(r.FirstCall), v(r.NextAttempt), v(r.Ledger))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tFIRST CALL RETURNED\tNEXT ATTEMPT RETURNED")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v(r.Scenario), v(r.FirstResult), v(r.NextResult))
	}
	tw.Flush()
	for _, r := range rows {
		if !r.OK {
			failures := make([]string, len(r.Failures))
			for i, f := range r.Failures {
				failures[i] = v(f)
			}
			fmt.Fprintf(w, "\n%s FAILED:\n  %s\n", v(r.Scenario), strings.Join(failures, "\n  "))
		}
	}
}

func okText(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAIL"
}

// WriteTableWidth is WriteTable for a terminal width columns wide (0: not
// a terminal, any width). Where the table's lines would wrap — they run to
// ~200 columns, a long result further — it prints one block per scenario,
// its texts wrapped to the width, none cut.
func WriteTableWidth(w io.Writer, rows []Row, width int) {
	var wide strings.Builder
	WriteTable(&wide, rows)
	if width <= 0 || fits(wide.String(), width) {
		io.WriteString(w, wide.String())
		return
	}
	v := textsafe.Visible
	const indent = "                " // under the labels
	for i, r := range rows {
		if i > 0 {
			fmt.Fprintln(w)
		}
		writeWrapped(w, v(r.Scenario)+"  "+okText(r.OK)+"  ", "  ",
			fmt.Sprintf("effects %d → %d, expected %s", r.Before, r.After, v(r.Expected)), width)
		for _, f := range []struct{ label, text string }{
			{"first call", v(r.FirstCall)}, {"", "→ " + v(r.FirstResult)},
			{"next attempt", v(r.NextAttempt)}, {"", "→ " + v(r.NextResult)},
			{"ledger says", v(r.Ledger)},
		} {
			writeWrapped(w, fmt.Sprintf("  %-14s", f.label), indent, f.text, width)
		}
		for _, f := range r.Failures {
			writeWrapped(w, "  FAILED        ", indent, v(f), width)
		}
	}
}

// fits reports whether every line of s is at most width columns.
func fits(s string, width int) bool {
	for _, line := range strings.Split(s, "\n") {
		if utf8.RuneCountInString(line) > width {
			return false
		}
	}
	return true
}

// writeWrapped writes text word-wrapped to width: the first line after
// first, the others after indent; a word longer than a whole line is
// split.
func writeWrapped(w io.Writer, first, indent, text string, width int) {
	prefix := first
	line := []rune(prefix)
	room := func() int { return width - len(line) }
	flush := func() {
		fmt.Fprintln(w, strings.TrimRight(string(line), " "))
		prefix = indent
		line = []rune(prefix)
	}
	for _, word := range strings.Fields(text) {
		wr := []rune(word)
		if len(line) > len([]rune(prefix)) {
			if len(wr)+1 <= room() {
				line = append(line, ' ')
				line = append(line, wr...)
				continue
			}
			flush()
		} else if prefix != indent && len(wr) > room() && len(wr) <= width-len([]rune(indent)) {
			// The first line's prefix leaves no room for a word the
			// next lines have room for: the prefix alone, not the word
			// cut in two.
			flush()
		}
		for len(wr) > room() && room() > 0 {
			n := room()
			line = append(line, wr[:n]...)
			wr = wr[n:]
			flush()
		}
		line = append(line, wr...)
	}
	flush()
}
