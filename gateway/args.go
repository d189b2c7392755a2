package gateway

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// unknownArgument finds an argument the tool does not declare: a property
// of an object (the arguments, or an object inside them) that its schema
// lists no "properties" entry for, where the schema does not itself say
// what to do with others ("additionalProperties" or "patternProperties"
// present: the schema decides, and the call validates it). An agent that
// invents an argument ("priority": "high") would otherwise be told its
// call succeeded while the argument did nothing. It returns the argument's
// dotted path and the names the object takes; "" if there is none, or if
// args are not JSON (the call refuses those in its own words).
func unknownArgument(schema map[string]any, args []byte) (path string, known []string) {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", nil
	}
	return unknownIn(schema, v, "")
}

func unknownIn(schema map[string]any, v any, at string) (string, []string) {
	switch v := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		_, extra := schema["additionalProperties"]
		_, patterns := schema["patternProperties"]
		names := make([]string, 0, len(v))
		for name := range v {
			names = append(names, name)
		}
		sort.Strings(names) // the first in a stable order
		for _, name := range names {
			sub, declared := props[name].(map[string]any)
			if !declared {
				if props != nil && !extra && !patterns {
					return join(at, name), sortedKeys(props)
				}
				continue
			}
			if p, known := unknownIn(sub, v[name], join(at, name)); p != "" {
				return p, known
			}
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		if items == nil {
			return "", nil
		}
		for i, e := range v {
			if p, known := unknownIn(items, e, at+"["+strconv.Itoa(i)+"]"); p != "" {
				return p, known
			}
		}
	}
	return "", nil
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

func sortedKeys(m map[string]any) []string {
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
