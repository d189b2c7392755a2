package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// schemaWords words err, the schema library's refusal of args, for a
// person: the argument (a dotted path; [] for an item of an array) and the
// rule it breaks, in place of the library's chain of schema pointers and
// keyword jargon ("validating root: validating /properties/invoice:
// pattern: …"). The same words reach the CLI, HTTP and MCP. inst is the
// arguments as the library checked them: a refused object or array is
// shown from it, as JSON (the library prints Go's map[a:1]).
func (t *Tool) schemaWords(err error, inst any) string {
	var ptrs []string
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			break
		}
		ptrs = append(ptrs, strings.TrimPrefix(strings.TrimSuffix(err.Error(), ": "+inner.Error()), "validating "))
		err = inner
	}
	path := argumentPath(ptrs)
	words, field := t.keywordWords(err.Error(), ptrs, inst)
	if field != "" {
		if path == "" {
			return words + " argument" + field
		}
		return "argument " + path + ": " + words + " field" + field
	}
	if path == "" {
		return "arguments: " + words
	}
	return "argument " + path + ": " + words
}

var (
	reType      = regexp.MustCompile(`(?s)^type: .* has type "(\w+)", want (?:one of )?"([^"]+)"$`)
	reEnum      = regexp.MustCompile(`(?s)^enum: (.*) does not equal any of: `)
	reConst     = regexp.MustCompile(`(?s)^const: (.*) does not equal `)
	reNumber    = regexp.MustCompile(`(?s)^(minimum|maximum|exclusiveMinimum|exclusiveMaximum|multipleOf): (\S+) is .* (\S+)$`)
	reLength    = regexp.MustCompile(`(?s)^(minLength|maxLength): ("(?:[^"\\]|\\.)*") contains (\d+) Unicode code points, \w+ than (\d+)$`)
	rePattern   = regexp.MustCompile(`(?s)^pattern: ("(?:[^"\\]|\\.)*") does not match regular expression ("(?:[^"\\]|\\.)*")$`)
	reItems     = regexp.MustCompile(`^(minItems|maxItems): array length (\d+) is \w+ than (\d+)$`)
	reProps     = regexp.MustCompile(`^(minProperties|maxProperties): object has (\d+) properties, \w+ than (\d+)$`)
	reUnique    = regexp.MustCompile(`^uniqueItems: array items (\d+) and (\d+) are equal$`)
	reRequired  = regexp.MustCompile(`^required: missing properties: `)
	reDependent = regexp.MustCompile(`^dependentRequired\[("(?:[^"\\]|\\.)*")\]: missing properties `)
	reExtra     = regexp.MustCompile(`^unexpected additional properties `)
	reQuoted    = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
)

// keywordWords words one keyword's refusal, msg, the library's innermost
// error; ptrs are the schemas it was in. A refusal about fields of an
// object (missing, unknown) returns them as field (" \"a\"", "s \"a\",
// \"b\""), for schemaWords to say argument or field.
func (t *Tool) keywordWords(msg string, ptrs []string, inst any) (words, field string) {
	if m := reType.FindStringSubmatch(msg); m != nil {
		want := strings.Split(m[2], ", ")
		for i, w := range want {
			want[i] = article(w)
		}
		got := m[1]
		if got == "integer" {
			got = "number"
		}
		return fmt.Sprintf("must be %s, got %s", strings.Join(want, " or "), article(got)), ""
	}
	if m := reEnum.FindStringSubmatch(msg); m != nil {
		if allowed, ok := t.schemaAt(ptrs)["enum"].([]any); ok {
			return fmt.Sprintf("%s is not one of %s", refusedValue(m[1], allowed, instanceAt(ptrs, inst)), jsonList(allowed)), ""
		}
		return clip(strings.TrimPrefix(msg, "enum: "), 200), ""
	}
	if m := reConst.FindStringSubmatch(msg); m != nil {
		if want, ok := t.schemaAt(ptrs)["const"]; ok {
			return fmt.Sprintf("%s must be %s", refusedValue(m[1], []any{want}, instanceAt(ptrs, inst)), jsonList([]any{want})), ""
		}
		return clip(strings.TrimPrefix(msg, "const: "), 200), ""
	}
	if m := reNumber.FindStringSubmatch(msg); m != nil {
		got, limit := ratWords(m[2]), ratWords(m[3])
		if v, ok := t.schemaAt(ptrs)[m[1]]; ok {
			// As the schema writes it: the library prints it with six
			// decimals (0.0000001 read as 0).
			if b, err := json.Marshal(v); err == nil {
				limit = clip(string(b), 60)
			}
		}
		switch m[1] {
		case "minimum":
			return fmt.Sprintf("%s is less than the minimum %s", got, limit), ""
		case "maximum":
			return fmt.Sprintf("%s is more than the maximum %s", got, limit), ""
		case "exclusiveMinimum":
			return fmt.Sprintf("%s must be more than %s", got, limit), ""
		case "exclusiveMaximum":
			return fmt.Sprintf("%s must be less than %s", got, limit), ""
		}
		return fmt.Sprintf("%s is not a multiple of %s", got, limit), ""
	}
	if m := reLength.FindStringSubmatch(msg); m != nil {
		bound := "at least"
		if m[1] == "maxLength" {
			bound = "at most"
		}
		n, _ := strconv.Atoi(m[3])
		return fmt.Sprintf("%s is %s; %s %s", clipQuoted(m[2]), counted(n, "character"), bound, m[4]), ""
	}
	if m := rePattern.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s does not match the pattern %s", clipQuoted(m[1]), patternWords(m[2])), ""
	}
	if m := reItems.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[2])
		return fmt.Sprintf("%s; %s %s", counted(n, "item"), bound(m[1]), m[3]), ""
	}
	if m := reProps.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[2])
		return fmt.Sprintf("%s; %s %s", counted(n, "field"), bound(m[1]), m[3]), ""
	}
	if m := reUnique.FindStringSubmatch(msg); m != nil {
		i, _ := strconv.Atoi(m[1])
		j, _ := strconv.Atoi(m[2])
		if i > j {
			i, j = j, i
		}
		return fmt.Sprintf("items %d and %d are the same; each must differ", i, j), ""
	}
	if reRequired.MatchString(msg) {
		return "missing required", names(msg)
	}
	if m := reDependent.FindStringSubmatch(msg); m != nil {
		return "with " + m[1] + " also give the required", names(msg[len(m[0]):])
	}
	if reExtra.MatchString(msg) {
		return "unknown", names(msg)
	}
	switch kw, _, _ := strings.Cut(msg, ":"); kw {
	case "anyOf", "oneOf":
		if strings.Contains(msg, "validated against both") {
			return "matches more than one of the choices the schema allows (oneOf); it must match exactly one", ""
		}
		return fmt.Sprintf("matches none of the choices the schema allows (%s)", kw), ""
	case "not":
		return "matches what the schema forbids (not)", ""
	case "contains", "minContains", "maxContains":
		return fmt.Sprintf("does not hold the items the schema asks for (%s)", kw), ""
	}
	return clip(msg, 300), ""
}

// counted is n things, one of them singular: "1 character", "7 characters".
func counted(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// patternWords is a pattern the library printed quoted: as the schema
// writes it, or — when it holds a line break, a tab or another character
// that is not printable (a terminal would act on it, and the refusal's one
// line would fold it to a space) — quoted, each such character escaped.
func patternWords(quoted string) string {
	re, err := strconv.Unquote(quoted)
	if err != nil {
		return quoted
	}
	for _, r := range re {
		if !unicode.IsPrint(r) {
			return strconv.Quote(re)
		}
	}
	return re
}

func bound(keyword string) string {
	if strings.HasPrefix(keyword, "min") {
		return "at least"
	}
	return "at most"
}

// names are the quoted names in msg, as " \"a\"" or "s \"a\", \"b\"".
func names(msg string) string {
	q := reQuoted.FindAllString(msg, -1)
	sort.Strings(q)
	if len(q) == 1 {
		return " " + q[0]
	}
	return "s " + strings.Join(q, ", ")
}

// ratWords is a number the library printed as a fraction ("9/1") or with
// six decimals ("4.000000"), as a person writes it.
func ratWords(s string) string {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return s
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// refusedValue is a value an enum or const refused (clipValue), quoted
// when its unquoted text is one of the allowed values': then it is a
// string where the schema allows that number, boolean or null ("1" for
// 1), and "1 is not one of 1, 2" would contradict itself. An object or
// array — printed by the library in Go's syntax (map[a:1], [1 2]) — is
// the one of at, the values where it was checked, that prints as s, as
// JSON; when none or several different ones do, its kind is said.
func refusedValue(s string, allowed []any, at []any) string {
	if strings.HasPrefix(s, "map[") || strings.HasPrefix(s, "[") {
		if j, ok := printedAs(s, at); ok {
			return clipQuoted(j)
		}
		if strings.HasPrefix(s, "map[") {
			return "the object given"
		}
	}
	v := clipValue(s)
	for _, a := range allowed {
		if b, err := json.Marshal(a); err == nil && string(b) == v {
			return clipQuoted(strconv.Quote(s))
		}
	}
	return v
}

// printedAs is the JSON of the one value of at that the library would
// print as s (%v); ok false when none does, or values of different JSON do.
func printedAs(s string, at []any) (string, bool) {
	found := ""
	for _, v := range at {
		if fmt.Sprint(v) != s {
			continue
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(v) != nil {
			continue
		}
		j := strings.TrimSuffix(b.String(), "\n")
		if found != "" && found != j {
			return "", false
		}
		found = j
	}
	return found, found != ""
}

// pointerSegments is what each of the schemas ptrs (outermost first) adds
// to the path of the one before it, split at its slashes: the whole
// pointer when it does not extend the one before (where a $ref led), none
// for a pointer that is not one.
func pointerSegments(ptrs []string) [][]string {
	var out [][]string
	prev := ""
	for _, p := range ptrs {
		if !strings.HasPrefix(p, "/") {
			prev = ""
			continue
		}
		rest := p
		if prev != "" && strings.HasPrefix(p, prev+"/") {
			rest = p[len(prev):]
		}
		prev = p
		out = append(out, strings.Split(rest, "/")[1:])
	}
	return out
}

// instanceAt is every value of inst (the arguments) the schema the last of
// ptrs points at may have checked, along argumentPath's rule: a property
// by its name, every item of an array (the pointer names no index), every
// field of an object where the schema names none.
func instanceAt(ptrs []string, inst any) []any {
	at := []any{inst}
	for _, segs := range pointerSegments(ptrs) {
		for i := 0; i < len(segs); i++ {
			var next []any
			switch segs[i] {
			case "properties":
				if i+1 >= len(segs) {
					continue
				}
				name := strings.ReplaceAll(strings.ReplaceAll(segs[i+1], "~1", "/"), "~0", "~")
				i++
				for _, v := range at {
					if m, ok := v.(map[string]any); ok {
						if x, ok := m[name]; ok {
							next = append(next, x)
						}
					}
				}
			case "items", "additionalItems", "unevaluatedItems", "contains", "prefixItems":
				if segs[i] == "prefixItems" {
					i++
				}
				for _, v := range at {
					if a, ok := v.([]any); ok {
						next = append(next, a...)
					}
				}
			case "additionalProperties", "unevaluatedProperties", "patternProperties":
				if segs[i] == "patternProperties" {
					i++
				}
				for _, v := range at {
					if m, ok := v.(map[string]any); ok {
						for _, x := range m {
							next = append(next, x)
						}
					}
				}
			case "$defs", "definitions", "dependentSchemas", "dependencies":
				i++
				continue
			default:
				continue
			}
			at = next
		}
	}
	return at
}

// clipValue is a value the library printed with %v, a string unquoted:
// quoted if it is not a JSON number, boolean or null, and clipped.
func clipValue(s string) string {
	if json.Valid([]byte(s)) && !strings.HasPrefix(s, "[") && !strings.HasPrefix(s, "{") && !strings.HasPrefix(s, `"`) {
		return s
	}
	return clipQuoted(strconv.Quote(s))
}

// clipQuoted keeps a quoted value short: an argument may be long.
func clipQuoted(q string) string {
	if r := []rune(q); len(r) > 60 {
		return string(r[:58]) + `…"`
	}
	return q
}

// jsonList is values as JSON, comma separated.
func jsonList(values []any) string {
	out := make([]string, len(values))
	for i, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(fmt.Sprint(v))
		}
		out[i] = clipQuoted(string(b))
	}
	return strings.Join(out, ", ")
}

// schemaAt is the schema the last of ptrs points at, as JSON, or nil.
func (t *Tool) schemaAt(ptrs []string) map[string]any {
	b, err := json.Marshal(t.Schema)
	if err != nil {
		return nil
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	if len(ptrs) > 0 {
		p := ptrs[len(ptrs)-1]
		if !strings.HasPrefix(p, "/") {
			if p != "root" {
				return nil
			}
			p = ""
		}
		for _, seg := range strings.Split(p, "/")[1:] {
			seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
			switch x := v.(type) {
			case map[string]any:
				v = x[seg]
			case []any:
				i, err := strconv.Atoi(seg)
				if err != nil || i < 0 || i >= len(x) {
					return nil
				}
				v = x[i]
			default:
				return nil
			}
		}
	}
	m, _ := v.(map[string]any)
	return m
}

var plainName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// argumentPath is the argument the schemas ptrs (outermost first) were
// checking: "invoice", "address.city", "tags[]"; "" for the arguments as
// a whole. A pointer that does not extend the one before it is where a
// $ref led: its own path into $defs names no argument.
func argumentPath(ptrs []string) string {
	var b strings.Builder
	for _, segs := range pointerSegments(ptrs) {
		for i := 0; i < len(segs); i++ {
			switch segs[i] {
			case "properties":
				if i+1 < len(segs) {
					name := strings.ReplaceAll(strings.ReplaceAll(segs[i+1], "~1", "/"), "~0", "~")
					if !plainName.MatchString(name) {
						name = strconv.Quote(name)
					}
					if b.Len() > 0 {
						b.WriteByte('.')
					}
					b.WriteString(name)
					i++
				}
			case "items", "additionalItems", "unevaluatedItems", "contains":
				b.WriteString("[]")
			case "prefixItems":
				if i+1 < len(segs) {
					b.WriteString("[" + segs[i+1] + "]")
					i++
				}
			case "additionalProperties", "unevaluatedProperties":
				// The schema's pointer names no field: say which kind.
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString("(a field the schema does not name)")
			case "patternProperties":
				if i+1 < len(segs) {
					if b.Len() > 0 {
						b.WriteByte('.')
					}
					pat := strings.ReplaceAll(strings.ReplaceAll(segs[i+1], "~1", "/"), "~0", "~")
					b.WriteString("(a field matching " + strconv.Quote(pat) + ")")
					i++
				}
			case "$defs", "definitions", "dependentSchemas", "dependencies":
				i++
			}
		}
	}
	return b.String()
}
