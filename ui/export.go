package ui

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// Export: e writes the operations of the current view (tab, search,
// contradicted filter, tenant) to a CSV file, E to JSON Lines, in the
// export directory, page by page on the keyset (a million rows never sit in
// memory), and the banner says where it went.

// exportMsg says what an export wrote.
type exportMsg struct {
	Path string
	Rows int
	Err  error
}

const exportPage = 5000

func exportView(ctx context.Context, st store.Ledger, q store.ListQuery, dir, format string, now time.Time) tea.Cmd {
	return func() tea.Msg {
		name := fmt.Sprintf("retrysafe-%s-%s.%s", or(string(q.State), "all"), now.UTC().Format("20060102-150405"), format)
		path := filepath.Join(dir, name)
		// O_EXCL: an export never overwrites a file.
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return exportMsg{Path: path, Err: err}
		}
		n, werr := writeExport(ctx, st, q, f, format)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return exportMsg{Path: path, Err: werr}
		}
		abs, _ := filepath.Abs(path)
		return exportMsg{Path: abs, Rows: n}
	}
}

// exportHeader is the CSV's first row.
func exportHeader() []string {
	return []string{"id", "tenant", "key", "tool", "state", "contradicted", "version", "attempts",
		"created_at", "updated_at", "lease_until", "provider", "downstream_key", "provider_ref", "summary"}
}

func writeExport(ctx context.Context, st store.Ledger, q store.ListQuery, f *os.File, format string) (int, error) {
	w := bufio.NewWriter(f)
	var cw *csv.Writer
	if format == "csv" {
		cw = csv.NewWriter(w)
		if err := cw.Write(exportHeader()); err != nil {
			return 0, err
		}
	}
	n := 0
	q.BeforeID, q.AfterID, q.Limit = 0, 0, exportPage
	for {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		rows, err := st.List(ctx, q)
		cancel()
		if err != nil {
			return n, err
		}
		for _, op := range rows {
			if cw != nil {
				err = cw.Write(exportRow(op))
			} else {
				// Escaped as the pager file is: a person reads the file.
				var b []byte
				if b, err = json.Marshal(op); err == nil {
					_, err = w.Write(append(textsafe.JSON(b), '\n'))
				}
			}
			if err != nil {
				return n, err
			}
			n++
		}
		if len(rows) < exportPage {
			break
		}
		// The last row as read: a row that moved since (a decision, a
		// sweep) or was compacted still bounds the next page where it was.
		q.BeforeRow = &rows[len(rows)-1]
	}
	if cw != nil {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return n, err
		}
	}
	return n, w.Flush()
}

func exportRow(op model.Operation) []string {
	t := func(x time.Time) string {
		if x.IsZero() {
			return ""
		}
		return x.UTC().Format(time.RFC3339Nano)
	}
	// Stored text arrives inert (textsafe.Visible: a person cats the
	// file; a tab or carriage return, which a spreadsheet takes as the
	// start of a formula, is written \t, \r). A spreadsheet runs a cell
	// that starts with = + - @ as a formula: stored text is quoted with a
	// leading apostrophe there.
	safe := func(s string) string {
		s = textsafe.Visible(s)
		if s != "" && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@') {
			return "'" + s
		}
		return s
	}
	return []string{strconv.FormatInt(op.ID, 10), safe(op.Tenant), safe(op.Key), safe(op.Tool), string(op.State),
		strconv.FormatBool(op.Contradicted), strconv.FormatInt(op.Version, 10), strconv.Itoa(op.AttemptCount),
		t(op.CreatedAt), t(op.UpdatedAt), t(op.LeaseUntil), safe(op.Provider), safe(op.DownstreamKey), safe(op.ProviderRef), safe(op.Summary)}
}
