package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/retrysafe/retrysafe/model"
)

// toolCatalog adapts the tool registry to the gateway's Catalog: the one
// seam between where tools are declared and what the gateway serves.
type toolCatalog struct{}

func (toolCatalog) Names() []string { return model.ToolNames() }

// Schema is the JSON Schema of a tool's arguments, derived from the
// registry's field list: the same rules model.Prepare enforces (required,
// non-empty strings of bounded length).
func (toolCatalog) Schema(name string) (json.RawMessage, bool) {
	t, ok := model.Tools[name]
	if !ok {
		return nil, false
	}
	props := map[string]any{}
	required := []string{}
	for _, f := range t.Fields {
		props[f.Name] = map[string]any{"type": "string", "minLength": 1, "maxLength": f.MaxLen}
		required = append(required, f.Name)
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
	return b, true
}

func (toolCatalog) Description(name string) string {
	t, ok := model.Tools[name]
	if !ok {
		return ""
	}
	var fields []string
	for _, f := range t.Fields {
		fields = append(fields, f.Name)
	}
	effect := "writes a row in the ledger's database in the same transaction as its record"
	if t.Kind == model.EffectExternal {
		effect = "sends a request to an external provider (two phases: claim recorded before dispatch)"
	}
	return fmt.Sprintf("%s: %s. Arguments: %s. Safe to call again with the same idempotency_key.",
		strings.ReplaceAll(name, "_", " "), effect, strings.Join(fields, ", "))
}

// PayloadVersion: the built-in tools are all at version 1.
func (toolCatalog) PayloadVersion(string) int { return 1 }
