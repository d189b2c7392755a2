package gateway

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUnknownArgumentFollowsTheSchema(t *testing.T) {
	for _, c := range []struct {
		name, schema, args, want string
	}{
		{"declared only", `{"type":"object","properties":{"a":{},"b":{}}}`, `{"a":1,"b":2}`, ""},
		{"one extra", `{"type":"object","properties":{"a":{}}}`, `{"a":1,"z":2,"y":3}`, "y"},
		{"nested object", `{"type":"object","properties":{"to":{"type":"object","properties":{"email":{}}}}}`, `{"to":{"email":"x","cc":"y"}}`, "to.cc"},
		{"in an array", `{"type":"object","properties":{"lines":{"type":"array","items":{"type":"object","properties":{"sku":{}}}}}}`, `{"lines":[{"sku":1},{"sku":2,"qty":3}]}`, "lines[1].qty"},
		{"additionalProperties true", `{"type":"object","properties":{"a":{}},"additionalProperties":true}`, `{"a":1,"z":2}`, ""},
		{"additionalProperties a schema", `{"type":"object","properties":{"a":{}},"additionalProperties":{"type":"string"}}`, `{"z":"x"}`, ""},
		{"patternProperties", `{"type":"object","properties":{"a":{}},"patternProperties":{"^x-":{}}}`, `{"x-y":1}`, ""},
		{"no properties listed: free-form", `{"type":"object"}`, `{"z":1}`, ""},
		{"empty properties: takes none", `{"type":"object","properties":{}}`, `{"z":1}`, "z"},
		{"not JSON: the call's to refuse", `{"type":"object","properties":{}}`, `{"z":`, ""},
		// Arguments declared by the schema's composition keywords are the
		// tool's: a valid call must not be refused (it used to be: "to"
		// below was "unknown", 400, though the schema takes it).
		{"oneOf branch", `{"type":"object","properties":{"kind":{"enum":["email","sms"]}},"oneOf":[{"properties":{"kind":{"const":"email"},"to":{"type":"string"}}},{"properties":{"kind":{"const":"sms"},"phone":{"type":"string"}}}]}`, `{"kind":"email","to":"a@b"}`, ""},
		{"oneOf: still none of them", `{"type":"object","properties":{"kind":{}},"oneOf":[{"properties":{"to":{}}},{"properties":{"phone":{}}}]}`, `{"kind":"email","priority":"high"}`, "priority"},
		{"allOf", `{"type":"object","properties":{"a":{}},"allOf":[{"properties":{"b":{}}}]}`, `{"a":1,"b":2}`, ""},
		{"anyOf", `{"type":"object","properties":{"a":{}},"anyOf":[{"properties":{"b":{}}},{"properties":{"c":{}}}]}`, `{"c":1}`, ""},
		{"if then else", `{"type":"object","properties":{"a":{}},"if":{"properties":{"a":{"const":1}}},"then":{"properties":{"b":{}}},"else":{"properties":{"c":{}}}}`, `{"a":2,"c":1}`, ""},
		{"dependentSchemas", `{"type":"object","properties":{"card":{}},"dependentSchemas":{"card":{"properties":{"cvc":{}}}}}`, `{"card":"4","cvc":"1"}`, ""},
		{"$ref to $defs", `{"type":"object","properties":{"a":{}},"$ref":"#/$defs/more","$defs":{"more":{"properties":{"b":{}}}}}`, `{"a":1,"b":2}`, ""},
		{"a $ref it cannot follow: the schema decides", `{"type":"object","properties":{"a":{}},"$ref":"https://example.com/s.json"}`, `{"z":1}`, ""},
		{"unevaluatedProperties: the schema decides", `{"type":"object","properties":{"a":{}},"unevaluatedProperties":false}`, `{"z":1}`, ""},
		{"nested: a property a branch also declares is not descended into", `{"type":"object","properties":{"to":{"type":"object","properties":{"email":{}}}},"anyOf":[{"properties":{"to":{"properties":{"cc":{}}}}}]}`, `{"to":{"email":"x","cc":"y"}}`, ""},
		{"properties only in branches: free-form, as without properties", `{"type":"object","oneOf":[{"properties":{"a":{}}},{"properties":{"b":{}}}]}`, `{"a":1,"z":2}`, ""},
		{"nested in a branch, an extra at the top", `{"type":"object","properties":{"a":{}},"allOf":[{"properties":{"b":{}}}]}`, `{"a":1,"b":2,"z":3}`, "z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var schema map[string]any
			if err := json.Unmarshal([]byte(c.schema), &schema); err != nil {
				t.Fatal(err)
			}
			got, known := unknownArgument(schema, []byte(c.args))
			if got != c.want {
				t.Fatalf("unknownArgument = %q (known %v), want %q", got, known, c.want)
			}
			// Through the gateway's memory of passing arguments: the same
			// answer the first time and again (from it, when it passed),
			// and another tool's schema is asked for itself.
			var checked argsChecked
			for i := 0; i < 2; i++ {
				if got, _ := checked.unknownArgument("t", schema, []byte(c.args)); got != c.want {
					t.Fatalf("remembered check %d = %q, want %q", i, got, c.want)
				}
			}
			closed := map[string]any{"type": "object", "properties": map[string]any{}}
			if got, _ := checked.unknownArgument("other", closed, []byte(c.args)); got == "" && json.Valid([]byte(c.args)) {
				t.Fatalf("another tool with a closed schema found nothing unknown in %s", c.args)
			}
		})
	}
	if msg := unknownArgumentMessage("t", "z", nil); !strings.Contains(msg, "it takes no arguments") {
		t.Error(msg)
	}
}

// The MCP input schema says "additionalProperties": false only where the
// tool's schema lists its properties plainly: with composition a property
// declared in a branch is "additional" to a validator, and a client that
// validates before sending would refuse a valid call.
func TestMCPInputSchemaClosedOnlyWherePlain(t *testing.T) {
	for _, c := range []struct {
		schema string
		closed bool
	}{
		{`{"type":"object","properties":{"a":{}}}`, true},
		{`{"type":"object","properties":{"a":{}},"oneOf":[{"properties":{"b":{}}}]}`, false},
		{`{"type":"object","properties":{"a":{}},"allOf":[{"required":["a"]}]}`, false},
		{`{"type":"object","properties":{"a":{}},"$ref":"#/$defs/x","$defs":{"x":{}}}`, false},
		{`{"type":"object","properties":{"a":{}},"unevaluatedProperties":false}`, false},
		{`{"type":"object"}`, false},
	} {
		m, err := withKey(json.RawMessage(c.schema))
		if err != nil {
			t.Fatal(err)
		}
		if got := m["additionalProperties"] == false; got != c.closed {
			t.Errorf("%s: additionalProperties false = %v, want %v", c.schema, got, c.closed)
		}
	}
}
