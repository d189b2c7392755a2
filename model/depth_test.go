package model_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/retrysafe/retrysafe/model"
)

// selfRef is a registry with one tool, t, whose schema refers to itself:
// arguments may nest y in y as deep as they like.
func selfRef(t testing.TB) *model.Registry {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"x":{"type":"string"},"y":{"$ref":"#"}}}`), &s); err != nil {
		t.Fatal(err)
	}
	r, err := model.NewRegistry(model.Tool{Name: "t", Schema: &s, PayloadVersion: 1, SummaryArg: "x", Effect: model.Effect{Kind: model.EffectLocal, Table: model.TableTasks}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// nestedY is arguments n levels deep (the arguments object the first):
// y in y, the innermost holding inner (`"x":"a"`, or `"x":1`, which the
// schema refuses).
func nestedY(n int, inner string) string {
	return strings.Repeat(`{"y":`, n-1) + "{" + inner + "}" + strings.Repeat("}", n-1)
}

// Arguments nested deeper than model.MaxArgsDepth levels are refused
// before they are canonicalized or validated (the schema library's cost
// grows with the square of the depth: 9,990 levels in 60 KB took
// gigabytes), invalid, saying how deep they are and the limit; at the
// limit they are taken. Objects and arrays count alike; a brace inside a
// string does not.
func TestArgumentsNestedDeeperThanTheLimitAreRefused(t *testing.T) {
	reg := selfRef(t)
	lim := model.MaxArgsDepth
	arrays := func(n int) string { // {"y":[[…[1]…]]}: n levels
		return `{"x":"a","z":` + strings.Repeat("[", n-1) + "1" + strings.Repeat("]", n-1) + "}"
	}
	cases := []struct {
		name, args string
		refused    string // "" = taken
	}{
		{"objects at the limit", nestedY(lim, `"x":"a"`), ""},
		{"objects one over", nestedY(lim+1, `"x":"a"`), "arguments are nested " + strconv.Itoa(lim+1) + " levels deep"},
		{"objects 9990 deep", nestedY(9990, `"x":"a"`), "arguments are nested 9990 levels deep"},
		{"arrays at the limit", arrays(lim), ""},
		{"arrays one over", arrays(lim + 1), "arguments are nested " + strconv.Itoa(lim+1) + " levels deep"},
		{"braces in a string", `{"x":"` + strings.Repeat(`{[\"`, 200) + `"}`, ""},
		{"one level", `{"x":"a"}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := reg.Prepare(model.Request{Tenant: "acme", Key: "k", Tool: "t", Args: []byte(c.args)})
			if c.refused == "" {
				if err != nil {
					t.Fatalf("Prepare: %v; want taken", err)
				}
				return
			}
			if !model.IsCode(err, model.CodeInvalid) || !strings.Contains(err.Error(), c.refused) ||
				!strings.Contains(err.Error(), "at most "+strconv.Itoa(lim)) {
				t.Fatalf("Prepare: %v; want invalid %q, at most %d", err, c.refused, lim)
			}
		})
	}
}

// An older build took arguments of any depth the tool's schema allowed: a
// retry of the very bytes it recorded under a key is prepared as it
// fingerprinted them (PrepareRecorded), to be answered from its operation,
// saying that such depth is refused since — at any depth the JSON decoder
// reads, without the schema, and without cost growing with the square of
// the depth.
func TestPrepareRecordedTakesArgumentsAnOlderBuildNestedDeeper(t *testing.T) {
	reg := selfRef(t)
	for _, n := range []int{model.MaxArgsDepth + 1, 9990} {
		args := nestedY(n, `"x":"a"`)
		req := model.Request{Tenant: "acme", Key: "k", Tool: "t", Args: []byte(args)}
		_, why := reg.Prepare(req)
		if why == nil {
			t.Fatalf("%d levels: Prepare took them", n)
		}
		p, err := reg.PrepareRecorded(req, why)
		if err != nil {
			t.Fatalf("%d levels: PrepareRecorded: %v", n, err)
		}
		if want := oldFingerprint(t, "t", 1, args); p.Fingerprint != want {
			t.Fatalf("%d levels: fingerprint %s; an older build recorded %s", n, p.Fingerprint, want)
		}
		if since, what, instead := p.UncheckedWords(); !strings.Contains(since, "nested more than "+strconv.Itoa(model.MaxArgsDepth)+" levels") ||
			!strings.Contains(what, "nested") || !strings.Contains(instead, strconv.Itoa(model.MaxArgsDepth)) {
			t.Fatalf("%d levels: UncheckedWords %q %q %q", n, since, what, instead)
		}
	}
}

// The deepest arguments taken validate in a moment, as does their refusal
// by the schema worded for a person (schemaWords reads the library's chain
// of errors, as long as the depth).
func BenchmarkDeepestArgumentsTaken(b *testing.B) {
	reg := selfRef(b)
	for _, bc := range []struct{ name, inner string }{{"valid", `"x":"a"`}, {"refused", `"x":1`}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				// Other bytes each time: Prepare caches what it took.
				args := []byte(nestedY(model.MaxArgsDepth, bc.inner+`,"n":`+strconv.Itoa(i)))
				_, err := reg.Prepare(model.Request{Tenant: "acme", Key: "k", Tool: "t", Args: args})
				if (err != nil) != (bc.name == "refused") {
					b.Fatal(err)
				}
			}
		})
	}
}

// A retry of 60 KB nested 9,990 levels deep (what the JSON decoder reads)
// is prepared as recorded in time and memory linear in its size.
func BenchmarkPrepareRecordedDeepest(b *testing.B) {
	reg := selfRef(b)
	req := model.Request{Tenant: "acme", Key: "k", Tool: "t", Args: []byte(nestedY(9990, `"x":"a"`))}
	_, why := reg.Prepare(req)
	for i := 0; i < b.N; i++ {
		if _, err := reg.PrepareRecorded(req, why); err != nil {
			b.Fatal(err)
		}
	}
}
