package model

import (
	"encoding/json"
	"fmt"
	"strings"
)

// EffectKind says whether a tool's effect commits with the ledger or lives
// at an external provider.
type EffectKind string

const (
	EffectLocal    EffectKind = "local"
	EffectExternal EffectKind = "external"
)

// Field is one required string argument of a tool.
type Field struct {
	Name   string
	MaxLen int
}

// Tool describes one write tool retrysafe knows how to run.
type Tool struct {
	Name   string
	Kind   EffectKind
	Fields []Field
	// SummaryField is the argument shown on one line in lists and searched.
	SummaryField string
}

// Tools is every tool, by name.
var Tools = map[string]Tool{
	"create_support_task": {Name: "create_support_task", Kind: EffectLocal,
		Fields: []Field{{"subject", 1000}}, SummaryField: "subject"},
	"create_report_job": {Name: "create_report_job", Kind: EffectLocal,
		Fields: []Field{{"report", 200}}, SummaryField: "report"},
	"send_notification": {Name: "send_notification", Kind: EffectExternal,
		Fields: []Field{{"to", 320}, {"body", 10000}}, SummaryField: "to"},
}

// ToolNames lists the tools in a stable order.
func ToolNames() []string {
	return []string{"create_support_task", "create_report_job", "send_notification"}
}

// LookupTool returns the named tool or an invalid-input error.
func LookupTool(name string) (Tool, error) {
	t, ok := Tools[name]
	if !ok {
		return Tool{}, Errorf(CodeInvalid, "unknown tool %q (want one of %s)", name, strings.Join(ToolNames(), ", "))
	}
	return t, nil
}

// Summary renders the one-line summary of canonical args for this tool.
func (t Tool) Summary(args map[string]any) string {
	s, _ := args[t.SummaryField].(string)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}

// checkArgs verifies the required fields of a decoded argument object.
func (t Tool) checkArgs(args map[string]any) error {
	for _, f := range t.Fields {
		v, ok := args[f.Name]
		if !ok {
			return Errorf(CodeInvalid, "%s: missing required argument %q", t.Name, f.Name)
		}
		s, ok := v.(string)
		if !ok {
			return Errorf(CodeInvalid, "%s: argument %q must be a string, got %s", t.Name, f.Name, jsonKind(v))
		}
		if strings.TrimSpace(s) == "" {
			return Errorf(CodeInvalid, "%s: argument %q must not be empty", t.Name, f.Name)
		}
		if n := len([]rune(s)); n > f.MaxLen {
			return Errorf(CodeInvalid, "%s: argument %q is %d characters; at most %d", t.Name, f.Name, n, f.MaxLen)
		}
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}
