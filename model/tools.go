package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
)

// EffectKind says whether a tool's effect commits with the ledger or lives
// at an external provider.
type EffectKind string

const (
	EffectLocal    EffectKind = "local"
	EffectExternal EffectKind = "external"
)

// LocalTable names the ledger table a local tool's effect is a row of. The
// list is complete: a local effect is a row the ledger's own schema knows,
// so it commits in the same transaction as the operation record.
type LocalTable string

const (
	// TableTasks is the demo's support tasks: the summary argument is the
	// task's subject.
	TableTasks LocalTable = "tasks"
	// TableReportJobs is the demo's report jobs: the summary argument is
	// the report's name.
	TableReportJobs LocalTable = "report_jobs"
	// TableLocalEffects is the generic table for a team's own local tools:
	// one row per operation with the tool, tenant and canonical arguments,
	// for the team's code to read (or, from Go, an Apply function runs in
	// the same transaction).
	TableLocalEffects LocalTable = "local_effects"
	// TableCustom: the effect is a Go function the embedding program
	// registers with the service (the ledger package); it writes the
	// program's own tables in the operation's transaction. Not for config
	// files: a file cannot carry the function.
	TableCustom LocalTable = "custom"
)

// LocalTables is every local table, in a stable order.
var LocalTables = []LocalTable{TableTasks, TableReportJobs, TableLocalEffects, TableCustom}

// Effect is where a tool's effect happens.
type Effect struct {
	Kind EffectKind
	// Table is the local table (local effects only).
	Table LocalTable
	// Provider names the provider (external effects only); a call may name
	// another configured provider, an existing operation keeps its own.
	Provider string
}

// Tool describes one write tool: what it is called, what its arguments
// must look like, and where its effect happens.
type Tool struct {
	Name        string
	Description string
	// PayloadVersion is the version a call gets when it names none; it is
	// part of the fingerprint.
	PayloadVersion int
	// Schema is the JSON Schema every call's arguments must satisfy.
	Schema *jsonschema.Schema
	// SummaryArg is the argument shown on one line in lists and searched.
	SummaryArg string
	Effect     Effect

	resolved *jsonschema.Resolved
}

// Kind is the tool's effect kind.
func (t *Tool) Kind() EffectKind { return t.Effect.Kind }

// Registry is the set of tools one service knows, by name. It is a value:
// built once (from a config file or in Go), passed to whoever needs it,
// never changed after NewRegistry returns.
type Registry struct {
	tools map[string]*Tool
	names []string
	// args is Prepare's cache of arguments already checked (argscache.go).
	args *argsCache
}

// toolNameReachable holds a tool's name to the characters every way in
// takes: MCP's tool names (A-Z a-z 0-9 _ - .; the SDK leaves any other
// tool out of tools/list) and one segment of /v1/tools/{tool} (a "/", "?",
// "#" or "%" could not be reached there, and "." or ".." is a path of its
// own). ASCII only, so no two names look alike (a Cyrillic "ѕ" beside an
// "s").
func toolNameReachable(name string) error {
	if name == "." || name == ".." {
		return Errorf(CodeInvalid, "tool name %q is not a name: use letters, digits, _ - or .", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return Errorf(CodeInvalid, "tool name %q may hold only ASCII letters, digits, _ - and . (%q is not one): agents reach a tool by this name over HTTP (/v1/tools/NAME) and MCP, which take no other", name, r)
		}
	}
	return nil
}

// maxToolName bounds a tool's name (it is stored with every operation).
const maxToolName = 128

// maxDescription bounds a tool's description (sent to MCP clients with
// every tools/list).
const maxDescription = 2048

// NewRegistry checks every tool and returns the registry, or an invalid
// error naming the first tool that is wrong.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{tools: make(map[string]*Tool, len(tools)), args: &argsCache{}}
	for i := range tools {
		t := tools[i]
		if err := validateName("tool name", t.Name, maxToolName); err != nil {
			return nil, err
		}
		if err := toolNameReachable(t.Name); err != nil {
			return nil, err
		}
		// The description goes to every MCP client, which shows it on a
		// terminal: one line of printable text, like an operator's words.
		if err := ValidateText("tool "+t.Name+": description", t.Description, maxDescription); err != nil {
			return nil, err
		}
		if _, dup := r.tools[t.Name]; dup {
			return nil, Errorf(CodeInvalid, "tool %q is declared twice", t.Name)
		}
		// As config refuses: names differing only in case read as one
		// name to a person, and an agent that gets the case wrong would
		// reach the other tool.
		for _, other := range r.names {
			if strings.EqualFold(other, t.Name) {
				return nil, Errorf(CodeInvalid, "tool %q differs from tool %q only in case: give it a name of its own", t.Name, other)
			}
		}
		if t.PayloadVersion == 0 {
			t.PayloadVersion = 1
		}
		if t.PayloadVersion < 1 || t.PayloadVersion > MaxPayloadVers {
			return nil, Errorf(CodeInvalid, "tool %s: payload version must be between 1 and %d", t.Name, MaxPayloadVers)
		}
		if t.Schema == nil {
			return nil, Errorf(CodeInvalid, "tool %s: an arguments schema is required", t.Name)
		}
		// A tool taken from another registry (config checks each tool in
		// a registry of its own first) keeps its resolved schema:
		// resolving is most of what checking a tool costs.
		if t.resolved == nil || t.resolved.Schema() != t.Schema {
			// What the library loads but cannot mean (schemacheck.go):
			// a misspelt keyword it would ignore, a type it would never
			// match, a schema no call could satisfy.
			if err := checkSchema(t.Schema); err != nil {
				return nil, Wrap(CodeInvalid, err, "tool %s: arguments schema: %v", t.Name, err)
			}
			rs, err := t.Schema.Resolve(nil)
			if err != nil {
				return nil, Errorf(CodeInvalid, "tool %s: arguments schema: %v", t.Name, err)
			}
			t.resolved = rs
		}
		if loop := schemaLoop(t.Schema); loop != "" {
			return nil, Errorf(CodeInvalid, "tool %s: arguments schema: $ref loop that never reaches a property or item of the arguments (%s): validating a call would never end", t.Name, loop)
		}
		if t.Schema.Type != "object" {
			return nil, Errorf(CodeInvalid, "tool %s: arguments schema must have \"type\": \"object\" (arguments are one JSON object)", t.Name)
		}
		if t.SummaryArg != "" {
			if _, ok := t.Schema.Properties[t.SummaryArg]; !ok {
				return nil, Errorf(CodeInvalid, "tool %s: summary argument %q is not a property of its schema", t.Name, t.SummaryArg)
			}
		}
		switch t.Effect.Kind {
		case EffectLocal:
			if !validTable(t.Effect.Table) {
				return nil, Errorf(CodeInvalid, "tool %s: local table %q is not one of %s", t.Name, t.Effect.Table, tableList())
			}
			if t.Effect.Provider != "" {
				return nil, Errorf(CodeInvalid, "tool %s: a local tool names no provider", t.Name)
			}
			if t.Effect.Table != TableLocalEffects && t.SummaryArg == "" {
				return nil, Errorf(CodeInvalid, "tool %s: table %s stores the summary argument; name one", t.Name, t.Effect.Table)
			}
		case EffectExternal:
			if t.Effect.Provider == "" {
				return nil, Errorf(CodeInvalid, "tool %s: an external tool names its provider", t.Name)
			}
			if t.Effect.Table != "" {
				return nil, Errorf(CodeInvalid, "tool %s: an external tool writes no local table", t.Name)
			}
		default:
			return nil, Errorf(CodeInvalid, "tool %s: effect must be local or external, got %q", t.Name, t.Effect.Kind)
		}
		r.tools[t.Name] = &t
		r.names = append(r.names, t.Name)
	}
	if len(r.names) == 0 {
		return nil, Errorf(CodeInvalid, "no tools are declared")
	}
	return r, nil
}

func validTable(t LocalTable) bool {
	for _, x := range LocalTables {
		if t == x {
			return true
		}
	}
	return false
}

func tableList() string {
	s := make([]string, len(LocalTables))
	for i, t := range LocalTables {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// Names lists the tools in declaration order.
func (r *Registry) Names() []string { return append([]string(nil), r.names...) }

// Providers lists the providers the tools name, sorted, once each.
func (r *Registry) Providers() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range r.names {
		if p := r.tools[n].Effect.Provider; p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Lookup returns the named tool or an invalid-input error.
func (r *Registry) Lookup(name string) (*Tool, error) {
	t, ok := r.tools[name]
	if !ok {
		return nil, Errorf(CodeInvalid, "unknown tool %q (want one of %s)", name, strings.Join(r.names, ", "))
	}
	return t, nil
}

// SummaryText is the summary argument's value as it was sent (a string
// as is, any other JSON value in its JSON spelling; "" when absent).
func (t *Tool) SummaryText(args map[string]any) string {
	switch v := args[t.SummaryArg].(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// Summary renders the one-line summary of decoded args for this tool. A
// NUL in the argument is written \x00: the summary is for people, and a
// PostgreSQL ledger cannot store a NUL (a call of an external tool with one
// in its summary argument was refused there, and taken on SQLite).
func (t *Tool) Summary(args map[string]any) string {
	// Spaces, tabs and line breaks fold to one space; a line or paragraph
	// separator (U+2028, U+2029, NEL) stays, to be shown as an escape
	// (textsafe), not dropped as if it were a space.
	s := strings.Join(strings.FieldsFunc(t.SummaryText(args), func(r rune) bool {
		return unicode.IsSpace(r) && r != '\u2028' && r != '\u2029' && r != '\u0085'
	}), " ")
	s = strings.ReplaceAll(s, "\x00", `\x00`)
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}

// checkArgs validates canonical arguments against the tool's schema.
func (t *Tool) checkArgs(canonical []byte) error {
	// The schema library validates encoding/json's plain decoding (numbers
	// as float64); the canonical form's numbers are within ±2^53, so the
	// doubles are exact.
	var v any
	if err := json.NewDecoder(bytes.NewReader(canonical)).Decode(&v); err != nil {
		return Errorf(CodeInvalid, "%s: arguments: %v", t.Name, err)
	}
	if err := t.resolved.Validate(v); err != nil {
		if msg := t.explain(v.(map[string]any)); msg != "" {
			return Errorf(CodeInvalid, "%s: %s", t.Name, msg)
		}
		return Errorf(CodeInvalid, "%s: %s", t.Name, clip(t.schemaWords(err, v), 300))
	}
	return nil
}

// explain says in plain words why args fail the schema, for the failures a
// person meets most (a missing, ill-typed, empty or over-long argument at
// the top level); "" leaves it to the schema library's message. Its words
// are schemaWords' for the same refusal at any depth ("argument to: …"); a
// value is shown as there, quoted (escaped) and cut short.
func (t *Tool) explain(args map[string]any) string {
	for _, name := range t.Schema.Required {
		if _, ok := args[name]; !ok {
			return fmt.Sprintf("missing required argument %q", name)
		}
	}
	names := make([]string, 0, len(t.Schema.Properties))
	for name := range t.Schema.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ps := t.Schema.Properties[name]
		v, ok := args[name]
		if !ok || ps == nil {
			continue
		}
		if want := ps.Type; want != "" && !hasType(v, want) {
			return fmt.Sprintf("argument %s: must be %s, got %s", argName(name), article(want), jsonKind(v))
		}
		s, isString := v.(string)
		if !isString {
			continue
		}
		n := len([]rune(s))
		if ps.MinLength != nil && n < *ps.MinLength || ps.Pattern == `\S` && strings.TrimSpace(s) == "" {
			if strings.TrimSpace(s) == "" {
				return fmt.Sprintf("argument %s: must not be empty", argName(name))
			}
			return fmt.Sprintf("argument %s: %s is %s; at least %d", argName(name), clipQuoted(strconv.Quote(s)), counted(n, "character"), *ps.MinLength)
		}
		if ps.MaxLength != nil && n > *ps.MaxLength {
			return fmt.Sprintf("argument %s: %s is %s; at most %d", argName(name), clipQuoted(strconv.Quote(s)), counted(n, "character"), *ps.MaxLength)
		}
	}
	return ""
}

// argName is a top-level argument's name as argumentPath writes it:
// as is, or quoted when it is not a plain name.
func argName(name string) string {
	if !plainName.MatchString(name) {
		return strconv.Quote(name)
	}
	return name
}

func hasType(v any, want string) bool {
	switch want {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "null":
		return v == nil
	}
	return true
}

func article(typ string) string {
	switch typ {
	case "integer", "array", "object":
		return "an " + typ
	case "null":
		return "null"
	}
	return "a " + typ
}

// clip keeps a message on one line of at most n characters.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
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
