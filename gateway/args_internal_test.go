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
		})
	}
	if msg := unknownArgumentMessage("t", "z", nil); !strings.Contains(msg, "it takes no arguments") {
		t.Error(msg)
	}
}
