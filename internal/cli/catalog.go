package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/retrysafe/retrysafe/model"
)

// toolCatalog adapts the tool registry to the gateway's Catalog: the one
// seam between where tools are declared (the config) and what the gateway
// serves.
type toolCatalog struct{ tools *model.Registry }

func (c toolCatalog) Names() []string { return c.tools.Names() }

// Schema is the tool's JSON Schema from its declaration: the one
// Prepare validates every call against.
func (c toolCatalog) Schema(name string) (json.RawMessage, bool) {
	t, err := c.tools.Lookup(name)
	if err != nil {
		return nil, false
	}
	b, err := json.Marshal(t.Schema)
	return b, err == nil
}

func (c toolCatalog) Description(name string) string {
	t, err := c.tools.Lookup(name)
	if err != nil {
		return ""
	}
	effect := "writes a row in the ledger's database in the same transaction as its record"
	if t.Kind() == model.EffectExternal {
		effect = "sends a request to an external provider (two phases: claim recorded before dispatch)"
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = t.Name
	}
	// The tool's words are a sentence of their own before ours.
	if !strings.ContainsAny(desc[len(desc)-1:], ".!?") {
		desc += "."
	}
	return fmt.Sprintf("%s It %s. Safe to call again with the same idempotency_key.", desc, effect)
}
