package textsafe

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// hostile is what agents and operators have been seen to (or could) send.
var hostile = []struct{ name, in, want string }{
	{"plain", "Invoice 42 — ünïcode 日本", "Invoice 42 — ünïcode 日本"},
	{"osc retitle and clear", "\x1b]0;pwned\x07\x1b[2J", `\x1b]0;pwned\x07\x1b[2J`},
	{"line breaks and tabs", "a\nb\r\tc", `a\nb\r\tc`},
	{"DEL", "a\x7fb", `a\x7fb`},
	{"C1 CSI", "a\u009b31mred", `a\u009b31mred`},
	{"C1 NEL", "a\u0085b", `a\u0085b`},
	{"bidi override", "invoice\u202Etxt.exe", `invoice\u202etxt.exe`},
	{"bidi isolates and marks", "\u2066\u2067\u2068\u2069\u200e\u200f\u061c", `\u2066\u2067\u2068\u2069\u200e\u200f\u061c`},
	{"zero width and BOM", "a\u200bb\ufeff", `a\u200bb\ufeff`},
	{"line separator", "a\u2028b\u2029", `a\u2028b\u2029`},
	{"tag character", "a\U000E0041", `a\U000e0041`},
	{"invalid UTF-8", "a\xff\xc3b", `a\xff\xc3b`},
	{"replacement char stays", "a\ufffdb", "a\ufffdb"},
	// Combining marks: a letter keeps up to three (Vietnamese ệ written
	// decomposed has two); the rest of a stack, which draws over the lines
	// above and below ("Zalgo"), is written as escapes.
	{"two combining marks", "e\u0323\u0302", "e\u0323\u0302"},
	{"three combining marks", "a\u0301\u0302\u0303", "a\u0301\u0302\u0303"},
	{"stacked combining marks", "a\u0301\u0301\u0301\u0301\u0301b", "a\u0301\u0301\u0301" + `\u0301\u0301` + "b"},
	{"stacked enclosing marks", "x\u20dd\u20dd\u20dd\u20dd", "x\u20dd\u20dd\u20dd" + `\u20dd`},
	// A mark after an escape would draw on its last letter (reject\u202é):
	// it is escaped too, and so is the rest of its run.
	{"mark after an escaped rune", "reject\u202e\u0301!", "reject" + `\u202e\u0301` + "!"},
	{"marks after an escaped byte", "x\xff\u0301\u20dd y\u0301", "x" + `\xff\u0301\u20dd` + " y\u0301"},
	{"spacing mark after an escape", "\x1b\u0903", `\x1b\u0903`},
}

func TestVisible(t *testing.T) {
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			got := Visible(tc.in)
			if got != tc.want {
				t.Fatalf("Visible(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if !Clean(got) {
				t.Fatalf("Visible(%q) = %q still holds an unsafe rune", tc.in, got)
			}
			if Visible(got) != got {
				t.Fatalf("Visible is not idempotent on %q", got)
			}
			if Clean(tc.in) != (tc.in == tc.want) {
				t.Fatalf("Clean(%q) = %v", tc.in, Clean(tc.in))
			}
		})
	}
}

func TestJSONEscapesWhatEncodingJSONLeaves(t *testing.T) {
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			v := map[string]any{"subject": tc.in, "nested": []string{tc.in}}
			raw, err := json.MarshalIndent(v, "", "\t")
			if err != nil {
				t.Fatal(err)
			}
			got := JSON(raw)
			marks := 0
			for i := 0; i < len(got); {
				r, size := utf8.DecodeRune(got[i:])
				if r == utf8.RuneError && size <= 1 || Unsafe(r) && r != '\n' && r != '\t' {
					t.Fatalf("JSON(%s) holds %q at byte %d", raw, r, i)
				}
				if marks = stacked(r, marks); marks > MaxMarks {
					t.Fatalf("JSON(%s) = %s stacks %d combining marks at byte %d", raw, got, marks, i)
				}
				i += size
			}
			var back, orig any
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("JSON made invalid JSON %s: %v", got, err)
			}
			_ = json.Unmarshal(raw, &orig)
			if !reflect.DeepEqual(back, orig) {
				t.Fatalf("JSON changed the value: %v, want %v", back, orig)
			}
		})
	}
}

// JSON writes a combining mark as an escape where it would stack past
// MaxMarks or draw on an escape's last letter, as Visible does.
func TestJSONEscapesMarksThatWouldDraw(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"three marks stay", "a\u0301\u0302\u0303", "\"a\u0301\u0302\u0303\""},
		{"stacked marks", "a\u0301\u0301\u0301\u0301\u0301b", "\"a\u0301\u0301\u0301" + `\u0301\u0301` + "b\""},
		{"mark after encoding/json's escape", "x\n\u0303y", `"x\n\u0303y"`},
		{"mark after a quote escape", "\"\u0301", `"\"\u0301"`},
		{"mark after our escape", "reject\u202e\u0301!", `"reject\u202e\u0301!"`},
		{"mark after a \\u escape of encoding/json's", "<\u0301", `"\u003c\u0301"`},
		{"decomposed letters stay", "e\u0323\u0302 n\u0303", "\"e\u0323\u0302 n\u0303\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw, err := json.Marshal(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(JSON(raw)); got != c.want {
				t.Fatalf("JSON(%s) = %s, want %s", raw, got, c.want)
			}
			var back string
			if err := json.Unmarshal(JSON(raw), &back); err != nil || back != c.in {
				t.Fatalf("JSON(%s) reads back %q (%v), want %q", raw, back, err, c.in)
			}
		})
	}
}

// ShellWord leaves a plain word as it is and makes anything else one
// quoted word that a shell reads back as the same string.
func TestShellWord(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"op-42", "op-42"},
		{"acme.prod/k_1:x@y", "acme.prod/k_1:x@y"},
		{"", "''"},
		{"two words", "'two words'"},
		{"k$(rm -rf ~)", "'k$(rm -rf ~)'"},
		{"a;b", "'a;b'"},
		{"it's", `'it'\''s'`},
		{"=rm", "'=rm'"},
		{"a^b", "'a^b'"},
		{"tab\there", "'tab\there'"},
	} {
		if got := ShellWord(c.in); got != c.want {
			t.Errorf("ShellWord(%q) = %s; want %s", c.in, got, c.want)
		}
	}
}
