package ui

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// :provider and :age filter the list through the store's query; each says
// so on the status line and clears with its own command.
func TestProviderAndAgeFilters(t *testing.T) {
	l := fixture(t)
	l.clock.Advance(30 * time.Minute)
	l.task(t, "acme", "task-late", "Later")
	l.unknown(t, "acme", "notify-late", "late@acme.example")
	h := open(t, config(l), 120, 40)
	h.keys("8")
	keys := func() []string {
		var k []string
		for _, r := range h.m.list.rows {
			k = append(k, r.Key)
		}
		slices.Sort(k)
		return k
	}
	all := keys()
	var prov string
	for _, r := range h.m.list.rows {
		if r.Provider != "" {
			prov = r.Provider
		}
	}
	if prov == "" {
		t.Fatal("the fixture sends nothing to a provider")
	}
	h.keys(":")
	h.typeText("provider " + prov)
	h.keys("enter")
	h.contains("provider " + prov + " (:provider clears)")
	for _, r := range h.m.list.rows {
		if r.Provider != prov {
			t.Errorf(":provider %s shows %s (provider %q)", prov, r.Key, r.Provider)
		}
	}
	if len(h.m.list.rows) == 0 || len(h.m.list.rows) == len(all) {
		t.Errorf(":provider %s kept %d of %d", prov, len(h.m.list.rows), len(all))
	}
	h.keys(":")
	h.typeText("provider nobody")
	h.keys("enter")
	h.contains("No operations with provider nobody.")
	h.keys(":")
	h.typeText("provider")
	h.keys("enter")
	if got := keys(); len(got) != len(all) {
		t.Errorf(":provider alone clears: %v", got)
	}

	h.keys(":")
	h.typeText("age <10m")
	h.keys("enter")
	h.contains("age <10m (:age all clears)")
	if got := strings.Join(keys(), ","); got != "notify-late,task-late" {
		t.Errorf(":age <10m shows %s", got)
	}
	h.keys(":")
	h.typeText("age >10m")
	h.keys("enter")
	if got := keys(); len(got) != len(all)-2 || slices.Contains(got, "task-late") {
		t.Errorf(":age >10m shows %v", got)
	}
	h.keys(":")
	h.typeText("age >2d")
	h.keys("enter")
	h.contains("No operations with age >2d.")
	h.keys(":")
	h.typeText("age soon")
	h.keys("enter")
	h.contains("age: >DURATION (older than)")
	h.keys(":")
	h.typeText("age all")
	h.keys("enter")
	h.lacks("(:age all clears)")
	if got := keys(); len(got) != len(all) {
		t.Errorf(":age all clears: %v", got)
	}
}

func TestParseAgeFilter(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{">10m", ">10m", ""}, {"<2h", "<2h", ""}, {"> 3d", ">3d", ""}, {"<90s", "<90s", ""}, {"all", "", ""}, {"", "", ""},
		{"10m", "", "age: >DURATION"}, {">", "", "not a duration"}, {"<xd", "", "not a duration"},
		// A duration of zero or less is one, but no age: said so, not
		// "is not a duration".
		{">-5m", "", `"-5m" — the age must be more than zero`}, {"<0s", "", `"0s" — the age must be more than zero`},
		{">0d", "", "must be more than zero"}, {">-3d", "", "must be more than zero"},
		// A day count whose nanoseconds overflow must not wrap round into a
		// small filter (213504 days wrapped to about 25 minutes).
		{">213504d", "", "longer than 100 years"}, {"<9999999999999d", "", "longer than 100 years"}, {">36500d", ">36500d", ""},
		{">876001h", "", "longer than 100 years"}, {"<99999999999999999999d", "", "not a duration"},
	} {
		f, err := parseAgeFilter(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v; want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || f.String() != c.want {
			t.Errorf("%q: %q, %v; want %q", c.in, f, err, c.want)
		}
	}
}
