package cli

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"
)

// ops list's largest --limit reads what it says: with more operations
// than that, the page is full, "truncated" and names the next page — not
// the default 100 rows and "truncated": false, as when the list asked the
// store for one row more than it took. With fewer, every one and no next
// page.
func TestOpsListsLargestLimitIsAFullPage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "big.db")
	if _, errText, code := cli(t, "gen", "--db", db, "--ops", "10001", "--tenants", "1", "--quiet"); code != 0 {
		t.Fatalf("gen: exit %d %s", code, errText)
	}
	for _, c := range []struct {
		limit, rows int
		truncated   bool
	}{
		{10000, 10000, true},
		{9999, 9999, true},
		{5000, 5000, true},
	} {
		out, errText, code := cli(t, "ops", "list", "--db", db, "--limit", strconv.Itoa(c.limit), "--json")
		if code != 0 {
			t.Fatalf("--limit %d: exit %d %s", c.limit, code, errText)
		}
		var page struct {
			Operations []json.RawMessage `json:"operations"`
			Truncated  bool              `json:"truncated"`
			NextBefore int64             `json:"next_before"`
		}
		if err := json.Unmarshal([]byte(out), &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Operations) != c.rows || page.Truncated != c.truncated || (page.NextBefore == 0) == c.truncated {
			t.Fatalf("--limit %d: %d rows, truncated %v, next_before %d; want %d rows, truncated %v with a next page",
				c.limit, len(page.Operations), page.Truncated, page.NextBefore, c.rows, c.truncated)
		}
		// The next page starts where this one ended.
		next := page.NextBefore
		out, _, _ = cli(t, "ops", "list", "--db", db, "--limit", strconv.Itoa(c.limit), "--before", strconv.FormatInt(next, 10), "--json")
		var rest struct {
			Operations []struct {
				ID int64 `json:"id"`
			} `json:"operations"`
		}
		if err := json.Unmarshal([]byte(out), &rest); err != nil {
			t.Fatal(err)
		}
		if len(rest.Operations) == 0 || rest.Operations[0].ID >= next {
			t.Fatalf("--limit %d, the next page: %s", c.limit, out)
		}
	}
	if _, errText, code := cli(t, "ops", "list", "--db", db, "--limit", "10001"); code != 2 {
		t.Fatalf("--limit 10001: exit %d %s; want 2", code, errText)
	}
}
