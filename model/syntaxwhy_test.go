package model_test

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// Arguments that start with a UTF-8 byte order mark are refused in words
// that say so (the decoder said "invalid character 'ï'").
func TestArgumentsWithAByteOrderMarkSaySo(t *testing.T) {
	for _, c := range []struct {
		name, raw, want string
	}{
		{"a byte order mark", "\xef\xbb\xbf{\"a\":1}", "byte order mark"},
		{"after white space", " \xef\xbb\xbf{\"a\":1}", "byte order mark"},
		{"other syntax", "{\"a\":}", "invalid character"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := model.CanonicalArgs([]byte(c.raw))
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "ï") {
				t.Fatalf("%v; want it to say %q", err, c.want)
			}
		})
	}
}

// A character outside ASCII where JSON wants syntax is named whole, with
// its code point: the decoder named its first byte ("invalid character
// 'â'" for the ellipsis of a placeholder such as '{…}').
func TestArgumentsWithANonASCIICharacterNameIt(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{"{…}", `invalid character '…' (U+2026) looking for beginning of object key string`},
		{`{"a": “x”}`, `invalid character '“' (U+201C) looking for beginning of value`},
		{"{\"a\":1}\u00a0x", ``},
	} {
		_, _, err := model.CanonicalArgs([]byte(c.raw))
		if c.want == "" {
			if err == nil || strings.Contains(err.Error(), "Â") {
				t.Errorf("%q: %v", c.raw, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want %q", c.raw, err, c.want)
		}
	}
}
