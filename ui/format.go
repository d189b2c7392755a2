package ui

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
)

// fit truncates plain text s to width w cells (ending in "…" when cut) and
// pads it with spaces to exactly w. Cells are cut by display width, so wide
// characters in keys and subjects never break the table's columns.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s = oneLine(s)
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	if pad := w - ansi.StringWidth(s); pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	return s
}

// fitRight is fit, aligned to the right (numbers).
func fitRight(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s = oneLine(s)
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	if pad := w - ansi.StringWidth(s); pad > 0 {
		s = strings.Repeat(" ", pad) + s
	}
	return s
}

// clipMiddle shortens s to w cells keeping both ends ("/var/…/demo.db"): the
// end of a path or key is usually what tells two apart.
func clipMiddle(s string, w int) string {
	s = oneLine(s)
	if ansi.StringWidth(s) <= w {
		return s
	}
	if w <= 1 {
		return ansi.Truncate(s, w, "")
	}
	// Both ends are measured in cells, not runes: a wide character (CJK,
	// emoji) takes two, and neither end may push the whole past w.
	r := []rune(s)
	tailW := (w - 1) / 2
	headW := w - 1 - tailW
	head, used := 0, 0
	for head < len(r) {
		cw := ansi.StringWidth(string(r[head]))
		if used+cw > headW {
			break
		}
		used += cw
		head++
	}
	tailW = w - 1 - used // what the head left over
	tail, used := len(r), 0
	for tail > head {
		cw := ansi.StringWidth(string(r[tail-1]))
		if used+cw > tailW {
			break
		}
		used += cw
		tail--
	}
	return string(r[:head]) + "…" + string(r[tail:])
}

// clipKeys is the KEY column's cut of each of keys at w cells, for those
// whose clipMiddle would read like another key's: keys that differ only
// in their middle ("invoice-…-0001-…-email", "…-0002-…") all read
// "invoice…-email". Each of those shows both its ends and, between them,
// where it first differs from the nearest of the others
// ("inv…0001-s…ail"). A key no other reads like is not in the result
// (clipMiddle cuts it), nor is one too narrow a column cannot show in
// three parts. The keys pass through the one sanitizer (oneLine) first.
func clipKeys(keys []string, w int) map[string]string {
	groups := map[string][]string{} // clipMiddle's cut → the keys that read so
	shown := map[string]string{}    // key → its sanitized text
	for _, k := range keys {
		if _, ok := shown[k]; ok {
			continue
		}
		shown[k] = oneLine(k)
		cut := clipMiddle(k, w)
		groups[cut] = append(groups[cut], k)
	}
	out := map[string]string{}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		// Sorted, a key's nearest (longest shared start) is a neighbour.
		sort.Slice(g, func(i, j int) bool { return shown[g[i]] < shown[g[j]] })
		runes := make([][]rune, len(g))
		for i, k := range g {
			runes[i] = []rune(shown[k])
		}
		for i, k := range g {
			p := 0
			for _, j := range []int{i - 1, i + 1} {
				if j >= 0 && j < len(g) {
					p = max(p, sharedStart(runes[i], runes[j]))
				}
			}
			if cut := clipAround(runes[i], w, p); cut != "" {
				out[k] = cut
			}
		}
	}
	return out
}

// sharedStart is how many runes a and b share at their start.
func sharedStart(a, b []rune) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// clipAround cuts r (sanitized text) to at most w cells in three parts —
// its start, the part around rune p, its end — with "…" between them; ""
// when w is too narrow for that, or r fits whole.
func clipAround(r []rune, w, p int) string {
	cells := func(rs []rune) int { return ansi.StringWidth(string(rs)) }
	if cells(r) <= w {
		return ""
	}
	side := min(4, (w-2)/4)
	mid := w - 2 - 2*side
	if side < 1 || mid < 2 {
		return ""
	}
	head := 0
	for head < len(r) && cells(r[:head+1]) <= side {
		head++
	}
	tail := len(r)
	for tail > head && cells(r[tail-1:]) <= side {
		tail--
	}
	// The window: from a little before where it differs, as far as mid
	// cells go, between the two ends.
	start := min(max(head, p-mid/2), tail)
	end := start
	for end < tail && cells(r[start:end+1]) <= mid {
		end++
	}
	for start > head && end == tail && cells(r[start-1:end]) <= mid {
		start--
	}
	out := string(r[:head])
	if start > head {
		out += "…"
	}
	out += string(r[start:end])
	if end < tail {
		out += "…"
	}
	out += string(r[tail:])
	if ansi.StringWidth(out) > w {
		return ""
	}
	return out
}

// oneLine turns line breaks and tabs into spaces so a value never breaks a
// row, and shows every other control, format or bidirectional character
// as an inert escape (textsafe.Visible): plain text on its way to the
// screen — cells, errors — passes here.
func oneLine(s string) string {
	if strings.ContainsAny(s, "\n\r\t") {
		s = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' || r == '\t' {
				return ' '
			}
			return r
		}, s)
	}
	return textsafe.Visible(s)
}

// padRight pads styled text (which may hold escape codes) to w cells.
func padRight(s string, w int) string {
	if pad := w - ansi.StringWidth(s); pad > 0 {
		return s + strings.Repeat(" ", pad)
	}
	return s
}

// truncate cuts styled text to w cells.
func truncate(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// age renders how long ago t was, in the largest whole unit: 12s, 5m, 3h, 2d.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	if d < 0 {
		return "now"
	}
	return model.AgeWords(d)
}

// count renders n with thousands separators: 1,000,000.
func count(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// compact renders n in at most four cells: 999, 12k, 350k, 1.2M.
func compact(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 10_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	case n < 1_000_000:
		return strconv.Itoa(n/1000) + "k"
	default:
		return strconv.FormatFloat(float64(n)/1_000_000, 'f', 1, 64) + "M"
	}
}

// dur renders an attempt's duration the way people read them.
func dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return strconv.Itoa(int(d/time.Microsecond)) + "µs"
	case d < time.Second:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	default:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
	}
}

// or returns s, or alt when s is empty.
func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// toolShort is a tool's name in a narrow table column.
func toolShort(tool string) string {
	switch tool {
	case "create_support_task":
		return "task"
	case "create_report_job":
		return "report"
	case "send_notification":
		return "notify"
	}
	return tool
}

// stateLabel is how a state reads in a tab of the given tier (0 full, 1
// short, 2 shortest). One abbreviation scheme on every screen; a narrow
// tabs line never drops the contradicted count for them.
// "unknown" is never shortened: it is the word the screen exists for.
func stateLabel(st model.State, tier int) string {
	if tier == 0 || st == model.StateUnknown {
		return string(st)
	}
	if tier >= 2 {
		shortest := map[model.State]string{
			model.StateInProgress: "prog",
			model.StateNotApplied: "n/a",
			model.StateFailed:     "fail",
			model.StateApplied:    "appl",
			model.StateSuperseded: "sup",
			model.StateAuthorized: "auth",
		}
		return shortest[st]
	}
	short := map[model.State]string{
		model.StateInProgress: "in-prog",
		model.StateNotApplied: "n-appl",
		model.StateFailed:     "failed",
		model.StateApplied:    "applied",
		model.StateSuperseded: "supsd",
		model.StateAuthorized: "auth",
	}
	return short[st]
}

// nbHyphen stands in for "-" while text is wrapped: ansi.Wrap always breaks
// after a hyphen, which splits tenants, keys and downstream keys
// ("umbrella-" / "logistics") that people read and copy whole.
const nbHyphen = "\u2011"

// wrap is ansi.Wrap that breaks only at the given breakpoints (and inside a
// word longer than the line), never after a hyphen.
func wrap(s string, w int, breakpoints string) string {
	if strings.Contains(s, nbHyphen) {
		return ansi.Wrap(s, w, breakpoints)
	}
	return strings.ReplaceAll(ansi.Wrap(strings.ReplaceAll(s, "-", nbHyphen), w, breakpoints), nbHyphen, "-")
}

// pack joins parts with sep into lines of at most w cells, breaking only
// between parts (a part wider than w gets a line of its own).
func pack(parts []string, sep string, w int) []string {
	var lines []string
	cur := ""
	for _, p := range parts {
		switch {
		case cur == "":
			cur = p
		case ansi.StringWidth(cur)+ansi.StringWidth(sep)+ansi.StringWidth(p) <= w:
			cur += sep + p
		default:
			lines = append(lines, cur)
			cur = p
		}
	}
	return append(lines, cur)
}

// plural is "1 operation", "2 operations", "1,204 operations".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return count(n) + " " + many
}

// timeLayout is the console's one format for a point in time (the audit
// log, the detail, forms, banners); the header's clock alone is a bare
// time of day.
const timeLayout = "2006-01-02 15:04:05"

// clockTime is t in the console's time zone and format.
func clockTime(t time.Time, e env) string { return t.In(e.loc).Format(timeLayout) }

// rfc3339 is a point in time as the ledger, reconcile and the providers
// write it in their words ("lease ended 2026-03-14T10:26:53Z …", "lease
// held by w1 until …", "delivered sbx_6 at …").
var rfc3339 = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})`)

// localTimes is text from outside the console (an attempt's error, a
// provider's words, a refusal) with every RFC 3339 time in it said in the
// console's own format and time zone (clockTime): the screen shows one
// format. Arguments and receipts, which are data, are shown as they are.
func localTimes(text string, e env) string {
	if !strings.ContainsRune(text, 'T') {
		return text
	}
	return rfc3339.ReplaceAllStringFunc(text, func(m string) string {
		t, err := time.Parse(time.RFC3339Nano, m)
		if err != nil {
			return m
		}
		return clockTime(t, e)
	})
}

// safeRunes is rs without the runes textsafe.Unsafe names (the slice
// itself when there is none).
func safeRunes(rs []rune) []rune {
	for i, r := range rs {
		if textsafe.Unsafe(r) {
			out := append([]rune{}, rs[:i]...)
			for _, r := range rs[i+1:] {
				if !textsafe.Unsafe(r) {
					out = append(out, r)
				}
			}
			return out
		}
	}
	return rs
}

// writeErrText is a failed write's error in words: by its code, never by
// its text — a busy ledger (model.CodeBusy: SQLite's write lock held past
// the deadline, or PostgreSQL not answering in time) says so, not the
// driver's "context deadline exceeded".
func writeErrText(err error) string {
	if model.IsCode(err, model.CodeBusy) {
		return busyWords
	}
	return errText(err)
}

// busyWords is what a write refused by a busy ledger says.
const busyWords = "the ledger is busy: another process holds its write lock (or the database did not answer in time). Nothing was written — try again."
