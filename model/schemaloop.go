package model

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaLoop finds a $ref cycle that validation would follow forever: a
// chain of references (through allOf, anyOf, oneOf, not, if/then/else,
// dependentSchemas) that comes back to a schema without stepping into a
// property or item of the value. The validator recurses on such a chain
// until the stack overflows, which kills the process — a gateway with
// every request in flight. A recursive schema that steps into the value
// ("items": {"$ref": "#"}) ends with the value and is fine. It returns
// the chain, or "" when there is none.
func schemaLoop(s *jsonschema.Schema) string {
	raw, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	var root any
	if err := json.Unmarshal(raw, &root); err != nil {
		return ""
	}
	g := &schemaGraph{root: root, nodes: map[string]any{}, anchors: map[string]string{}}
	g.collect(root, "")
	ptrs := make([]string, 0, len(g.nodes))
	for p := range g.nodes {
		ptrs = append(ptrs, p)
	}
	sort.Strings(ptrs)
	state := map[string]int{} // 0 unseen, 1 on the path, 2 done
	var path []string
	var visit func(p string) string
	visit = func(p string) string {
		switch state[p] {
		case 1:
			i := len(path) - 1
			for i > 0 && path[i] != p {
				i--
			}
			return strings.Join(append(append([]string(nil), path[i:]...), p), " → ")
		case 2:
			return ""
		}
		state[p] = 1
		path = append(path, p)
		for _, next := range g.sameValue(p) {
			if loop := visit(next); loop != "" {
				return loop
			}
		}
		path = path[:len(path)-1]
		state[p] = 2
		return ""
	}
	for _, p := range ptrs {
		if loop := visit(p); loop != "" {
			return loop
		}
	}
	return ""
}

type schemaGraph struct {
	root    any
	nodes   map[string]any    // every subschema by its JSON pointer ("#/...")
	anchors map[string]string // $anchor and $dynamicAnchor names → pointer
}

func esc(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// Keywords whose value is one schema, a map of schemas, or a list of them.
var (
	oneSchema  = []string{"additionalProperties", "unevaluatedProperties", "propertyNames", "items", "additionalItems", "unevaluatedItems", "contains", "not", "if", "then", "else", "contentSchema"}
	mapSchemas = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
	listSchema = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
)

func (g *schemaGraph) collect(v any, ptr string) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	g.nodes["#"+ptr] = m
	for _, k := range []string{"$anchor", "$dynamicAnchor"} {
		if a, ok := m[k].(string); ok {
			g.anchors[a] = "#" + ptr
		}
	}
	for _, k := range oneSchema {
		g.collect(m[k], ptr+"/"+esc(k))
	}
	for _, k := range mapSchemas {
		if sub, ok := m[k].(map[string]any); ok {
			for name, s := range sub {
				g.collect(s, ptr+"/"+esc(k)+"/"+esc(name))
			}
		}
	}
	for _, k := range listSchema {
		if l, ok := m[k].([]any); ok {
			for i, s := range l {
				g.collect(s, fmt.Sprintf("%s/%s/%d", ptr, esc(k), i))
			}
		}
	}
}

// sameValue lists the schemas that validate the same value as the schema
// at p: its references and in-place applicators.
func (g *schemaGraph) sameValue(p string) []string {
	m, _ := g.nodes[p].(map[string]any)
	var out []string
	for _, k := range []string{"$ref", "$dynamicRef", "$recursiveRef"} {
		if ref, ok := m[k].(string); ok {
			if to := g.resolve(ref); to != "" {
				out = append(out, to)
			}
		}
	}
	for _, k := range []string{"not", "if", "then", "else"} {
		if _, ok := m[k].(map[string]any); ok {
			out = append(out, p+"/"+esc(k))
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if l, ok := m[k].([]any); ok {
			for i := range l {
				out = append(out, fmt.Sprintf("%s/%s/%d", p, k, i))
			}
		}
	}
	for _, k := range []string{"dependentSchemas", "dependencies"} {
		if sub, ok := m[k].(map[string]any); ok {
			for name, s := range sub {
				if _, ok := s.(map[string]any); ok {
					out = append(out, p+"/"+esc(k)+"/"+esc(name))
				}
			}
		}
	}
	return out
}

// resolve turns a local reference ("#", "#/json/pointer", "#anchor") into
// a node's pointer; any other reference is not followed here.
func (g *schemaGraph) resolve(ref string) string {
	if !strings.HasPrefix(ref, "#") {
		return ""
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil {
		return ""
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return g.anchors[frag]
	}
	if _, ok := g.nodes["#"+frag]; ok {
		return "#" + frag
	}
	return ""
}
