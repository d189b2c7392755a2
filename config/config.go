// Package config reads a retrysafe config file — the tools a team declares
// and the providers their external effects go to — into a tool registry and
// provider specifications. It opens nothing but the config file itself:
// every error is found before a ledger or provider file is touched, and is
// reported as `FILE:LINE: what is wrong`.
package config

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/pelletier/go-toml/v2"

	"github.com/retrysafe/retrysafe/model"
)

//go:embed default.toml
var defaultTOML []byte

// DefaultName is how errors and `--config` help name the embedded default.
const DefaultName = "(built-in default config)"

// EnvVar names the environment variable that points at a config file when
// --config is not given.
const EnvVar = "RETRYSAFE_CONFIG"

// maxProviderName bounds a provider's name (it is stored with every
// operation sent to it).
const maxProviderName = 128

// Provider kinds.
const (
	KindSandbox = "sandbox"
	KindHTTP    = "http"
)

// Config is a loaded, checked config: the tool registry and the providers.
type Config struct {
	// File is where it came from (DefaultName for the embedded default).
	File      string
	Tools     *model.Registry
	Providers []Provider
}

// Provider is one declared provider. Building it into a provider.Provider
// is the caller's (a sandbox needs its file opened; an HTTP provider needs
// nothing opened).
type Provider struct {
	Name        string
	Kind        string
	HonoursKeys bool
	// AuthoritativeLookup is the config's declaration that the provider's
	// lookup is authoritative: its "has nothing" means it never took the
	// request (not "not yet", not "elsewhere"). Only then may a "has
	// nothing" lead to a bulk "mark not applied"; any other provider's is
	// shown, and a person decides one by one. Declared, never assumed from
	// the kind.
	AuthoritativeLookup bool
	// LookupRate is the most lookups a second triage sends the provider
	// (its [providers.lookup] rate); 0 when the entry sets none, and the
	// caller's default applies. A command line's own rate overrides it.
	LookupRate float64
	// HTTP is set for kind "http".
	HTTP *HTTP
}

// Error is a config error: the file, the line (0 when the whole file is at
// fault) and what is wrong.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Default returns the embedded default config. It cannot fail at run time:
// a test loads the same bytes, so a broken default never ships.
func Default() *Config {
	c, err := Parse(DefaultName, defaultTOML, os.LookupEnv)
	if err != nil {
		panic(err)
	}
	return c
}

// DefaultTOML is the embedded default config's text (for documentation and
// for writing a starting point of one's own).
func DefaultTOML() []byte { return append([]byte(nil), defaultTOML...) }

// Resolve loads the config a command should use: flag (a path) if set, else
// $RETRYSAFE_CONFIG if set, else the embedded default. lookupEnv reads both
// $RETRYSAFE_CONFIG and the ${VAR}s of provider headers.
func Resolve(flag string, lookupEnv func(string) (string, bool)) (*Config, error) {
	path := flag
	if path == "" {
		if v, ok := lookupEnv(EnvVar); ok && v != "" {
			path = v
		}
	}
	if path == "" {
		return Parse(DefaultName, defaultTOML, lookupEnv)
	}
	return Load(path, lookupEnv)
}

// Load reads and checks the config file at path.
func Load(path string, lookupEnv func(string) (string, bool)) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read the config file: %v", err)}
	}
	return Parse(path, b, lookupEnv)
}

// The file's shape. Every field is known: an unknown key is an error.
type fileSpec struct {
	Providers []providerSpec `toml:"providers"`
	Tools     []toolSpec     `toml:"tools"`
}

type providerSpec struct {
	Name             string            `toml:"name"`
	Kind             string            `toml:"kind"`
	HonoursKeys      bool              `toml:"honours_keys"`
	Authoritative    bool              `toml:"authoritative_lookup"`
	Timeout          string            `toml:"timeout"`
	MaxResponseBytes int64             `toml:"max_response_bytes"`
	Dispatch         *endpointSpec     `toml:"dispatch"`
	Lookup           *endpointSpec     `toml:"lookup"`
	Classify         map[string]string `toml:"classify"`
}

type endpointSpec struct {
	Method     string            `toml:"method"`
	URL        string            `toml:"url"`
	Headers    map[string]string `toml:"headers"`
	KeyHeader  string            `toml:"key_header"`
	RefPointer string            `toml:"ref_pointer"`
	// Found is for [providers.lookup] of an http provider only
	// (httpapi.Endpoint.Found). A pointer: found = "" is an error, not
	// the absent key.
	Found *string `toml:"found"`
	// NotFound and NotFoundValue are for [providers.lookup] of an http
	// provider only (httpapi.Endpoint.NotFound): which 404 is the API's
	// own "no such thing". Pointers: "" is an error, not the absent key.
	NotFound      *string `toml:"not_found"`
	NotFoundValue *string `toml:"not_found_value"`
	// Rate is for [providers.lookup] only: lookups a second (see
	// Provider.LookupRate). A pointer: absent is not zero.
	Rate *float64 `toml:"rate"`
}

// MinLookupRate and MaxLookupRate bound a configured lookup rate (as
// `triage --rate` is bounded): outside them is a typo, not a provider's
// limit — 1e-7 a second would make triage wait 115 days between lookups.
const (
	MinLookupRate = 0.01
	MaxLookupRate = 100000.0
)

type toolSpec struct {
	Name           string `toml:"name"`
	Description    string `toml:"description"`
	PayloadVersion int    `toml:"payload_version"`
	Summary        string `toml:"summary"`
	Local          string `toml:"local"`
	Provider       string `toml:"provider"`
	Arguments      string `toml:"arguments"`
}

// Parse checks a config document. name is what errors call the file.
func Parse(name string, doc []byte, lookupEnv func(string) (string, bool)) (*Config, error) {
	var spec fileSpec
	dec := toml.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return nil, decodeError(name, err)
	}
	// Key positions name an error's line: indexed only once there is an
	// error to report (a valid file, every call's case, needs none).
	var pos positions
	lineOf := func(path ...string) int {
		if pos == nil {
			pos = indexPositions(doc)
		}
		return pos.line(path...)
	}
	errAt := func(path ...string) func(format string, args ...any) error {
		return func(format string, args ...any) error {
			return &Error{File: name, Line: lineOf(path...), Msg: fmt.Sprintf(format, args...)}
		}
	}
	c := &Config{File: name}
	byName := map[string]bool{}
	providerFold := map[string]string{}
	for i, ps := range spec.Providers {
		at := func(key ...string) func(string, ...any) error {
			return errAt(append([]string{"providers", fmt.Sprint(i)}, key...)...)
		}
		if ps.Name == "" {
			return nil, at()("provider %d has no name", i+1)
		}
		// A provider's name is stored with every operation sent to it and
		// shown wherever it is: a plain word, like a tool's name.
		if err := model.ValidateText("provider name", ps.Name, maxProviderName); err != nil {
			return nil, at("name")("%v", err)
		}
		if strings.ContainsAny(ps.Name, " \t") {
			return nil, at("name")("provider name %q must not contain spaces", ps.Name)
		}
		if byName[ps.Name] {
			return nil, at("name")("provider %q is declared twice", ps.Name)
		}
		// Names differing only in case read as one name to a person (and
		// to a case-insensitive shell completion or column filter).
		if first, ok := providerFold[strings.ToLower(ps.Name)]; ok {
			return nil, at("name")("provider %q differs from provider %q only in case: give it a name of its own", ps.Name, first)
		}
		byName[ps.Name] = true
		providerFold[strings.ToLower(ps.Name)] = ps.Name
		p := Provider{Name: ps.Name, Kind: ps.Kind, HonoursKeys: ps.HonoursKeys, AuthoritativeLookup: ps.Authoritative}
		switch ps.Kind {
		case KindSandbox:
			if ps.Dispatch != nil || ps.Classify != nil || ps.Timeout != "" || ps.MaxResponseBytes != 0 {
				return nil, at("kind")("provider %s: a sandbox provider takes only name, kind, honours_keys, authoritative_lookup and a [providers.lookup] rate", ps.Name)
			}
			// The sandbox's lookup is built in: its section may only pace it.
			if l := ps.Lookup; l != nil && (l.URL != "" || l.Method != "" || l.Headers != nil || l.KeyHeader != "" || l.RefPointer != "" || l.Found != nil || l.NotFound != nil || l.NotFoundValue != nil) {
				return nil, at("lookup")("provider %s: a sandbox provider's lookup is built in: its [providers.lookup] takes only rate", ps.Name)
			}
		case KindHTTP:
			h, err := parseHTTP(ps, at, lookupEnv)
			if err != nil {
				return nil, err
			}
			// Nothing to be authoritative about without a lookup: the
			// declaration would sit unused, and a reader would trust it.
			if ps.Authoritative && h.Config.Lookup == nil {
				return nil, at("authoritative_lookup")("provider %s: authoritative_lookup needs a lookup ([providers.lookup] with its url)", ps.Name)
			}
			p.HTTP = h
		case "":
			return nil, at()("provider %s: kind is required (%s or %s)", ps.Name, KindSandbox, KindHTTP)
		default:
			return nil, at("kind")("provider %s: unknown kind %q (want %s or %s)", ps.Name, ps.Kind, KindSandbox, KindHTTP)
		}
		if ps.Lookup != nil && ps.Lookup.Rate != nil {
			r := *ps.Lookup.Rate
			// !(r >= Min) also refuses NaN; inf is over the bound.
			if !(r >= MinLookupRate) || r > MaxLookupRate {
				return nil, at("lookup", "rate")("provider %s: lookup rate must be a number of lookups per second from %g to %g, not %v", ps.Name, MinLookupRate, MaxLookupRate, r)
			}
			p.LookupRate = r
		}
		c.Providers = append(c.Providers, p)
	}
	tools := make([]model.Tool, 0, len(spec.Tools))
	toolNames := map[string]bool{}
	toolFold := map[string]string{}
	for i, ts := range spec.Tools {
		at := func(key ...string) func(string, ...any) error {
			return errAt(append([]string{"tools", fmt.Sprint(i)}, key...)...)
		}
		t := model.Tool{Name: ts.Name, Description: ts.Description, PayloadVersion: ts.PayloadVersion, SummaryArg: ts.Summary}
		if ts.Name == "" {
			return nil, at()("tool %d has no name", i+1)
		}
		if toolNames[ts.Name] {
			return nil, at("name")("tool %q is declared twice", ts.Name)
		}
		// `charge` and `Charge` are one tool to a person reading a
		// receipt, and to an agent that gets the name's case wrong: a
		// call meant for one would run the other.
		if first, ok := toolFold[strings.ToLower(ts.Name)]; ok {
			return nil, at("name")("tool %q differs from tool %q only in case: give it a name of its own", ts.Name, first)
		}
		toolNames[ts.Name] = true
		toolFold[strings.ToLower(ts.Name)] = ts.Name
		switch {
		case ts.Local != "" && ts.Provider != "":
			return nil, at("provider")("tool %s: set either local (a ledger table) or provider, not both", ts.Name)
		case ts.Local == string(model.TableCustom):
			return nil, at("local")("tool %s: a custom local effect is a Go function, registered with the ledger package, not in a file (use local = \"%s\")", ts.Name, model.TableLocalEffects)
		case ts.Local != "":
			t.Effect = model.Effect{Kind: model.EffectLocal, Table: model.LocalTable(ts.Local)}
		case ts.Provider != "":
			if !byName[ts.Provider] {
				return nil, at("provider")("tool %s: unknown provider %q (declared: %s)", ts.Name, ts.Provider, declared(c.Providers))
			}
			t.Effect = model.Effect{Kind: model.EffectExternal, Provider: ts.Provider}
		default:
			return nil, at()("tool %s: say where its effect happens: local = \"%s\" (or another ledger table) or provider = \"NAME\"", ts.Name, model.TableLocalEffects)
		}
		if strings.TrimSpace(ts.Arguments) == "" {
			return nil, at()("tool %s: arguments (its JSON Schema) is required", ts.Name)
		}
		var schema jsonschema.Schema
		sd := json.NewDecoder(strings.NewReader(ts.Arguments))
		if err := sd.Decode(&schema); err != nil {
			return nil, at("arguments")("tool %s: arguments is not a JSON Schema: %s", ts.Name, oneLine(err.Error()))
		}
		t.Schema = &schema
		if t.Effect.Kind == model.EffectExternal {
			for _, p := range c.Providers {
				if p.Name == ts.Provider {
					if err := checkURLArguments(p, ts.Name, schema.Required); err != nil {
						return nil, at("provider")("%v", err)
					}
				}
			}
		}
		// Each tool is checked as it is read, so the error names its line;
		// the checked tool (its schema resolved) goes into the registry.
		one, err := model.NewRegistry(t)
		if err != nil {
			// A schema's error names the line of its keyword, inside the
			// arguments string where it stands verbatim.
			var se *model.SchemaError
			if errors.As(err, &se) {
				key := lineOf("tools", fmt.Sprint(i), "arguments")
				if l := schemaKeywordLine(doc, lineStart(doc, key), ts.Arguments, se.Pointer, se.Keyword); l > 0 {
					return nil, &Error{File: name, Line: l, Msg: err.Error()}
				}
			}
			return nil, at(keyFor(err))("%s", err.Error())
		}
		checked, err := one.Lookup(t.Name)
		if err != nil {
			return nil, err
		}
		tools = append(tools, *checked)
	}
	reg, err := model.NewRegistry(tools...)
	if err != nil {
		line := 0
		if len(spec.Tools) == 0 {
			line = 1
		} else {
			line = lineOf("tools", fmt.Sprint(len(spec.Tools)-1))
		}
		return nil, &Error{File: name, Line: line, Msg: err.Error()}
	}
	c.Tools = reg
	return c, nil
}

// keyFor guesses, from a registry error, which key of the tool it is about.
func keyFor(err error) string {
	s := err.Error()
	switch {
	case strings.Contains(s, ": description "):
		return "description"
	case strings.Contains(s, "summary"):
		return "summary"
	case strings.Contains(s, "schema"):
		return "arguments"
	case strings.Contains(s, "local table"):
		return "local"
	case strings.Contains(s, "payload version"):
		return "payload_version"
	case strings.Contains(s, "declared twice"), strings.Contains(s, "tool name"):
		return "name"
	}
	return ""
}

func declared(ps []Provider) string {
	if len(ps) == 0 {
		return "none"
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// decodeError turns the TOML library's errors into FILE:LINE: lines.
func decodeError(name string, err error) error {
	var sm *toml.StrictMissingError
	if errors.As(err, &sm) && len(sm.Errors) > 0 {
		first := sm.Errors[0]
		row, _ := first.Position()
		return &Error{File: name, Line: row, Msg: fmt.Sprintf("unknown key %q", strings.Join(first.Key(), "."))}
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if k := de.Key(); len(k) > 0 {
			msg = strings.Join(k, ".") + ": " + msg
		}
		return &Error{File: name, Line: row, Msg: msg}
	}
	return &Error{File: name, Msg: oneLine(err.Error())}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
