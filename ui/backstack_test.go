package ui

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/lab"
)

// esc went back and forth for good between the Lab (or the audit log) and
// a detail opened from it, when that screen had been opened from a
// detail: each screen remembered one screen to go back to. Now esc goes
// back through the screens in the order they were last on screen, each
// once, and always ends at the list.
func TestEscAlwaysEndsAtTheList(t *testing.T) {
	names := map[screenID]string{screenList: "list", screenDetail: "detail", screenLab: "lab", screenAudit: "audit"}
	for _, tc := range []struct {
		name string
		keys []string
		back []screenID // the screens each esc shows
	}{
		{"audit log from a detail", []string{"enter", "D", "enter"}, []screenID{screenAudit, screenList}},
		{"lab from a detail", []string{"enter", "L", "1"}, []screenID{screenLab, screenList}},
		{"lab from a detail from the audit log", []string{"D", "enter", "L", "1"}, []screenID{screenLab, screenAudit, screenList}},
		{"audit log and lab, back and forth", []string{"enter", "D", "enter", "L", "1", "D", "enter"}, []screenID{screenAudit, screenLab, screenList}},
		{"the lab, then the audit log", []string{"L", "1", "D", "enter"}, []screenID{screenAudit, screenLab, screenList}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := fixture(t)
			cfg := config(l)
			cfg.Lab, cfg.LabScenarios = &lab.Runner{Exe: "/nonexistent"}, []lab.Scenario{{ID: "s", Name: "a scenario"}}
			h := open(t, cfg, 120, 30)
			h.m.lab.row = &lab.Row{Scenario: "s", Tenant: "acme", Keys: []string{"notify-2"}, OK: true}
			h.m.lab.scenario = lab.Scenario{ID: "s"}
			var path []string
			for _, k := range tc.keys {
				h.keys(k)
				path = append(path, k+"→"+names[h.m.screen])
			}
			if h.m.screen != screenDetail {
				t.Fatalf("%s: not on a detail", strings.Join(path, " "))
			}
			for i, want := range tc.back {
				h.keys("esc")
				if h.m.screen != want {
					t.Fatalf("%s, then esc #%d: %s, want %s", strings.Join(path, " "), i+1, names[h.m.screen], names[want])
				}
			}
			for i := 0; i < 3; i++ {
				h.keys("esc")
				if h.m.screen != screenList {
					t.Fatalf("esc on the list left it for the %s", names[h.m.screen])
				}
			}
		})
	}
}
