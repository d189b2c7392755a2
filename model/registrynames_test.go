package model_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/retrysafe/retrysafe/model"
)

// The Go API refuses what a config file refuses: a name an agent could
// not reach over HTTP or MCP; and two tools whose names differ only in
// case, which read as one name to a person (an agent that gets the case
// wrong would reach the other tool).
func TestNewRegistryRefusesToolNamesThatDifferOnlyInCaseOrCannotBeReached(t *testing.T) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object"}`), &s); err != nil {
		t.Fatal(err)
	}
	tool := func(name string) model.Tool {
		return model.Tool{Name: name, Schema: &s, Effect: model.Effect{Kind: model.EffectLocal, Table: model.TableLocalEffects}}
	}
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"send_email", "Send_Email"}, `tool "Send_Email" differs from tool "send_email" only in case`},
		{[]string{"a", "b", "A"}, `tool "A" differs from tool "a" only in case`},
		{[]string{"a", "a"}, `tool "a" is declared twice`},
		{[]string{"a", "b"}, ""},
		// Names agents can reach over HTTP (/v1/tools/NAME) and MCP only.
		{[]string{"send.email-v2_X9"}, ""},
		{[]string{"tasks/create"}, `('/' is not one)`},
		{[]string{"a?b"}, `may hold only ASCII letters`},
		{[]string{"a#b"}, `may hold only ASCII letters`},
		{[]string{"a%2Fb"}, `may hold only ASCII letters`},
		{[]string{"my tool"}, `may hold only ASCII letters`},
		{[]string{"send", "\u0455end"}, `may hold only ASCII letters`}, // Cyrillic dze
		{[]string{".."}, `is not a name`},
		{[]string{"."}, `is not a name`},
	} {
		var tools []model.Tool
		for _, n := range c.names {
			tools = append(tools, tool(n))
		}
		_, err := model.NewRegistry(tools...)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v; want accepted", c.names, err)
		case c.want != "" && (err == nil || !model.IsCode(err, model.CodeInvalid) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v; want an invalid error containing %q", c.names, err, c.want)
		}
	}
}
