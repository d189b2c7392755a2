package cli

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// deepTask is create_support_task's arguments n levels deep (n >= 2): its
// schema takes other fields, of any depth.
func deepTask(n int) string {
	return `{"subject":"x","y":` + strings.Repeat(`{"y":`, n-2) + "{}" + strings.Repeat("}", n-2) + "}"
}

// call refuses arguments nested deeper than model.MaxArgsDepth, exit 2,
// saying how deep and the limit, nothing written; at the limit it takes
// them. A key an older build recorded from such arguments, retried with
// the very bytes, gets its receipt replayed, exit 0.
func TestCallRefusesArgumentsNestedTooDeep(t *testing.T) {
	lim := model.MaxArgsDepth
	cases := []struct {
		name  string
		depth int
		older bool
		code  int
	}{
		{"at the limit", lim, false, 0},
		{"one over", lim + 1, false, 2},
		{"one over, recorded by an older build", lim + 1, true, 0},
		{"3000 levels", 3000, false, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "ledger.db")
			args := deepTask(c.depth)
			if c.older {
				st, err := sqlite.Open(db, store.Options{Create: true})
				if err != nil {
					t.Fatal(err)
				}
				testledger.RecordOlder(t, st, config.Default().Tools, testledger.Older{Tenant: "acme", Key: "k",
					Tool: "create_support_task", Args: args, State: model.StateApplied})
				st.Close()
			}
			out, errText, code := cli(t, callArgs(db, "acme", "k", "create_support_task", args)...)
			if code != c.code {
				t.Fatalf("%d levels: exit %d %q %q; want %d", c.depth, code, out, errText, c.code)
			}
			if c.older && !strings.Contains(out, `"status":"replayed"`) {
				t.Fatalf("the older build's key: %q; want its receipt replayed", out)
			}
			if c.code != 2 {
				return
			}
			if want := "arguments are nested " + strconv.Itoa(c.depth) + " levels deep (objects and arrays); at most " + strconv.Itoa(lim); !strings.Contains(errText, want) {
				t.Fatalf("%d levels: %q; want it to say %q", c.depth, errText, want)
			}
			if _, _, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "k"); code == 0 {
				t.Fatal("a refused call was written")
			}
		})
	}
}
