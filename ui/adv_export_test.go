package ui

import (
	"testing"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
)

// A CSV export is read by people too (cat, less, a spreadsheet): stored
// text reaches it inert, as the JSON Lines export's does — no escape
// sequence that retitles or clears the terminal that shows the file, no
// tab or carriage return that a spreadsheet takes as the start of a
// formula (OWASP's list: = + - @ tab CR).
func TestAdvCSVExportCellsAreInert(t *testing.T) {
	row := exportRow(model.Operation{Tenant: "acme", Key: "k", Tool: "create_support_task",
		Summary: hostile, ProviderRef: "\tsbx\x1b[2J", DownstreamKey: "rs-1", Provider: "sandbox"})
	for i, cell := range row {
		if !textsafe.Clean(cell) {
			t.Errorf("cell %d (%s) is not inert: %q", i, exportHeader()[i], cell)
		}
	}
	for _, s := range []string{"\t=1+1", "\r=1+1"} {
		row := exportRow(model.Operation{Tenant: "acme", Key: "k", Summary: s})
		if got := row[len(row)-1]; got == "" || got[0] == '\t' || got[0] == '\r' || got[0] == '=' {
			t.Errorf("summary %q exported as %q", s, got)
		}
	}
}
