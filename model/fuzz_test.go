package model_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/retrysafe/retrysafe/model"
)

// Seeds shared by the fuzz targets; `go test` runs them as ordinary cases,
// `go test -fuzz=FuzzX ./model/` explores from them.
var fuzzSeeds = []string{
	`{"b":1,"a":1.0}`,
	`{"subject":"check delayed delivery"}`,
	`{"a":[1,2.5,-0,1e15,1e-7,0.1],"b":{"y":null,"x":true},"c":"é\u00e9\n\"\\/"}`,
	`{"n":9007199254740991,"m":-9007199254740991,"f":123456789.125,"big":1e300}`,
	`{"\u20ac":1,"€a":2,"a":3,"":4,"A":5}`,
	`{"deep":{"a":{"b":{"c":[[[{"d":[]}]]]}}}}`,
	`{"s":"\ud83d\ude00 emoji, \u0000 nul, \u001f unit sep"}`,
	`{"x":1E+2,"y":-12.50e-3,"z":0.000001}`,
	`{"amount":10.000000000000001,"p":0.3000000000000000444,"q":0.30000000000000004,"r":5e-324}`,
	`{ "spaced" : [ 1 , { } , [ ] ] }`,
	`{}`,
}

func addSeeds(f *testing.F, withSeed bool) {
	for i, s := range fuzzSeeds {
		if withSeed {
			f.Add([]byte(s), uint64(i)*7919+1)
		} else {
			f.Add([]byte(s))
		}
	}
}

// FuzzCanonicalIdempotent: the canonical form of a canonical form is itself.
func FuzzCanonicalIdempotent(f *testing.F) {
	addSeeds(f, false)
	f.Fuzz(func(t *testing.T, raw []byte) {
		c1, _, err := model.CanonicalArgs(raw)
		if err != nil {
			return
		}
		c2, _, err := model.CanonicalArgs(c1)
		if err != nil {
			t.Fatalf("canonical form %s of %q is refused: %v", c1, raw, err)
		}
		if !bytes.Equal(c1, c2) {
			t.Fatalf("not idempotent:\n in  %q\n c1  %s\n c2  %s", raw, c1, c2)
		}
		if !utf8.Valid(c1) || !json.Valid(c1) {
			t.Fatalf("canonical form is not valid UTF-8 JSON: %q", c1)
		}
	})
}

// FuzzCanonicalKeyOrder: re-emitting the same object with its members in a
// different order (at every depth) changes nothing.
func FuzzCanonicalKeyOrder(f *testing.F) {
	addSeeds(f, true)
	f.Fuzz(func(t *testing.T, raw []byte, seed uint64) {
		c1, v, err := model.CanonicalArgs(raw)
		if err != nil {
			return
		}
		e := &reencoder{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), shuffleOnly: true}
		other := e.encode(v)
		c2, _, err := model.CanonicalArgs(other)
		if err != nil {
			t.Fatalf("%q accepted but its reordering %s refused: %v", raw, other, err)
		}
		if !bytes.Equal(c1, c2) {
			t.Fatalf("key order changed the canonical form:\n in        %q\n reordered %s\n c1 %s\n c2 %s", raw, other, c1, c2)
		}
	})
}

// FuzzCanonicalSemanticEquality: any spelling of the same JSON value —
// other whitespace, other key order, other number spelling (1, 1.0, 1e0,
// 10E-1), other string escapes — has the same canonical form and the same
// fingerprint.
func FuzzCanonicalSemanticEquality(f *testing.F) {
	addSeeds(f, true)
	f.Fuzz(func(t *testing.T, raw []byte, seed uint64) {
		c1, v, err := model.CanonicalArgs(raw)
		if err != nil {
			return
		}
		e := &reencoder{rng: rand.New(rand.NewPCG(seed, seed+1))}
		other := e.encode(v)
		if len(other) > model.MaxArgsBytes {
			return // the re-spelling itself is over the size limit
		}
		c2, _, err := model.CanonicalArgs(other)
		if err != nil {
			t.Fatalf("%q accepted but the same value spelled %s refused: %v", raw, other, err)
		}
		if !bytes.Equal(c1, c2) {
			t.Fatalf("same value, different canonical form:\n in    %q\n other %s\n c1 %s\n c2 %s", raw, other, c1, c2)
		}
		if model.Fingerprint("create_support_task", 1, c1) != model.Fingerprint("create_support_task", 1, c2) {
			t.Fatal("same canonical form, different fingerprint")
		}
	})
}

// reencoder writes a decoded JSON value (UseNumber) back out in a randomly
// different but equal spelling.
type reencoder struct {
	rng         *rand.Rand
	shuffleOnly bool
	buf         bytes.Buffer
}

func (e *reencoder) encode(v any) []byte {
	e.buf.Reset()
	e.value(v)
	return append([]byte(nil), e.buf.Bytes()...)
}

func (e *reencoder) ws() {
	if e.shuffleOnly {
		return
	}
	for n := e.rng.IntN(3); n > 0; n-- {
		e.buf.WriteByte(" \t\n\r"[e.rng.IntN(4)])
	}
}

func (e *reencoder) value(v any) {
	e.ws()
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		e.rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		e.buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				e.buf.WriteByte(',')
			}
			e.ws()
			e.str(k)
			e.ws()
			e.buf.WriteByte(':')
			e.value(x[k])
		}
		e.ws()
		e.buf.WriteByte('}')
	case []any:
		e.buf.WriteByte('[')
		for i, el := range x {
			if i > 0 {
				e.buf.WriteByte(',')
			}
			e.value(el)
		}
		e.ws()
		e.buf.WriteByte(']')
	case string:
		e.str(x)
	case json.Number:
		e.number(x)
	case bool:
		e.buf.WriteString(strconv.FormatBool(x))
	case nil:
		e.buf.WriteString("null")
	default:
		panic("unexpected JSON value")
	}
	e.ws()
}

// str writes s, escaping a random choice of its characters as \uXXXX (with
// surrogate pairs above the BMP) or their short escapes.
func (e *reencoder) str(s string) {
	e.buf.WriteByte('"')
	for _, r := range s {
		mustEscape := r < 0x20 || r == '"' || r == '\\'
		if !mustEscape && (e.shuffleOnly || e.rng.IntN(4) != 0) {
			e.buf.WriteRune(r)
			continue
		}
		switch {
		case r == '"' && e.rng.IntN(2) == 0:
			e.buf.WriteString(`\"`)
		case r == '\\' && e.rng.IntN(2) == 0:
			e.buf.WriteString(`\\`)
		case r == '\n' && e.rng.IntN(2) == 0:
			e.buf.WriteString(`\n`)
		case r == '/' && e.rng.IntN(2) == 0:
			e.buf.WriteString(`\/`)
		case r > 0xffff:
			r -= 0x10000
			e.buf.WriteString(`\u` + e.hex4(0xd800+(r>>10)) + `\u` + e.hex4(0xdc00+(r&0x3ff)))
		default:
			e.buf.WriteString(`\u` + e.hex4(r))
		}
	}
	e.buf.WriteByte('"')
}

func (e *reencoder) hex4(r rune) string {
	h := strconv.FormatInt(int64(r), 16)
	if len(h) < 4 {
		h = strings.Repeat("0", 4-len(h)) + h
	}
	if e.rng.IntN(2) == 0 {
		h = strings.ToUpper(h)
	}
	return h
}

// number writes another spelling of the same IEEE double.
func (e *reencoder) number(n json.Number) {
	if e.shuffleOnly {
		e.buf.WriteString(string(n))
		return
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		e.buf.WriteString(string(n)) // out of range: keep it so it stays refused
		return
	}
	var s string
	switch e.rng.IntN(5) {
	case 0:
		s = string(n)
	case 1:
		s = strconv.FormatFloat(f, 'e', -1, 64)
	case 2:
		s = strings.ToUpper(strconv.FormatFloat(f, 'e', -1, 64))
	case 3:
		s = strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") && len(s) < 300 {
			s += ".0" // integer spelled as a decimal: 1 → 1.0
		}
	default:
		if f == 0 {
			s = "0.0e5"
			break
		}
		// mantissa ×10, exponent −1: 2.5 → 25e-1
		m := strconv.FormatFloat(f, 'e', -1, 64)
		if i := strings.IndexByte(m, 'e'); i > 0 {
			exp, _ := strconv.Atoi(m[i+1:])
			mant := strings.Replace(m[:i], ".", "", 1)
			frac := 0
			if j := strings.IndexByte(m[:i], '.'); j >= 0 {
				frac = i - j - 1
			}
			s = mant + "0e" + strconv.Itoa(exp-frac-1)
		}
	}
	if g, err := strconv.ParseFloat(s, 64); err != nil || g != f {
		s = string(n) // never write a different value
	}
	if f == 0 && strings.HasPrefix(strings.TrimSpace(string(n)), "-") && !strings.HasPrefix(s, "-") {
		s = string(n) // keep -0 as -0 (JCS writes it as 0 either way)
	}
	e.buf.WriteString(s)
}
