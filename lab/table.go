package lab

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the lab's table: one line per scenario, then what the
// next attempts returned and, for any row that failed, every check that did
// not hold.
func WriteTable(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// The verdict columns come first and the long ledger summary last, so
	// a narrow terminal wraps only what is least needed at a glance.
	fmt.Fprintln(tw, "SCENARIO\tEFFECTS\tEXPECTED\tOK\tFIRST CALL\tNEXT ATTEMPT\tLEDGER SAYS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d → %d\t%s\t%s\t%s\t%s\t%s\n", r.Scenario, r.Before, r.After, r.Expected,
			okText(r.OK), r.FirstCall, r.NextAttempt, r.Ledger)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tFIRST CALL RETURNED\tNEXT ATTEMPT RETURNED")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Scenario, r.FirstResult, r.NextResult)
	}
	tw.Flush()
	for _, r := range rows {
		if !r.OK {
			fmt.Fprintf(w, "\n%s FAILED:\n  %s\n", r.Scenario, strings.Join(r.Failures, "\n  "))
		}
	}
}

func okText(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAIL"
}
