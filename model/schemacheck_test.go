package model

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// A schema the library loads but that would refuse every call (a type
// name it does not know, a dialect it cannot validate, an empty enum, a
// required argument it forbids), or that would let through what it means
// to refuse (a misspelt keyword, ignored; a negative length), is refused
// when the registry is built, naming the keyword, where it is and why: the
// caller would otherwise be told to fix a request that no request can fix.
func TestNewRegistryRefusesSchemasThatNoCallOrEveryCallSatisfies(t *testing.T) {
	cases := []struct {
		name, schema string
		want         []string // nil: accepted
		valid        string   // accepted: arguments that validate
	}{
		// Keywords: one the library does not know is ignored.
		{"a misspelt keyword", `{"type":"object","propertie":{"a":{"type":"string"}}}`, []string{`unknown keyword "propertie" at the top level`, `did you mean "properties"?`}, ""},
		{"a misspelt keyword in a property", `{"type":"object","properties":{"to":{"type":"string","maxLenght":5}}}`, []string{`unknown keyword "maxLenght" at /properties/to`, `did you mean "maxLength"?`}, ""},
		{"a keyword of no draft lists the vocabulary", `{"type":"object","properties":{"a":{"type":"string","nullable":true}}}`, []string{`unknown keyword "nullable" at /properties/a`, "the keywords of draft 2020-12 are", "maxLength", "unevaluatedProperties"}, ""},
		{"an OpenAPI x- annotation is kept", `{"type":"object","x-owner":"billing","properties":{"a":{"type":"string","x-ui":{"w":3}}}}`, nil, `{"a":"x"}`},
		{"draft-07 dependencies in a 2020-12 schema", `{"type":"object","properties":{"a":{},"b":{}},"dependencies":{"a":["b"]}}`, []string{`"dependencies" at the top level is draft-07's`, "dependentRequired", `declare draft-07 with "$schema": "http://json-schema.org/draft-07/schema#"`}, ""},
		{"draft-07 items array in a 2020-12 schema", `{"type":"object","properties":{"p":{"type":"array","items":[{"type":"string"}]}}}`, []string{`"items" as a list at /properties/p is draft-07's`, "prefixItems"}, ""},
		{"2020-12 prefixItems in a draft-07 schema", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"string"}]}}}`, []string{`"prefixItems" at /properties/p is draft 2020-12's`, `"items" as a list`}, ""},
		{"draft-07 ignores what stands beside $ref", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/s","maxLength":3}},"definitions":{"s":{"type":"string"}}}`, []string{`"maxLength" beside "$ref" at /properties/a`, "draft-07 ignores"}, ""},
		{"draft-07 with dependencies", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{},"b":{}},"dependencies":{"a":["b"]}}`, nil, `{"b":1}`},

		// $schema: the two dialects the library validates.
		{"an unknown dialect", `{"$schema":"http://example.com/evil","type":"object"}`, []string{`"$schema" "http://example.com/evil"`, "https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#"}, ""},
		{"draft 2019-09", `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object"}`, []string{`"$schema"`, "2020-12"}, ""},
		{"a subschema of another dialect", `{"type":"object","properties":{"a":{"$schema":"http://json-schema.org/draft-07/schema#","type":"string"}}}`, []string{`"$schema" at /properties/a`, "the top level's"}, ""},
		{"draft 2020-12 named", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"string"}}}`, nil, `{"a":"x"}`},
		{"draft-07 over https", `{"$schema":"https://json-schema.org/draft-07/schema#","type":"object"}`, nil, `{}`},

		// Keyword values.
		{"a misspelt type", `{"type":"object","properties":{"a":{"type":"strin"}}}`, []string{`"type" at /properties/a`, `"strin"`, "string, number, integer, boolean, object, array, null"}, ""},
		{"a misspelt type in a list", `{"type":"object","properties":{"a":{"type":["string","nul"]}}}`, []string{`"nul"`}, ""},
		{"an empty type list", `{"type":"object","properties":{"a":{"type":[]}}}`, []string{`"type" at /properties/a`, "empty"}, ""},
		{"a type twice", `{"type":"object","properties":{"a":{"type":["string","string"]}}}`, []string{`"string" twice`}, ""},
		{"a negative minLength", `{"type":"object","properties":{"a":{"type":"string","minLength":-1}}}`, []string{`"minLength" at /properties/a is -1`, "not negative"}, ""},
		{"a negative maxItems", `{"type":"object","properties":{"a":{"type":"array","maxItems":-2}}}`, []string{`"maxItems" at /properties/a is -2`}, ""},
		{"minLength over maxLength", `{"type":"object","properties":{"a":{"type":"string","minLength":5,"maxLength":3}}}`, []string{`"minLength" 5 is more than "maxLength" 3 at /properties/a`}, ""},
		{"minimum over maximum", `{"type":"object","properties":{"n":{"type":"number","minimum":5,"maximum":1}}}`, []string{`"minimum" 5 is more than "maximum" 1 at /properties/n`}, ""},
		{"multipleOf zero", `{"type":"object","properties":{"n":{"type":"number","multipleOf":0}}}`, []string{`"multipleOf" at /properties/n`, "more than 0"}, ""},
		{"a required name twice", `{"type":"object","properties":{"a":{}},"required":["a","a"]}`, []string{`"required" at the top level names "a" twice`}, ""},

		// Schemas no call can satisfy.
		{"an empty enum", `{"type":"object","properties":{"a":{"enum":[]}}}`, []string{`"enum" at /properties/a is empty`}, ""},
		{"not {} at the top", `{"type":"object","not":{}}`, []string{"no arguments can satisfy", "not"}, ""},
		{"false in allOf at the top", `{"type":"object","allOf":[false]}`, []string{"no arguments can satisfy"}, ""},
		{"a required argument that accepts nothing", `{"type":"object","properties":{"a":false},"required":["a"]}`, []string{`required argument "a"`, "no value"}, ""},
		{"a forbidden property stays accepted", `{"type":"object","properties":{"a":{"type":"string"},"b":false}}`, nil, `{"a":"x"}`},
		{"required but refused by additionalProperties false", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"],"additionalProperties":false}`, []string{`"required" at the top level names "b"`, `"additionalProperties": false`}, ""},
		{"required, undeclared where properties are listed", `{"type":"object","properties":{"subject":{"type":"string"}},"required":["subjet"]}`, []string{`"required" at the top level names "subjet"`, "does not declare", `did you mean "subject"?`, "gateway"}, ""},
		{"required in a nested object", `{"type":"object","properties":{"o":{"type":"object","properties":{"a":{}},"required":["b"],"additionalProperties":false}}}`, []string{`"required" at /properties/o names "b"`}, ""},
		{"required and declared by patternProperties", `{"type":"object","properties":{"a":{}},"patternProperties":{"^x-":{"type":"string"}},"required":["x-b"],"additionalProperties":false}`, nil, `{"x-b":"y"}`},
		{"required and let through by additionalProperties", `{"type":"object","properties":{"a":{}},"required":["b"],"additionalProperties":{"type":"string"}}`, nil, `{"b":"y"}`},
		{"required in a free-form object", `{"type":"object","required":["b"]}`, nil, `{"b":1}`},
		{"required in a branch, declared by the parent", `{"type":"object","properties":{"a":{},"b":{}},"anyOf":[{"required":["a"]},{"properties":{"c":{}},"required":["b"]}]}`, nil, `{"b":1}`},
		{"required, declared by a branch", `{"type":"object","properties":{"kind":{"type":"string"}},"oneOf":[{"properties":{"card":{"type":"string"}},"required":["card"]}]}`, nil, `{"card":"x"}`},

		{"required under not is a condition", `{"type":"object","properties":{"a":{}},"not":{"required":["b"]}}`, nil, `{"a":1}`},
		{"required under if is a condition", `{"type":"object","properties":{"a":{}},"if":{"required":["b"]},"then":{"required":["a"]}}`, nil, `{"a":1}`},
		{"a forbidden required property under not", `{"type":"object","properties":{"a":{}},"not":{"properties":{"a":false},"required":["a"]}}`, nil, `{"a":1}`},
		{"required in then, undeclared", `{"type":"object","properties":{"a":{}},"if":{"required":["a"]},"then":{"required":["c"]}}`, []string{`"required" at /then names "c"`}, ""},

		// Formats are notes, and accepted.
		{"a format", `{"type":"object","properties":{"to":{"type":"string","format":"email"}}}`, nil, `{"to":"x"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s jsonschema.Schema
			if err := json.Unmarshal([]byte(c.schema), &s); err != nil {
				t.Fatal(err)
			}
			r, err := NewRegistry(Tool{Name: "t", Schema: &s, Effect: Effect{Kind: EffectLocal, Table: TableLocalEffects}})
			if c.want != nil {
				if err == nil {
					t.Fatal("accepted")
				}
				msg := err.Error()
				if CodeOf(err) != CodeInvalid || !strings.HasPrefix(msg, "tool t: arguments schema: ") || strings.Contains(msg, "\n") {
					t.Errorf("got %q; want one invalid line naming tool t's arguments schema", msg)
				}
				for _, w := range c.want {
					if !strings.Contains(msg, w) {
						t.Errorf("got %q; want it to contain %q", msg, w)
					}
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

// A tool built in Go is held to the same rules (an Extra keyword is one
// the library ignores), and the schemas jsonschema.For infers load.
func TestNewRegistryChecksGoBuiltSchemas(t *testing.T) {
	neg := -1
	bad := []struct {
		name   string
		schema *jsonschema.Schema
		want   string
	}{
		{"an Extra keyword", &jsonschema.Schema{Type: "object", Extra: map[string]any{"maxLenght": 3}}, `unknown keyword "maxLenght"`},
		{"a type name", &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Type: "int"}}}, `"int"`},
		{"a negative length", &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Type: "string", MinLength: &neg}}}, `"minLength" at /properties/a is -1`},
		{"an empty enum", &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Enum: []any{}}}}, `"enum" at /properties/a is empty`},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewRegistry(Tool{Name: "go_tool", Schema: c.schema, Effect: Effect{Kind: EffectLocal, Table: TableLocalEffects}})
			if err == nil || !strings.Contains(err.Error(), "tool go_tool: arguments schema: ") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("NewRegistry: %v; want an error naming tool go_tool and %s", err, c.want)
			}
		})
	}
	type order struct {
		ID    string   `json:"id"`
		Qty   int      `json:"qty,omitempty"`
		Tags  []string `json:"tags,omitempty"`
		Inner *struct {
			Note string `json:"note"`
		} `json:"inner,omitempty"`
	}
	s, err := jsonschema.For[order](nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewRegistry(Tool{Name: "inferred", Schema: s, Effect: Effect{Kind: EffectLocal, Table: TableLocalEffects}}); err != nil {
		t.Fatalf("a schema from jsonschema.For: %v", err)
	}
}
