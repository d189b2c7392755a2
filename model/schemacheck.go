package model

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// The dialects the schema library validates ("$schema"; none is 2020-12).
const (
	dialect2020   = "https://json-schema.org/draft/2020-12/schema"
	dialect07     = "http://json-schema.org/draft-07/schema#"
	dialect07TLS  = "https://json-schema.org/draft-07/schema#"
	dialectsTaken = `"` + dialect2020 + `" (draft 2020-12, also the default) or "` + dialect07 + `" (draft-07; also over https)`
)

// The keywords the library reads in both drafts, and those it reads only
// in one (it ignores a keyword of the other draft; checkSchema refuses
// it, saying which draft it is from).
var (
	keywordsBoth = []string{"$id", "$schema", "$ref", "$comment", "$defs", "definitions",
		"$anchor", "$dynamicAnchor", "$dynamicRef", "unevaluatedItems", "unevaluatedProperties", "contentSchema",
		"title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
		"type", "enum", "const", "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
		"minLength", "maxLength", "pattern", "format", "contentEncoding", "contentMediaType",
		"items", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains",
		"properties", "patternProperties", "additionalProperties", "propertyNames",
		"required", "minProperties", "maxProperties",
		"allOf", "anyOf", "oneOf", "not", "if", "then", "else"}
	keywords2020 = []string{"$vocabulary", "prefixItems", "dependentRequired", "dependentSchemas"}
	keywords07   = []string{"additionalItems", "dependencies"}
)

// typeNames are the JSON Schema type names.
var typeNames = []string{"string", "number", "integer", "boolean", "object", "array", "null"}

// schemaKeywords lists the keywords a tool's schema may use in its draft
// ("2020-12" or "07"), sorted; any other keyword is refused, but those
// starting "x-" (annotations, as OpenAPI writes them).
func schemaKeywords(draft string) []string {
	out := append([]string(nil), keywordsBoth...)
	if draft == "07" {
		out = append(out, keywords07...)
	} else {
		out = append(out, keywords2020...)
	}
	sort.Strings(out)
	return out
}

// SchemaError is what is wrong with a tool's schema: the keyword
// ("" for the schema as a whole), the JSON pointer of the schema it is in
// ("" for the top level), and why. A config file names the keyword's line.
type SchemaError struct {
	Pointer, Keyword, Msg string
}

func (e *SchemaError) Error() string { return e.Msg }

// schemaErr builds a SchemaError about keyword at path.
func schemaErr(path, keyword, format string, args ...any) error {
	return &SchemaError{Pointer: path, Keyword: keyword, Msg: fmt.Sprintf(format, args...)}
}

// schemaCheck is one walk of a tool's schema.
type schemaCheck struct {
	draft07 bool
	dialect string // the root's $schema
}

// checkSchema refuses what the schema library accepts but would make a
// tool refuse every call, or let through what its schema means to refuse:
// a keyword the library does not read in the schema's draft (a typo is
// ignored), a value no keyword can mean (a type name it does not know, a
// negative length, an empty enum), a dialect it cannot validate (every
// call would fail "cannot validate version"), a schema no arguments can
// satisfy, and a required argument the schema does not let through. The
// error names the keyword, where it is (a JSON pointer) and why.
func checkSchema(root *jsonschema.Schema) error {
	c := &schemaCheck{dialect: root.Schema}
	switch root.Schema {
	case "", dialect2020:
	case dialect07, dialect07TLS:
		c.draft07 = true
	default:
		return schemaErr("", "$schema", "\"$schema\" %q is not a dialect retrysafe validates: use %s, or leave it out", root.Schema, dialectsTaken)
	}
	if err := c.walk(root, "", false, true); err != nil {
		return err
	}
	if never(root) {
		return schemaErr("", "", "no arguments can satisfy the schema (a \"not\": {} or false in it applies to every call): every call would be refused")
	}
	return nil
}

func where(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

// walk checks s (at path) and every schema in it. negated: s is under a
// "not" or an "if" (its required names are a condition). entry: s is the
// schema of a value (the arguments, a property, an item), not a branch
// applied to the same value as its parent.
func (c *schemaCheck) walk(s *jsonschema.Schema, path string, negated, entry bool) error {
	if s == nil {
		return nil // the library reports a nil schema
	}
	if err := c.keywords(s, path); err != nil {
		return err
	}
	if err := c.values(s, path, negated); err != nil {
		return err
	}
	if !negated {
		if err := requiredLetThrough(s, path); err != nil {
			return err
		}
		if entry {
			if err := requiredDeclared(s, path); err != nil {
				return err
			}
		}
	}
	for _, sub := range subschemas(s) {
		// Under "not" or "if", required names are conditions, not
		// what a call must carry.
		neg := negated || sub.key == "not" || sub.key == "if"
		// A definition applies where it is referred to, perhaps as a
		// branch: its required names are held to its own
		// additionalProperties, not to its own list of properties.
		isEntry := !sub.inPlace && sub.key != "$defs" && sub.key != "definitions"
		if err := c.walk(sub.s, path+sub.ptr, neg, isEntry); err != nil {
			return err
		}
	}
	return nil
}

// keywords refuses a keyword the library does not read in the draft.
func (c *schemaCheck) keywords(s *jsonschema.Schema, path string) error {
	at := where(path)
	extra := make([]string, 0, len(s.Extra))
	for k := range s.Extra {
		if !strings.HasPrefix(k, "x-") {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	draft, other, vocabulary := "draft 2020-12", "draft-07", schemaKeywords("2020-12")
	if c.draft07 {
		draft, other, vocabulary = "draft-07", "draft 2020-12", schemaKeywords("07")
	}
	if len(extra) > 0 {
		k := extra[0]
		hint := ""
		if near := nearest(k, vocabulary); near != "" {
			hint = fmt.Sprintf("did you mean %q?", near)
		} else {
			hint = "the keywords of " + draft + " are " + strings.Join(vocabulary, ", ") + "; an annotation of your own may start with x-"
		}
		return schemaErr(path, k, "unknown keyword %q at %s (%s): the schema library ignores a keyword it does not know, so the schema would accept what it means to refuse", k, at, hint)
	}
	wrongDraft := func(keyword, instead string) error {
		kw := `"` + keyword + `"`
		if keyword == "items" {
			kw += " as a list"
		}
		declare := `"$schema": "` + dialect07 + `"`
		if c.draft07 {
			declare = `"$schema": "` + dialect2020 + `" (or none)`
		}
		return schemaErr(path, keyword, "%s at %s is %s's, and %s ignores it: %s, or declare %s with %s at the top level", kw, at, other, draft, instead, other, declare)
	}
	if c.draft07 {
		switch {
		case s.PrefixItems != nil:
			return wrongDraft("prefixItems", `use "items" as a list`)
		case s.DependentRequired != nil:
			return wrongDraft("dependentRequired", `use "dependencies"`)
		case s.DependentSchemas != nil:
			return wrongDraft("dependentSchemas", `use "dependencies"`)
		}
		if s.Ref != "" {
			if kw := besideRef(s); kw != "" {
				return schemaErr(path, kw, "%q beside \"$ref\" at %s: draft-07 ignores every keyword beside a \"$ref\"; put both in an \"allOf\", or use draft 2020-12", kw, at)
			}
		}
	} else {
		switch {
		case s.ItemsArray != nil:
			return wrongDraft("items", `use "prefixItems" (and "items" for the rest)`)
		case s.AdditionalItems != nil:
			return wrongDraft("additionalItems", `use "items" after "prefixItems"`)
		case s.DependencySchemas != nil || s.DependencyStrings != nil:
			return wrongDraft("dependencies", `use "dependentRequired" (a list of names) or "dependentSchemas" (a schema)`)
		}
	}
	if s.Schema != "" && s.Schema != c.dialect {
		if c.dialect == "" && s.Schema == dialect2020 || s.Schema == dialect07 && c.dialect == dialect07TLS || s.Schema == dialect07TLS && c.dialect == dialect07 {
			return nil
		}
		return schemaErr(path, "$schema", "\"$schema\" at %s is %q, not the top level's (%s): the library validates the whole schema in the top level's dialect", at, s.Schema, draft)
	}
	return nil
}

// besideRef names a keyword beside a draft-07 "$ref" that would assert
// something (annotations and definitions may stand there), or "".
func besideRef(s *jsonschema.Schema) string {
	t := reflect.TypeOf(*s)
	v := reflect.ValueOf(*s)
	for i := 0; i < t.NumField(); i++ {
		name := t.Field(i).Name
		if notAsserting[name] || name == "Ref" || v.Field(i).IsZero() {
			continue
		}
		return jsonName(name)
	}
	return ""
}

// notAsserting are the Schema fields that assert nothing about a value.
var notAsserting = map[string]bool{
	"ID": true, "Schema": true, "Comment": true, "Defs": true, "Definitions": true,
	"Anchor": true, "DynamicAnchor": true, "Vocabulary": true,
	"Title": true, "Description": true, "Default": true, "Deprecated": true,
	"ReadOnly": true, "WriteOnly": true, "Examples": true,
	"Format": true, "ContentEncoding": true, "ContentMediaType": true, "ContentSchema": true,
	"Extra": true, "PropertyOrder": true,
}

// jsonName is a Schema field's keyword.
func jsonName(field string) string {
	switch field {
	case "Type", "Types":
		return "type"
	case "Items", "ItemsArray":
		return "items"
	case "DependencySchemas", "DependencyStrings":
		return "dependencies"
	}
	f, _ := reflect.TypeOf(jsonschema.Schema{}).FieldByName(field)
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// values checks each keyword's value for what the library leaves to the
// caller.
func (c *schemaCheck) values(s *jsonschema.Schema, path string, negated bool) error {
	at := where(path)
	if s.Type != "" && !contains(typeNames, s.Type) {
		return schemaErr(path, "type", "\"type\" at %s is %q, not a JSON Schema type (%s): no value would have it", at, s.Type, strings.Join(typeNames, ", "))
	}
	if s.Types != nil {
		if len(s.Types) == 0 {
			return schemaErr(path, "type", "\"type\" at %s is an empty list: no value would have a type in it", at)
		}
		seen := map[string]bool{}
		for _, ty := range s.Types {
			if !contains(typeNames, ty) {
				return schemaErr(path, "type", "\"type\" at %s lists %q, not a JSON Schema type (%s)", at, ty, strings.Join(typeNames, ", "))
			}
			if seen[ty] {
				return schemaErr(path, "type", "\"type\" at %s lists %q twice", at, ty)
			}
			seen[ty] = true
		}
	}
	if s.Enum != nil && len(s.Enum) == 0 {
		return schemaErr(path, "enum", "\"enum\" at %s is empty: no value is one of none (to forbid a property, give it the schema false)", at)
	}
	counts := []struct {
		kw string
		n  *int
	}{{"minLength", s.MinLength}, {"maxLength", s.MaxLength}, {"minItems", s.MinItems}, {"maxItems", s.MaxItems},
		{"minProperties", s.MinProperties}, {"maxProperties", s.MaxProperties}, {"minContains", s.MinContains}, {"maxContains", s.MaxContains}}
	for _, x := range counts {
		if x.n != nil && *x.n < 0 {
			return schemaErr(path, x.kw, "%q at %s is %d: a count of characters, items or properties is a whole number, not negative", x.kw, at, *x.n)
		}
	}
	for i := 0; i+1 < len(counts); i += 2 {
		lo, hi := counts[i], counts[i+1]
		if lo.n != nil && hi.n != nil && *lo.n > *hi.n {
			return schemaErr(path, lo.kw, "%q %d is more than %q %d at %s: no value can satisfy both", lo.kw, *lo.n, hi.kw, *hi.n, at)
		}
	}
	bounds := []struct {
		lo, hi     string
		l, h       *float64
		strictOnly bool
	}{
		{"minimum", "maximum", s.Minimum, s.Maximum, false},
		{"exclusiveMinimum", "maximum", s.ExclusiveMinimum, s.Maximum, true},
		{"minimum", "exclusiveMaximum", s.Minimum, s.ExclusiveMaximum, true},
		{"exclusiveMinimum", "exclusiveMaximum", s.ExclusiveMinimum, s.ExclusiveMaximum, true},
	}
	for _, b := range bounds {
		if b.l != nil && b.h != nil && (*b.l > *b.h || b.strictOnly && *b.l == *b.h) {
			return schemaErr(path, b.lo, "%q %v is more than %q %v at %s: no number can satisfy both", b.lo, *b.l, b.hi, *b.h, at)
		}
	}
	for _, f := range []struct {
		kw string
		v  *float64
	}{{"multipleOf", s.MultipleOf}, {"minimum", s.Minimum}, {"maximum", s.Maximum}, {"exclusiveMinimum", s.ExclusiveMinimum}, {"exclusiveMaximum", s.ExclusiveMaximum}} {
		if f.v != nil && (math.IsNaN(*f.v) || math.IsInf(*f.v, 0)) {
			return schemaErr(path, f.kw, "%q at %s is not a finite number", f.kw, at)
		}
	}
	if s.MultipleOf != nil && *s.MultipleOf <= 0 {
		return schemaErr(path, "multipleOf", "\"multipleOf\" at %s is %v: it must be a number more than 0", at, *s.MultipleOf)
	}
	seen := map[string]bool{}
	for _, r := range s.Required {
		if seen[r] {
			return schemaErr(path, "required", "\"required\" at %s names %q twice", at, r)
		}
		seen[r] = true
		if p := s.Properties[r]; p != nil && never(p) && !negated {
			return schemaErr(path, "required", "required argument %q (\"required\" at %s) accepts no value: its schema at %s/properties/%s is false or \"not\": {}, so every call would be refused", r, at, path, escPointer(r))
		}
	}
	return nil
}

// requiredLetThrough refuses a required name that the same schema's
// "additionalProperties": false forbids: no object has it and passes.
func requiredLetThrough(s *jsonschema.Schema, path string) error {
	at := where(path)
	if s.AdditionalProperties == nil || !never(s.AdditionalProperties) {
		return nil
	}
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; ok || matchesPattern(s, r) {
			continue
		}
		return schemaErr(path, "required", "\"required\" at %s names %q, which its \"properties\" do not declare and its \"additionalProperties\": false forbids: no call could satisfy both (declare it in \"properties\")", at, r)
	}
	return nil
}

func matchesPattern(s *jsonschema.Schema, name string) bool {
	for p := range s.PatternProperties {
		if re, err := regexp.Compile(p); err == nil && re.MatchString(name) {
			return true
		}
	}
	return false
}

// requiredDeclared refuses a required name the schema of a value does not
// declare where it lists its properties and says nothing about others: the
// gateway refuses an argument the tool does not declare (gateway/args.go,
// with the same reading of composition), so no call over HTTP or MCP could
// carry it. The required names of its branches are held to the same list.
func requiredDeclared(entry *jsonschema.Schema, path string) error {
	if entry.Properties == nil {
		return nil // free-form: any property is the tool's
	}
	d := &declaredProps{names: map[string]bool{}}
	d.add(entry, 0)
	if d.open {
		return nil
	}
	var check func(s *jsonschema.Schema, at string, depth int) error
	check = func(s *jsonschema.Schema, at string, depth int) error {
		if s == nil || depth > 16 {
			return nil
		}
		for _, r := range s.Required {
			if !d.names[r] {
				hint := ""
				if near := nearest(r, sortedKeys(d.names)); near != "" {
					hint = fmt.Sprintf(" (did you mean %q?)", near)
				}
				return schemaErr(at, "required", "\"required\" at %s names %q, which the schema does not declare in \"properties\"%s: the gateway refuses an argument the tool does not declare, so no call over HTTP or MCP could carry it (declare it, or say what other properties may be with \"additionalProperties\")", where(at), r, hint)
			}
		}
		for _, sub := range subschemas(s) {
			if sub.inPlace && sub.key != "not" && sub.key != "if" {
				if err := check(sub.s, at+sub.ptr, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return check(entry, path, 0)
}

// declaredProps is what a value's schema declares with its composition
// (allOf, anyOf, oneOf, if/then/else, dependentSchemas), as the gateway
// reads it; open when the schema says itself what other properties may be,
// or when it could not be followed (a $ref: left to the schema).
type declaredProps struct {
	names map[string]bool
	open  bool
}

func (d *declaredProps) add(s *jsonschema.Schema, depth int) {
	if s == nil {
		return
	}
	if depth > 16 || s.AdditionalProperties != nil || s.PatternProperties != nil || s.UnevaluatedProperties != nil || s.Ref != "" || s.DynamicRef != "" {
		d.open = true
		return
	}
	if depth > 0 && always(s) {
		d.open = true // a branch true takes anything
		return
	}
	for name := range s.Properties {
		d.names[name] = true
	}
	for _, sub := range subschemas(s) {
		if sub.inPlace && sub.key != "not" {
			d.add(sub.s, depth+1)
		}
	}
}

// always: s asserts nothing (true, {}, or annotations only).
func always(s *jsonschema.Schema) bool {
	return s != nil && s.Ref == "" && s.DynamicRef == "" && besideRef(s) == ""
}

// never: no value satisfies s (false, "not": {}, an empty enum, or a
// branch of allOf, or every branch of anyOf or oneOf, that is so).
func never(s *jsonschema.Schema) bool {
	if s == nil || s.Ref != "" || s.DynamicRef != "" {
		return false
	}
	if s.Enum != nil && len(s.Enum) == 0 || s.Not != nil && always(s.Not) {
		return true
	}
	for _, b := range s.AllOf {
		if never(b) {
			return true
		}
	}
	for _, list := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf} {
		if len(list) == 0 {
			continue
		}
		all := true
		for _, b := range list {
			all = all && never(b)
		}
		if all {
			return true
		}
	}
	return false
}

// subschema is one schema inside another: its keyword, its JSON pointer
// from the parent, and whether it applies to the parent's own value.
type subschema struct {
	key, ptr string
	s        *jsonschema.Schema
	inPlace  bool
}

// subschemas lists the schemas directly inside s, in a stable order.
func subschemas(s *jsonschema.Schema) []subschema {
	var out []subschema
	one := func(key string, sub *jsonschema.Schema, inPlace bool) {
		if sub != nil {
			out = append(out, subschema{key, "/" + key, sub, inPlace})
		}
	}
	list := func(key string, l []*jsonschema.Schema, inPlace bool) {
		for i, sub := range l {
			if sub != nil {
				out = append(out, subschema{key, fmt.Sprintf("/%s/%d", key, i), sub, inPlace})
			}
		}
	}
	byName := func(key string, m map[string]*jsonschema.Schema, inPlace bool) {
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if m[n] != nil {
				out = append(out, subschema{key, "/" + key + "/" + escPointer(n), m[n], inPlace})
			}
		}
	}
	byName("properties", s.Properties, false)
	byName("patternProperties", s.PatternProperties, false)
	one("additionalProperties", s.AdditionalProperties, false)
	one("unevaluatedProperties", s.UnevaluatedProperties, false)
	one("propertyNames", s.PropertyNames, false)
	list("prefixItems", s.PrefixItems, false)
	one("items", s.Items, false)
	list("items", s.ItemsArray, false)
	one("additionalItems", s.AdditionalItems, false)
	one("unevaluatedItems", s.UnevaluatedItems, false)
	one("contains", s.Contains, false)
	one("contentSchema", s.ContentSchema, false)
	list("allOf", s.AllOf, true)
	list("anyOf", s.AnyOf, true)
	list("oneOf", s.OneOf, true)
	one("not", s.Not, true)
	one("if", s.If, true)
	one("then", s.Then, true)
	one("else", s.Else, true)
	byName("dependentSchemas", s.DependentSchemas, true)
	byName("dependencies", s.DependencySchemas, true)
	byName("$defs", s.Defs, false)
	byName("definitions", s.Definitions, false)
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func escPointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// nearest is the keyword a misspelling most likely means (case aside, at
// most two edits away; never shorter than 2 letters), or "".
func nearest(word string, vocabulary []string) string {
	best, bestD := "", 3
	w := strings.ToLower(strings.TrimPrefix(word, "$"))
	for _, k := range vocabulary {
		d := editDistance(w, strings.ToLower(strings.TrimPrefix(k, "$")))
		if d < bestD && len(w) > d+1 {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance counts the insertions, deletions, substitutions and swaps
// of two neighbours that make a into b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
