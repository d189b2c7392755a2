package gateway

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/retrysafe/retrysafe/model"
)

// argsChecked remembers, by tool and exact bytes, arguments in which
// unknownArgument found nothing: its answer is a function of exactly those
// (the tools' schemas are read once, at New), and a retry sends the same
// bytes. Only passing arguments up to 2 KiB are kept; past 4096 entries it
// starts over.
type argsChecked struct {
	mu sync.Mutex
	m  map[[2]string]struct{}
}

func (c *argsChecked) unknownArgument(tool string, schema map[string]any, args []byte) (string, []string) {
	if len(args) > 2<<10 {
		return unknownArgument(schema, args)
	}
	k := [2]string{tool, string(args)}
	c.mu.Lock()
	_, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return "", nil
	}
	path, known := unknownArgument(schema, args)
	if path == "" {
		c.mu.Lock()
		if c.m == nil || len(c.m) >= 4096 {
			c.m = make(map[[2]string]struct{}, 256)
		}
		c.m[k] = struct{}{}
		c.mu.Unlock()
	}
	return path, known
}

// unknownArgument finds an argument the tool does not declare: a property
// of an object (the arguments, or an object inside them) that its schema
// lists no "properties" entry for, where the schema does not itself say
// what to do with others ("additionalProperties" or "patternProperties"
// present: the schema decides, and the call validates it). An agent that
// invents an argument ("priority": "high") would otherwise be told its
// call succeeded while the argument did nothing. It returns the argument's
// dotted path and the names the object takes; "" if there is none, or if
// args are not JSON, or nest deeper than model.MaxArgsDepth (the call
// refuses those in its own words; followed level by level, 60 KB nested
// 10,000 deep would cost this check the square of the depth).
func unknownArgument(schema map[string]any, args []byte) (path string, known []string) {
	if model.ArgsDepth(args) > model.MaxArgsDepth {
		return "", nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", nil
	}
	return unknownIn(schema, schema, v, "")
}

// An object's declared arguments are its schema's "properties" and those
// its composition keywords declare (allOf, anyOf, oneOf, if/then/else,
// dependentSchemas, a $ref into the same document): a property a branch
// declares is the tool's, whichever branch the call matches — the call's
// own validation decides that.
var composing = []string{"allOf", "anyOf", "oneOf", "if", "then", "else", "dependentSchemas", "$ref", "$dynamicRef"}

// deciding are the keywords by which a schema says itself what other
// properties may be: with any of them the schema decides, not this check.
var deciding = []string{"additionalProperties", "patternProperties", "unevaluatedProperties"}

// declared is what a schema (with its composition) declares for an object:
// each property's schemas, whether any properties are listed at all, and
// whether the schema decides about other properties itself (or could not
// be followed: then it is left to decide).
type declared struct {
	props  map[string][]map[string]any
	listed bool
	open   bool
}

func declare(root, schema map[string]any, d *declared, depth int) {
	if depth > 16 {
		d.open = true // a $ref cycle or a schema too deep to follow
		return
	}
	for _, k := range deciding {
		if _, ok := schema[k]; ok {
			d.open = true
		}
	}
	if props, ok := schema["properties"].(map[string]any); ok {
		// Only the object's own list makes it closed: a schema without
		// "properties" is free-form, whatever its branches list.
		d.listed = d.listed || depth == 0
		for name, sub := range props {
			m, _ := sub.(map[string]any)
			d.props[name] = append(d.props[name], m)
		}
	}
	sub := func(v any) {
		switch v := v.(type) {
		case map[string]any:
			declare(root, v, d, depth+1)
		case bool:
			if v {
				d.open = true // a branch "true" takes anything
			}
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := schema[k].([]any); ok {
			for _, b := range list {
				sub(b)
			}
		}
	}
	for _, k := range []string{"if", "then", "else"} {
		if b, ok := schema[k]; ok {
			sub(b)
		}
	}
	if deps, ok := schema["dependentSchemas"].(map[string]any); ok {
		for _, b := range deps {
			sub(b)
		}
	}
	if _, ok := schema["$dynamicRef"]; ok {
		d.open = true
	}
	if ref, ok := schema["$ref"].(string); ok {
		if target, ok := resolveRef(root, ref); ok {
			declare(root, target, d, depth+1)
		} else {
			d.open = true
		}
	}
}

// resolveRef follows a reference within the schema's own document ("#",
// "#/$defs/x", "#/definitions/x", any JSON pointer); anything else cannot
// be followed here.
func resolveRef(root map[string]any, ref string) (map[string]any, bool) {
	if ref == "#" {
		return root, true
	}
	ptr, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	var cur any = root
	for _, tok := range strings.Split(ptr, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	m, ok := cur.(map[string]any)
	return m, ok
}

func unknownIn(root, schema map[string]any, v any, at string) (string, []string) {
	switch v := v.(type) {
	case map[string]any:
		d := declared{props: map[string][]map[string]any{}}
		declare(root, schema, &d, 0)
		names := make([]string, 0, len(v))
		for name := range v {
			names = append(names, name)
		}
		sort.Strings(names) // the first in a stable order
		for _, name := range names {
			subs, ok := d.props[name]
			if !ok {
				if d.listed && !d.open {
					return join(at, name), sortedKeys(d.props)
				}
				continue
			}
			if len(subs) != 1 || subs[0] == nil {
				continue // declared in several places: the call's validation decides
			}
			if p, known := unknownIn(root, subs[0], v[name], join(at, name)); p != "" {
				return p, known
			}
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		if items == nil {
			return "", nil
		}
		for i, e := range v {
			if p, known := unknownIn(root, items, e, at+"["+strconv.Itoa(i)+"]"); p != "" {
				return p, known
			}
		}
	}
	return "", nil
}

// closedByDefault reports whether the gateway's check treats schema's
// top level as taking only its "properties" — where an MCP input schema
// may say "additionalProperties": false without refusing a valid call.
func closedByDefault(schema map[string]any) bool {
	if _, ok := schema["properties"]; !ok {
		return false
	}
	for _, k := range append(append([]string{}, deciding...), composing...) {
		if _, ok := schema[k]; ok {
			return false
		}
	}
	return true
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// unknownArgumentMessage says which argument is not the tool's and which
// it takes.
func unknownArgumentMessage(tool, path string, known []string) string {
	takes := "no arguments"
	if len(known) > 0 {
		takes = strings.Join(known, ", ")
	}
	return tool + ": unknown argument " + strconv.Quote(path) + " (it takes " + takes + ")"
}
