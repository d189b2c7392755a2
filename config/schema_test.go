package config_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/config"
)

// A schema the library would load but could not mean — a typo it would
// ignore, a type it would never match, a dialect it cannot validate, a
// schema no call satisfies — is a config error at load, on the line of
// the keyword at fault (inside a literal string, multi-line or not, where it stands
// verbatim; else the arguments key's), naming the keyword and why. No
// call is then refused as the caller's fault for the file's mistake.
func TestConfigRefusesSchemasOnTheKeywordsLine(t *testing.T) {
	tool := func(schema string) string {
		return "[[tools]]\nname = \"x\"\nlocal = \"local_effects\"\narguments = '''\n" + schema + "\n'''\n"
	}
	cases := []struct {
		name, doc string
		line      int
		want      []string
	}{
		{"a typo in a property", tool("{\n  \"type\": \"object\",\n  \"properties\": {\n    \"to\": {\"type\": \"string\", \"maxLenght\": 5}\n  }\n}"), 8,
			[]string{`tool x: arguments schema: unknown keyword "maxLenght" at /properties/to`, `did you mean "maxLength"?`}},
		{"a typo at the top", tool("{\n  \"type\": \"object\",\n  \"propertie\": {}\n}"), 7, []string{`unknown keyword "propertie" at the top level`}},
		{"a misspelt type", tool("{\"type\": \"object\",\n \"properties\": {\"a\": {\"type\": \"strin\"}}}"), 6, []string{`"type" at /properties/a is "strin"`}},
		{"an evil $schema", tool("{\n\"$schema\": \"http://example.com/evil\",\n\"type\": \"object\"}"), 6, []string{`"$schema" "http://example.com/evil" is not a dialect`}},
		{"required but additionalProperties false", tool("{\"type\": \"object\",\n\"properties\": {\"a\": {}},\n\"additionalProperties\": false,\n\"required\": [\"b\"]}"), 8, []string{`"required" at the top level names "b"`}},
		{"an empty enum", tool("{\"type\": \"object\",\n\"properties\": {\"a\": {\"enum\": []}}}"), 6, []string{`"enum" at /properties/a is empty`}},
		{"not {} at the top: the arguments line", tool("{\"type\": \"object\",\n\"not\": {}}"), 4, []string{"no arguments can satisfy"}},
		{"a negative minLength", tool("{\"type\": \"object\", \"properties\": {\n\"a\": {\"minLength\": -1}}}"), 6, []string{`"minLength" at /properties/a is -1`}},
		{"a basic string: the arguments line", "[[tools]]\nname = \"x\"\nlocal = \"local_effects\"\narguments = \"{\\\"type\\\": \\\"object\\\", \\\"propertie\\\": {}}\"\n", 4, []string{`unknown keyword "propertie"`}},
		{"the second of two tools", goodTool + tool("{\"type\": \"object\",\n\"properties\": {\"title\": {\"type\": \"string\"}},\n\"required\": [\"titel\"]}"), 16, []string{`"required" at the top level names "titel"`, `did you mean "title"?`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("tools.toml", []byte(c.doc), noEnv)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			prefix := "tools.toml:" + itoa(c.line) + ": "
			if !strings.HasPrefix(msg, prefix) || strings.Contains(msg, "\n") {
				t.Errorf("got %q; want one line starting %q", msg, prefix)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("got %q; want it to contain %q", msg, w)
				}
			}
		})
	}
}

// Every config the README shows (a ```toml block with tools) loads, as the
// built-in default does: the checks refuse mistakes, not the examples.
func TestTheREADMEsConfigsLoad(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```toml\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	n := 0
	anyEnv := func(string) (string, bool) { return "set", true }
	for _, b := range blocks {
		if !strings.Contains(b[1], "[[tools]]") {
			continue
		}
		n++
		if _, err := config.Parse("README.md", []byte(b[1]), anyEnv); err != nil {
			t.Errorf("a README config: %v", err)
		}
	}
	if n == 0 {
		t.Fatal("no README config with tools found")
	}
	if _, err := config.Parse(config.DefaultName, config.DefaultTOML(), anyEnv); err != nil {
		t.Errorf("the default: %v", err)
	}
}
