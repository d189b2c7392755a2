package ui

import (
	"fmt"
	"os"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// headerOf is the screen's first line.
func headerOf(h *harness) string { return strings.SplitN(h.view(), "\n", 2)[0] }

func headerHas(t *testing.T, h *harness, want ...string) {
	t.Helper()
	line := headerOf(h)
	if w := ansi.StringWidth(line); w > h.m.width {
		t.Fatalf("header is %d cells wide on a %d-column screen: %q", w, h.m.width, line)
	}
	for _, w := range want {
		if !strings.Contains(line, w) {
			t.Fatalf("header lacks %q at %d columns:\n%q", w, h.m.width, line)
		}
	}
}

// The header's alarms are never cut: a long tenant scope or ledger path
// gives way, clipped in its middle, at every width.
func TestTheHeaderNeverCutsItsAlarms(t *testing.T) {
	long := strings.Repeat("umbrella-logistics-", 7)[:120]
	t.Run("a 120-character tenant scope", func(t *testing.T) {
		l := newLedger(t)
		l.unknown(t, "acme", "k-1", "cfo@acme.example")
		l.task(t, long, "t-1", "a local task")
		cfg := config(l)
		cfg.Tenant = long
		for _, w := range []int{40, 60, 80, 120} {
			h := open(t, cfg, w, 24)
			headerHas(t, h, "1 UNKNOWN")
			if w >= 80 {
				headerHas(t, h, "1 UNKNOWN in other tenants", long[:3], long[len(long)-3:])
			}
			h.m.Close() // its watch connection, before the next opens
		}
	})
	t.Run("read-only, the ledger removed", func(t *testing.T) {
		l := newLedger(t)
		for i := range 5 {
			l.unknown(t, "acme", fmt.Sprintf("k-%d", i), "cfo@acme.example")
		}
		cfg := config(l)
		cfg.ReadOnly = true
		cfg.Ledger = "/var/lib/retrysafe/" + strings.Repeat("ledgers/", 8) + "demo.db"
		h := open(t, cfg, 120, 24)
		h.tick()
		if err := os.Remove(l.path); err != nil {
			t.Fatal(err)
		}
		h.tick()
		for _, w := range []int{200, 120, 80, 60, 40} {
			h.send(teaSize(w, 24))
			headerHas(t, h, "READ-ONLY", "5 UNKNOWN", "refresh failing")
		}
	})
	t.Run("read-only, scoped, the ledger removed, at 40 columns", func(t *testing.T) {
		l := newLedger(t)
		for i := range 5 {
			l.unknown(t, "acme", fmt.Sprintf("k-%d", i), "cfo@acme.example")
		}
		cfg := config(l)
		cfg.ReadOnly, cfg.Tenant = true, long
		h := open(t, cfg, 40, 10)
		if err := os.Remove(l.path); err != nil {
			t.Fatal(err)
		}
		h.tick()
		headerHas(t, h, "READ-ONLY", "5 UNKNOWN elsewhere", "⚠ not live")
	})
	t.Run("all tenants at 40x10", func(t *testing.T) {
		l := newLedger(t)
		for i := range 5 {
			l.unknown(t, "acme", fmt.Sprintf("k-%d", i), "cfo@acme.example")
		}
		h := open(t, config(l), 40, 10)
		h.tick()
		headerHas(t, h, "5 UNKNOWN")
	})
}

func teaSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }
