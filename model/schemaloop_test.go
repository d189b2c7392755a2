package model

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// A schema whose references come back to themselves without stepping into
// the value would make the validator recurse until the stack overflows —
// a fatal error no recover catches, so one call would kill a gateway. Such
// a tool is refused when the registry is built (a config error); recursive
// schemas that step into the value are accepted and validate.
func TestASchemaRefLoopIsRefusedAndRecursionIsNot(t *testing.T) {
	cases := []struct {
		name, schema string
		loop         string // "" = accepted
		valid        string // accepted: arguments that validate
	}{
		{"two $defs refer to each other", `{"type":"object","$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`, "#/$defs/a → #/$defs/b → #/$defs/a", ""},
		{"a property refers to itself", `{"type":"object","properties":{"n":{"$ref":"#/properties/n"}}}`, "#/properties/n → #/properties/n", ""},
		{"the root through allOf", `{"type":"object","allOf":[{"$ref":"#"}]}`, "# → #/allOf/0 → #", ""},
		{"through not, if and an anchor", `{"type":"object","properties":{"x":{"$anchor":"x","not":{"if":{"$ref":"#x"}}}}}`, "#/properties/x → #/properties/x/not → #/properties/x/not/if → #/properties/x", ""},
		{"a percent-escaped pointer", `{"type":"object","$defs":{"a b":{"anyOf":[{"$ref":"#/$defs/a%20b"}]}}}`, "#/$defs/a b", ""},
		{"through dependentSchemas", `{"type":"object","dependentSchemas":{"x":{"$ref":"#"}}}`, "# → #/dependentSchemas/x → #", ""},
		{"a tree: items step into the value", `{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}}}`, "", `{"name":"a","children":[{"name":"b","children":[{"name":"c"}]}]}`},
		{"a linked list through $defs and properties", `{"type":"object","$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}}}`, "", `{"next":{"next":{}}}`},
		{"two refs to one definition", `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"},"b":{"allOf":[{"$ref":"#/$defs/s"}]}},"$defs":{"s":{"type":"string"}}}`, "", `{"a":"x","b":"y"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s jsonschema.Schema
			if err := json.Unmarshal([]byte(c.schema), &s); err != nil {
				t.Fatal(err)
			}
			r, err := NewRegistry(Tool{Name: "t", Schema: &s, Effect: Effect{Kind: EffectLocal, Table: TableLocalEffects}})
			if c.loop != "" {
				if err == nil || !strings.Contains(err.Error(), "$ref loop") || !strings.Contains(err.Error(), c.loop) || CodeOf(err) != CodeInvalid {
					t.Fatalf("NewRegistry: %v; want an invalid error naming the loop %s", err, c.loop)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewRegistry: %v", err)
			}
			tool, _ := r.Lookup("t")
			if err := tool.checkArgs([]byte(c.valid)); err != nil {
				t.Errorf("%s: %v", c.valid, err)
			}
		})
	}
}
