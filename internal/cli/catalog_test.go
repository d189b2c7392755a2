package cli

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// A tool's description joins what the gateway adds as its own sentence:
// "Open a ticket in our own database It writes…" read as one run-on.
func TestCatalogDescriptionEndsTheToolsSentence(t *testing.T) {
	for desc, want := range map[string]string{
		"Open a ticket in our own database":    "Open a ticket in our own database. It writes",
		"Open a ticket in our own database.":   "Open a ticket in our own database. It writes",
		"Open a ticket in our own database!  ": "Open a ticket in our own database! It writes",
		"":                                     "ticket. It writes",
	} {
		var schema jsonschema.Schema
		if err := json.Unmarshal([]byte(`{"type":"object"}`), &schema); err != nil {
			t.Fatal(err)
		}
		r, err := model.NewRegistry(model.Tool{Name: "ticket", Description: desc, Schema: &schema, Effect: model.Effect{Kind: model.EffectLocal, Table: model.TableLocalEffects}})
		if err != nil {
			t.Fatal(err)
		}
		if got := (toolCatalog{r}).Description("ticket"); len(got) < len(want) || got[:len(want)] != want {
			t.Errorf("description %q: %q; want it to start %q", desc, got, want)
		}
	}
}
