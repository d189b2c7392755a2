package model

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// A call whose arguments fail the tool's schema is refused in a person's
// words, naming the argument and the rule — not the schema library's
// ("validating root: validating /properties/invoice: pattern: …").
func TestSchemaRefusalsAreWordedForAPerson(t *testing.T) {
	const schema = `{"type":"object","additionalProperties":false,"required":["to"],
	 "properties":{
	  "to":{"type":"string","minLength":3},
	  "invoice":{"type":"string","pattern":"^INV-[0-9]+$"},
	  "color":{"enum":["red","green"]},
	  "mode":{"const":"fast"},
	  "priority":{"type":"integer","minimum":1,"maximum":4},
	  "ratio":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1,"multipleOf":0.25},
	  "tags":{"type":"array","maxItems":2,"minItems":1,"uniqueItems":true,"items":{"type":"string","maxLength":5}},
	  "either":{"type":["string","integer"]},
	  "n":{"enum":[1,2]},
	  "one":{"const":1},
	  "tiny":{"type":"number","minimum":0.0000001},
	  "labels":{"type":"object","additionalProperties":{"type":"string"}},
	  "address":{"$ref":"#/$defs/addr"},
	  "shape":{"enum":[{"a":1},[1,2],"x"]},
	  "exact":{"const":{"a":[1,2]}},
	  "lines":{"type":"string","pattern":"^a\nb\u2028$"},
	  "short":{"type":"string","minLength":3,"maxLength":5},
	  "inner":{"type":"object","properties":{"s":{"type":"string","minLength":2},"n":{"type":"string"}},"minProperties":2},
	  "pair":{"type":"array","minItems":2,"items":{"enum":[{"k":"v"}]}}},
	 "$defs":{"addr":{"type":"object","required":["city"],"properties":{"city":{"type":"string"}}}}}`
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(Tool{Name: "t", Schema: &s, Effect: Effect{Kind: EffectLocal, Table: TableLocalEffects}})
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := r.Lookup("t")
	for _, c := range []struct{ args, want string }{
		{`{"to":"b@example.com","invoice":"9"}`, `t: argument invoice: "9" does not match the pattern ^INV-[0-9]+$`},
		// A string where the schema allows that number: quoted, not
		// "1 is not one of 1, 2".
		{`{"to":"b@example.com","n":"1"}`, `t: argument n: "1" is not one of 1, 2`},
		{`{"to":"b@example.com","one":"1"}`, `t: argument one: "1" must be 1`},
		// The limit as the schema writes it (the library prints six
		// decimals: 0.0000001 read as 0).
		{`{"to":"b@example.com","tiny":0.00000001}`, `t: argument tiny: 1e-08 is less than the minimum 1e-7`},
		// A field the schema does not name keeps where it is.
		{`{"to":"b@example.com","labels":{"team":1}}`, `t: argument labels.(a field the schema does not name): must be a string, got a number`},
		// A value over several lines is worded too, its newline escaped.
		{`{"to":"b@example.com","color":"x\ny"}`, `t: argument color: "x\ny" is not one of "red", "green"`},
		{`{"invoice":"INV-1"}`, `t: missing required argument "to"`},
		{`{"to":"b@example.com","color":"blue"}`, `t: argument color: "blue" is not one of "red", "green"`},
		{`{"to":"b@example.com","mode":"slow"}`, `t: argument mode: "slow" must be "fast"`},
		{`{"to":"b@example.com","priority":9}`, `t: argument priority: 9 is more than the maximum 4`},
		{`{"to":"b@example.com","priority":0}`, `t: argument priority: 0 is less than the minimum 1`},
		{`{"to":"b@example.com","ratio":1}`, `t: argument ratio: 1 must be less than 1`},
		{`{"to":"b@example.com","ratio":0}`, `t: argument ratio: 0 must be more than 0`},
		{`{"to":"b@example.com","ratio":0.3}`, `t: argument ratio: 0.3 is not a multiple of 0.25`},
		{`{"to":"b@example.com","tags":["a","b","c"]}`, `t: argument tags: 3 items; at most 2`},
		{`{"to":"b@example.com","tags":[]}`, `t: argument tags: 0 items; at least 1`},
		{`{"to":"b@example.com","tags":["a","a"]}`, `t: argument tags: items 0 and 1 are the same; each must differ`},
		{`{"to":"b@example.com","tags":["toolong"]}`, `t: argument tags[]: "toolong" is 7 characters; at most 5`},
		{`{"to":"b@example.com","either":true}`, `t: argument either: must be a string or an integer, got a boolean`},
		{`{"to":"b@example.com","address":{}}`, `t: argument address: missing required field "city"`},
		{`{"to":"b@example.com","address":{"city":1}}`, `t: argument address.city: must be a string, got a number`},
		{`{"to":"b@example.com","cc":"x"}`, `t: unknown argument "cc"`},
		// An object or array refused by an enum or const is shown as JSON,
		// not in Go's map syntax (map[a:2]); a string that reads like one
		// stays a string.
		{`{"to":"b@example.com","shape":{"a":2}}`, `t: argument shape: {"a":2} is not one of {"a":1}, [1,2], "x"`},
		{`{"to":"b@example.com","shape":[1]}`, `t: argument shape: [1] is not one of {"a":1}, [1,2], "x"`},
		{`{"to":"b@example.com","shape":[1,3]}`, `t: argument shape: [1,3] is not one of {"a":1}, [1,2], "x"`},
		{`{"to":"b@example.com","shape":"[1]"}`, `t: argument shape: "[1]" is not one of {"a":1}, [1,2], "x"`},
		{`{"to":"b@example.com","shape":"map[a:2]"}`, `t: argument shape: "map[a:2]" is not one of {"a":1}, [1,2], "x"`},
		{`{"to":"b@example.com","exact":{"a":[2]}}`, `t: argument exact: {"a":[2]} must be {"a":[1,2]}`},
		{`{"to":"b@example.com","pair":[{"k":"v"},{"k":"w"}]}`, `t: argument pair[]: {"k":"w"} is not one of {"k":"v"}`},
		// A pattern with a line break (or another character a terminal
		// would act on) is shown escaped, quoted, not folded to a space.
		{`{"to":"b@example.com","lines":"ab"}`, `t: argument lines: "ab" does not match the pattern "^a\nb\u2028$"`},
		// Top-level and nested refusals read alike, and one is singular.
		{`{"to":"b@example.com","short":"x"}`, `t: argument short: "x" is 1 character; at least 3`},
		{`{"to":"b@example.com","short":"toolong"}`, `t: argument short: "toolong" is 7 characters; at most 5`},
		{`{"to":"b@example.com","short":3}`, `t: argument short: must be a string, got a number`},
		{`{"to":"b@example.com","short":"  "}`, `t: argument short: must not be empty`},
		{`{"to":"b@example.com","inner":{"s":"x","n":"y"}}`, `t: argument inner.s: "x" is 1 character; at least 2`},
		{`{"to":"b@example.com","inner":{"n":"y"}}`, `t: argument inner: 1 field; at least 2`},
		{`{"to":"b@example.com","pair":[{"k":"v"}]}`, `t: argument pair: 1 item; at least 2`},
		{`{"to":"b"}`, `t: argument to: "b" is 1 character; at least 3`},
	} {
		t.Run(c.args, func(t *testing.T) {
			err := tool.checkArgs([]byte(c.args))
			if err == nil || err.Error() != c.want {
				t.Fatalf("got  %v\nwant %s", err, c.want)
			}
		})
	}
}
