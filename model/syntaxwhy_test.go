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
