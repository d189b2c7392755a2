// Package textsafe is the one sanitizer between stored data and a person's
// terminal. Agents and operators can put anything into a ledger — escape
// sequences that retitle or clear a terminal, C1 controls, bidirectional
// overrides that make text read differently from what it is, bytes that are
// not UTF-8 — and the ledger keeps it faithfully. Whatever shows it (the
// command line's tables and errors, the console) passes it through Visible,
// which renders every such character as a visible, inert escape; JSON output
// passes through JSON, which escapes them the JSON way.
package textsafe

import (
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unsafe reports whether r must never reach a terminal as itself: C0 and C1
// controls and DEL (ESC starts every terminal sequence; U+009B is a one-rune
// CSI on some terminals), format characters (bidirectional embeddings,
// overrides and isolates, zero-width characters, the BOM, tag characters)
// and the Unicode line and paragraph separators.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == '\u2028', r == '\u2029':
		return true
	case r < 0xa0:
		return false
	}
	return unicode.Is(unicode.Cf, r)
}

// Clean reports whether s is valid UTF-8 without a single unsafe rune: what
// operator input must be.
func Clean(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	marks := 0
	for _, r := range s {
		if Unsafe(r) {
			return false
		}
		if marks = stacked(r, marks); marks > MaxMarks {
			return false
		}
	}
	return true
}

// MaxMarks is how many combining marks in a row one character keeps
// (decomposed Vietnamese "ệ" has two); the rest of a stack — which draws
// over the lines above and below it ("Zalgo" text) — is written as
// escapes, \u0301.
const MaxMarks = 3

// stacked is the length of the run of combining marks r ends, given the
// run before it.
func stacked(r rune, run int) int {
	if r >= 0x300 && unicode.In(r, unicode.Mn, unicode.Me) {
		return run + 1
	}
	return 0
}

// Visible returns s with every unsafe rune written as a Go-style escape
// (\x1b, \n, \u202e) and every byte that is not UTF-8 as \xNN, so what it
// shows is inert and says exactly what is stored. Safe text comes back
// unchanged (and without copying); Visible(Visible(s)) == Visible(s).
func Visible(s string) string {
	if Clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	marks := 0
	escaped := false // the last thing written was an escape
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		marks = stacked(r, marks)
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
			escaped = true
		case Unsafe(r), marks > MaxMarks, escaped && unicode.Is(unicode.M, r):
			// A combining mark after an escape would draw on the
			// escape's last letter (reject\u202é): it is written as an
			// escape too.
			b.WriteString(escape(r))
			escaped = true
		default:
			b.WriteString(s[i : i+size])
			escaped = false
		}
		i += size
	}
	return b.String()
}

// Lines is Visible for text of several lines: line feeds and tabs stay
// what they are, everything else unsafe is escaped.
func Lines(s string) string {
	if Clean(strings.NewReplacer("\n", "", "\t", "").Replace(s)) {
		return s
	}
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		fields := strings.Split(p, "\t")
		for j, f := range fields {
			fields[j] = Visible(f)
		}
		parts[i] = strings.Join(fields, "\t")
	}
	return strings.Join(parts, "\n")
}

// Writer passes everything written to w through Lines: for text written by
// code that quotes input as it is (the flag package's error lines). Each
// Write must hold whole runes, as fmt's do.
func Writer(w io.Writer) io.Writer { return linesWriter{w} }

type linesWriter struct{ w io.Writer }

func (l linesWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(l.w, Lines(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// escape spells one unsafe rune.
func escape(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	}
	if r < 0x80 {
		return `\x` + hex2(byte(r))
	}
	q := strconv.QuoteRuneToASCII(r) // '\u202e' or '\U000e0001'
	return q[1 : len(q)-1]
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// JSON escapes every unsafe rune from DEL up in encoded JSON as \uXXXX (a surrogate
// pair above the BMP). encoding/json already escapes C0 controls but writes
// DEL, C1 controls and bidirectional controls as themselves. Outside
// strings JSON is ASCII, so every such rune found is inside a string and
// its escape decodes to the same text: the output is still valid JSON with
// the same value. Combining marks get Visible's rule: past MaxMarks in a
// row, or right after an escape (encoding/json's or this one's, where a
// mark would draw on its last letter: \n with a tilde reads \ñ), they are
// escaped too. b must be valid JSON (what json.Marshal returns).
func JSON(b []byte) []byte {
	clean := true
	for _, c := range b {
		if c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	marks := 0
	escaped := false // the last thing written was an escape
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		marks = stacked(r, marks)
		switch {
		case r == utf8.RuneError && size <= 1:
			out = append(out, `\ufffd`...) // not UTF-8: what json.Marshal would write
			escaped = true
		case r >= 0x7f && Unsafe(r), marks > MaxMarks, escaped && unicode.Is(unicode.M, r):
			// Below DEL only JSON's own whitespace can be raw (encoding/json
			// escapes C0 controls inside strings): it stays.
			out = appendU(out, r)
			escaped = true
		case r == '\\':
			// An escape of encoding/json's, copied whole: \uXXXX or \X.
			n := 2
			if i+1 < len(b) && b[i+1] == 'u' {
				n = 6
			}
			n = min(n, len(b)-i)
			out = append(out, b[i:i+n]...)
			i += n
			escaped = true
			continue
		default:
			out = append(out, b[i:i+size]...)
			escaped = false
		}
		i += size
	}
	return out
}

func appendU(out []byte, r rune) []byte {
	if r > 0xffff {
		r -= 0x10000
		out = appendU4(out, 0xd800+(r>>10))
		return appendU4(out, 0xdc00+(r&0x3ff))
	}
	return appendU4(out, r)
}

func appendU4(out []byte, r rune) []byte {
	const digits = "0123456789abcdef"
	return append(out, '\\', 'u', digits[r>>12&0xf], digits[r>>8&0xf], digits[r>>4&0xf], digits[r&0xf])
}

// ShellWord makes s one word for POSIX shells and zsh, for a command
// printed for a person to paste: quoted unless it is plain (a word
// starting with "=" — zsh: the path of that command — or holding "^" —
// zsh's extended glob — is quoted too). A key, tenant or a provider's
// reference may hold anything a shell would run or split.
func ShellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t'\"\\$`!*?&;|<>(){}[]#~=^") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
