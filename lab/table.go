package lab

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

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
