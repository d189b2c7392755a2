package model_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
)

func validRequest() model.Request {
	return model.Request{Tenant: "acme", Key: "op-1", Tool: "create_support_task", PayloadVersion: 1,
		Args: []byte(`{"subject":"check delayed delivery"}`), TraceID: "call_abc", WorkerID: "w1"}
}

func TestPrepareRejectsInvalidInput(t *testing.T) {
	big := `{"subject":"` + strings.Repeat("x", model.MaxArgsBytes) + `"}`
	cases := []struct {
		name   string
		mutate func(*model.Request)
		want   string // a fragment the one-line message must contain
	}{
		{"empty tenant", func(r *model.Request) { r.Tenant = "" }, "tenant must not be empty"},
		{"over-long tenant", func(r *model.Request) { r.Tenant = strings.Repeat("t", model.MaxTenantLen+1) }, "tenant is 129 characters"},
		{"tenant with a control character", func(r *model.Request) { r.Tenant = "ac\x00me" }, "tenant must be printable"},
		{"tenant with surrounding space", func(r *model.Request) { r.Tenant = " acme" }, "whitespace"},
		{"empty key", func(r *model.Request) { r.Key = "" }, "key must not be empty"},
		{"key of 256 characters", func(r *model.Request) { r.Key = strings.Repeat("k", 256) }, "key is 256 characters; at most 255"},
		{"key of 256 multi-byte characters", func(r *model.Request) { r.Key = strings.Repeat("é", 256) }, "at most 255"},
		{"key with a newline", func(r *model.Request) { r.Key = "op\n1" }, "key must be printable"},
		{"key with a tab", func(r *model.Request) { r.Key = "op\t1" }, "key must be printable"},
		{"key with DEL", func(r *model.Request) { r.Key = "op\x7f" }, "key must be printable"},
		{"key with a C1 control", func(r *model.Request) { r.Key = "op\u0085" }, "key must be printable"},
		{"key with a bidi override", func(r *model.Request) { r.Key = "op\u202e1" }, "key must be printable"},
		{"key that is not UTF-8", func(r *model.Request) { r.Key = "op\xff" }, "key is not valid UTF-8"},
		// Shown with the marks past the third escaped (\u0301), such a key
		// would read as another key that holds those escapes as text.
		{"key stacking four combining marks", func(r *model.Request) { r.Key = "e\u0301\u0301\u0301\u0301Z" }, "key must not stack more than 3 combining marks"},
		{"tenant stacking four combining marks", func(r *model.Request) { r.Tenant = "a\u0300\u0300\u0300\u0300" }, "tenant must not stack more than 3 combining marks"},
		{"trace id with a control character", func(r *model.Request) { r.TraceID = "call\x1b[2J" }, "trace id"},
		{"over-long trace id", func(r *model.Request) { r.TraceID = strings.Repeat("c", model.MaxTraceLen+1) }, "trace id"},
		{"worker id with a control character", func(r *model.Request) { r.WorkerID = "w\x1b[31m" }, "worker id"},
		{"over-long worker id", func(r *model.Request) { r.WorkerID = strings.Repeat("w", model.MaxTraceLen+1) }, "worker id"},
		{"unknown tool", func(r *model.Request) { r.Tool = "delete_everything" }, `unknown tool "delete_everything"`},
		{"empty tool", func(r *model.Request) { r.Tool = "" }, "unknown tool"},
		{"payload version above the maximum", func(r *model.Request) { r.PayloadVersion = model.MaxPayloadVers + 1 }, "payload version"},
		{"negative payload version", func(r *model.Request) { r.PayloadVersion = -3 }, "payload version"},
		{"args not JSON", func(r *model.Request) { r.Args = []byte(`subject=x`) }, "not valid JSON"},
		{"args empty", func(r *model.Request) { r.Args = nil }, "not valid JSON"},
		{"args an array", func(r *model.Request) { r.Args = []byte(`[{"subject":"x"}]`) }, "must be a JSON object, got an array"},
		{"args a string", func(r *model.Request) { r.Args = []byte(`"x"`) }, "must be a JSON object"},
		{"args null", func(r *model.Request) { r.Args = []byte(`null`) }, "must be a JSON object, got null"},
		{"args with trailing data", func(r *model.Request) { r.Args = []byte(`{"subject":"x"} {"subject":"y"}`) }, "trailing data"},
		{"args over 64 KiB", func(r *model.Request) { r.Args = []byte(big) }, "at most 65536 (64 KiB)"},
		{"args not UTF-8", func(r *model.Request) { r.Args = []byte("{\"subject\":\"caf\xe9\"}") }, "not valid UTF-8"},
		{"duplicate keys in args", func(r *model.Request) { r.Args = []byte(`{"subject":"a","subject":"b"}`) }, "Duplicate key"},
		{"missing required field", func(r *model.Request) { r.Args = []byte(`{"title":"x"}`) }, `missing required argument "subject"`},
		{"required field of the wrong type", func(r *model.Request) { r.Args = []byte(`{"subject":42}`) }, `argument subject: must be a string, got a number`},
		{"required field null", func(r *model.Request) { r.Args = []byte(`{"subject":null}`) }, `got null`},
		{"required field blank", func(r *model.Request) { r.Args = []byte(`{"subject":"   "}`) }, "must not be empty"},
		{"required field too long", func(r *model.Request) { r.Args = []byte(`{"subject":"` + strings.Repeat("s", 1001) + `"}`) }, "at most 1000"},
		{"report job without report", func(r *model.Request) {
			r.Tool, r.Args = "create_report_job", []byte(`{"subject":"weekly"}`)
		}, `missing required argument "report"`},
		{"notification without body", func(r *model.Request) {
			r.Tool, r.Args = "send_notification", []byte(`{"to":"a@example.com"}`)
		}, `missing required argument "body"`},
		{"notification with an object recipient", func(r *model.Request) {
			r.Tool, r.Args = "send_notification", []byte(`{"to":{"a":1},"body":"hi"}`)
		}, `argument to: must be a string, got an object`},
		// Beyond ±2^53 two different integers become one double and would
		// share a fingerprint; such numbers must be sent as strings.
		{"integer beyond 2^53", func(r *model.Request) { r.Args = []byte(`{"subject":"x","n":9007199254740993}`) }, "2^53"},
		{"integer beyond 2^63", func(r *model.Request) { r.Args = []byte(`{"subject":"x","n":10000000000000000001}`) }, "2^53"},
		{"integer exactly 2^53", func(r *model.Request) { r.Args = []byte(`{"subject":"x","n":-9007199254740992}`) }, "2^53"},
		{"2^53+1 spelled as a float", func(r *model.Request) { r.Args = []byte(`{"subject":"x","n":9.007199254740993e15}`) }, "2^53"},
		{"number out of double range", func(r *model.Request) { r.Args = []byte(`{"subject":"x","n":1e400}`) }, "out of range"},
		// More digits than a double holds: the rounded value would be
		// recorded and sent, and two literals would share a fingerprint.
		{"decimal beyond double precision", func(r *model.Request) { r.Args = []byte(`{"subject":"x","amount":10.000000000000001}`) }, `number 10.000000000000001 at "amount" has more precision than a double holds (it would be recorded and sent as 10.000000000000002); send it as a string`},
		{"a longer spelling of 0.30000000000000004", func(r *model.Request) { r.Args = []byte(`{"subject":"x","n":0.3000000000000000444}`) }, "send it as a string"},
		{"nested in an array", func(r *model.Request) {
			r.Args = []byte(`{"subject":"x","lines":[{"p":1},{"p":0.1000000000000000000001}]}`)
		}, `at "lines[1].p"`},
		{"an exponent the double cannot follow", func(r *model.Request) { r.Args = []byte(`{"subject":"x","n":1.00000000000000000001e-5}`) }, "send it as a string"},
		{"underflow to zero", func(r *model.Request) { r.Args = []byte(`{"subject":"x","n":1e-400}`) }, "send it as a string"},
		{"underflow with a huge exponent", func(r *model.Request) { r.Args = []byte(`{"subject":"x","n":1e-99999999999999999999}`) }, "send it as a string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := validRequest()
			c.mutate(&r)
			p, err := config.Default().Tools.Prepare(r)
			if err == nil {
				t.Fatalf("Prepare accepted it: canonical %s", p.Canonical)
			}
			if !model.IsCode(err, model.CodeInvalid) {
				t.Fatalf("code %q, want invalid: %v", model.CodeOf(err), err)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) {
				t.Errorf("message %q does not say %q", msg, c.want)
			}
			if strings.ContainsAny(msg, "\n\r") || len(msg) > 400 {
				t.Errorf("message is not one short line: %q", msg)
			}
		})
	}
}

func TestPrepareAcceptsTheEdgesOfValid(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*model.Request)
	}{
		{"key of exactly 255 characters", func(r *model.Request) { r.Key = strings.Repeat("k", 255) }},
		{"key of 255 multi-byte characters", func(r *model.Request) { r.Key = strings.Repeat("é", 255) }},
		{"key with inner spaces and punctuation", func(r *model.Request) { r.Key = "order 42/retry:#1" }},
		{"tenant of exactly 128 characters", func(r *model.Request) { r.Tenant = strings.Repeat("t", 128) }},
		{"no trace id", func(r *model.Request) { r.TraceID = "" }},
		{"extra arguments beside the required ones", func(r *model.Request) { r.Args = []byte(`{"subject":"x","priority":2,"tags":["a"]}`) }},
		{"args just under 64 KiB", func(r *model.Request) {
			r.Args = []byte(`{"subject":"x","pad":"` + strings.Repeat("p", model.MaxArgsBytes-30) + `"}`)
		}},
		{"payload version 7", func(r *model.Request) { r.PayloadVersion = 7 }},
		{"largest safe integer 2^53-1", func(r *model.Request) { r.Args = []byte(`{"subject":"x","n":9007199254740991,"m":-9007199254740991}`) }},
		{"decimals a double holds in any spelling", func(r *model.Request) {
			r.Args = []byte(`{"subject":"x","a":0.1,"b":1.0,"c":1e0,"d":1.5e-7,"e":10E-1,"f":-0,"g":0.30000000000000004,"h":0.0e99999999999999999999,"i":123456789.125,"j":-12.50e-3,"k":5e-324}`)
		}},
		{"notification", func(r *model.Request) {
			r.Tool, r.Args = "send_notification", []byte(`{"to":"a@example.com","body":"hello"}`)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := validRequest()
			c.mutate(&r)
			p, err := config.Default().Tools.Prepare(r)
			if err != nil {
				t.Fatalf("Prepare refused a valid request: %v", err)
			}
			if len(p.Fingerprint) != 64 {
				t.Errorf("fingerprint %q is not hex SHA-256", p.Fingerprint)
			}
		})
	}
}

func fingerprint(t *testing.T, tool string, version int, args string) string {
	t.Helper()
	r := validRequest()
	r.Tool, r.PayloadVersion, r.Args = tool, version, []byte(args)
	p, err := config.Default().Tools.Prepare(r)
	if err != nil {
		t.Fatalf("Prepare(%s %s): %v", tool, args, err)
	}
	return p.Fingerprint
}

func TestFingerprintIgnoresSpellingAndCatchesChangedIntent(t *testing.T) {
	const task = "create_support_task"
	same := [][2]string{
		{`{"b":1,"a":1.0,"subject":"x"}`, `{"a":1,"b":1,"subject":"x"}`},
		{`{"subject":"x","n":1e2}`, `{"n":100,"subject":"x"}`},
		{`{"subject":"x","n":0.50}`, `{"subject":"x","n":5E-1}`},
		{`{ "subject" : "x" }`, `{"subject":"x"}`},
		{`{"subject":"\u0078"}`, `{"subject":"x"}`},
		{`{"subject":"x","o":{"z":[1,{"b":2,"a":1}],"y":true}}`, `{"o":{"y":true,"z":[1.0,{"a":1,"b":2}]},"subject":"x"}`},
		{`{"subject":"<&>"}`, `{"subject":"\u003c\u0026\u003e"}`},
	}
	for _, c := range same {
		if a, b := fingerprint(t, task, 1, c[0]), fingerprint(t, task, 1, c[1]); a != b {
			t.Errorf("%s and %s mean the same but fingerprint differently", c[0], c[1])
		}
	}
	base := fingerprint(t, task, 1, `{"subject":"x"}`)
	differ := []struct {
		name          string
		tool          string
		version       int
		args          string
		mustDifferMsg string
	}{
		{"other subject", task, 1, `{"subject":"y"}`, "changed arguments"},
		{"subject with different case", task, 1, `{"subject":"X"}`, "changed arguments"},
		{"an extra argument", task, 1, `{"subject":"x","priority":1}`, "extra argument"},
		{"other payload version", task, 2, `{"subject":"x"}`, "payload version"},
		{"other tool, same field value", "create_report_job", 1, `{"report":"x"}`, "tool"},
		{"number vs string", task, 1, `{"subject":"x","n":1}`, "type"},
	}
	seen := map[string]string{base: "base"}
	for _, d := range differ {
		fp := fingerprint(t, d.tool, d.version, d.args)
		if prev, dup := seen[fp]; dup {
			t.Errorf("%s fingerprints like %s; the %s must change it", d.name, prev, d.mustDifferMsg)
		}
		seen[fp] = d.name
	}
	if fingerprint(t, task, 1, `{"subject":"x","n":1}`) == fingerprint(t, task, 1, `{"subject":"x","n":"1"}`) {
		t.Error(`1 and "1" share a fingerprint`)
	}
}

// The fingerprint must not be fooled by a tool name that ends where the
// version begins: fields are separated, not concatenated.
func TestFingerprintSeparatesItsFields(t *testing.T) {
	a := model.Fingerprint("tool1", 1, []byte(`{}`))
	b := model.Fingerprint("tool", 11, []byte(`{}`))
	c := model.Fingerprint("tool", 1, []byte(`1{}`))
	if a == b || b == c || a == c {
		t.Error("fingerprints of different (tool, version, args) collide")
	}
}

func TestCanonicalFormIsRFC8785(t *testing.T) {
	cases := map[string]string{
		`{"b":1,"a":1.0}`:                `{"a":1,"b":1}`,
		`{"a":"<script>&"}`:              `{"a":"<script>&"}`, // no HTML escaping
		`{"a":1e15,"b":1e-7,"c":-0.0}`:   `{"a":1000000000000000,"b":1e-7,"c":0}`,
		`{"é":1,"e":2,"z":3,"A":4}`:      `{"A":4,"e":2,"z":3,"é":1}`,
		"{\n\t\"a\" : [ 1 , 2 ]\r\n}":    `{"a":[1,2]}`,
		`{"a":"\u00e9\n\"\\"}`:           `{"a":"é\n\"\\"}`,
		`{"a":{"d":{},"c":[]},"b":null}`: `{"a":{"c":[],"d":{}},"b":null}`,
	}
	for in, want := range cases {
		got, _, err := model.CanonicalArgs([]byte(in))
		if err != nil {
			t.Errorf("CanonicalArgs(%s): %v", in, err)
			continue
		}
		if string(got) != want {
			t.Errorf("CanonicalArgs(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestSummaryIsOneShortLine(t *testing.T) {
	r := validRequest()
	r.Args = []byte(`{"subject":"line one\nline two\t\ttabbed ` + strings.Repeat("long ", 50) + `"}`)
	p, err := config.Default().Tools.Prepare(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(p.Summary, "\n\t") || len([]rune(p.Summary)) > 120 || !strings.HasPrefix(p.Summary, "line one line two tabbed") {
		t.Errorf("summary %q is not one collapsed line of at most 120 characters", p.Summary)
	}
}

// A line or paragraph separator in the summary argument is kept, to be
// shown as \u2028 (textsafe), not taken for a space and dropped: the
// summary must not look cleaner than what the agent sent.
func TestSummaryKeepsLineSeparatorsToShowThem(t *testing.T) {
	r := validRequest()
	r.Args = []byte(`{"subject":"refund\u2028approved\u2029 now"}`)
	p, err := config.Default().Tools.Prepare(r)
	if err != nil {
		t.Fatal(err)
	}
	if p.Summary != "refund\u2028approved\u2029 now" {
		t.Errorf("summary %q: the separators were dropped", p.Summary)
	}
}

func TestErrorCodes(t *testing.T) {
	if model.CodeOf(nil) != "" || model.IsCode(nil, model.CodeInternal) {
		t.Error("nil has a code")
	}
	e := model.Errorf(model.CodeStale, "moved %d", 2)
	if model.CodeOf(e) != model.CodeStale || e.Error() != "moved 2" {
		t.Errorf("Errorf: %q %q", model.CodeOf(e), e.Error())
	}
	w := model.Wrap(model.CodeBusy, e, "outer")
	if !model.IsCode(w, model.CodeBusy) || w.Unwrap() != e {
		t.Error("Wrap lost its code or cause")
	}
	if model.CodeOf(errString("foreign")) != model.CodeInternal {
		t.Error("a foreign error is not internal")
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// A tool taken from one registry into another keeps its resolved schema
// (config checks each tool alone, then builds the registry from the
// checked tools) — but only while it is the same schema: a tool given a
// new schema is resolved again, and calls are checked against the new one.
func TestRegistryReusesAResolvedSchemaOnlyForTheSameSchema(t *testing.T) {
	schema := func(doc string) *jsonschema.Schema {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	first, err := model.NewRegistry(model.Tool{Name: "tool", Effect: model.Effect{Kind: model.EffectLocal, Table: model.TableLocalEffects},
		Schema: schema(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	checked, err := first.Lookup("tool")
	if err != nil {
		t.Fatal(err)
	}
	same, changed := *checked, *checked
	changed.Schema = schema(`{"type":"object","properties":{"b":{"type":"string"}},"required":["b"]}`)
	req := func(args string) model.Request {
		r := validRequest()
		r.Tool, r.Args = "tool", []byte(args)
		return r
	}
	for _, c := range []struct {
		name     string
		tool     model.Tool
		ok, fail string
	}{
		{"same schema", same, `{"a":"x"}`, `{"b":"x"}`},
		{"new schema", changed, `{"b":"x"}`, `{"a":"x"}`},
	} {
		r, err := model.NewRegistry(c.tool)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, err := r.Prepare(req(c.ok)); err != nil {
			t.Errorf("%s: %s refused: %v", c.name, c.ok, err)
		}
		if _, err := r.Prepare(req(c.fail)); err == nil {
			t.Errorf("%s: %s accepted; want it refused by the tool's schema", c.name, c.fail)
		}
	}
}

// Prepare remembers arguments it checked, by their bytes: a second call
// with them is the same Prepared, still refuses a bad tenant, key, trace or
// worker, and hands out its own copies — what one caller does to its
// arguments never reaches the next.
func TestPrepareOfArgumentsSeenBeforeIsTheSameAndIndependent(t *testing.T) {
	reg := config.Default().Tools
	first, err := reg.Prepare(validRequest())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		mutate func(*model.Request)
		want   string // "" prepares
	}{
		{"same request", func(*model.Request) {}, ""},
		{"another key and tenant", func(r *model.Request) { r.Key, r.Tenant = "op-2", "other" }, ""},
		{"bad key", func(r *model.Request) { r.Key = "op\n1" }, "key must be printable"},
		{"bad trace", func(r *model.Request) { r.TraceID = "call\x1b[2J" }, "trace id"},
		{"bad worker", func(r *model.Request) { r.WorkerID = "w\x1b[31m" }, "worker id"},
		{"another payload version", func(r *model.Request) { r.PayloadVersion = 2 }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := validRequest()
			c.mutate(&r)
			p, err := reg.Prepare(r)
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("Prepare = %v; want an error with %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Request.Key != r.Key || p.Request.Tenant != r.Tenant || string(p.Canonical) != string(first.Canonical) || p.Summary != first.Summary {
				t.Fatalf("Prepare = %+v; want %+v's arguments with its own request", p, first)
			}
			if (p.Fingerprint == first.Fingerprint) != (r.PayloadVersion == first.PayloadVersion) {
				t.Fatalf("fingerprint %s vs %s for payload versions %d and %d", p.Fingerprint, first.Fingerprint, r.PayloadVersion, first.PayloadVersion)
			}
			// Change what this caller was handed; the next gets the original.
			p.Decoded["subject"] = "changed"
			p.Canonical[2] = 'X'
			again, err := reg.Prepare(r)
			if err != nil || again.Decoded["subject"] != "check delayed delivery" || string(again.Canonical) != string(first.Canonical) {
				t.Fatalf("after a caller changed its copy: %+v, %v", again, err)
			}
		})
	}
	// Arguments that fail are never remembered as passing.
	bad := validRequest()
	bad.Args = []byte(`{"subject":""}`)
	for i := 0; i < 2; i++ {
		if _, err := reg.Prepare(bad); err == nil {
			t.Fatalf("call %d: arguments against the schema prepared", i)
		}
	}
}
