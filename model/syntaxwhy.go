package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// syntaxWhy is err, a JSON decoder's refusal of raw, in words a client
// can act on where the decoder's are not: JSON text that starts with a
// UTF-8 byte order mark read "invalid character 'ï' looking for beginning
// of value", and any character outside ASCII was named by its first byte
// ("invalid character 'â'" for an ellipsis, …): it is named whole, with its
// code point.
func syntaxWhy(raw []byte, err error) any {
	if bytes.HasPrefix(bytes.TrimLeft(raw, " \t\r\n"), []byte{0xEF, 0xBB, 0xBF}) {
		return "they start with a UTF-8 byte order mark (bytes EF BB BF), which JSON does not allow — send them without one"
	}
	var se *json.SyntaxError
	if !errors.As(err, &se) || se.Offset < 1 || se.Offset > int64(len(raw)) || raw[se.Offset-1] < utf8.RuneSelf {
		return err
	}
	r, _ := utf8.DecodeRune(raw[se.Offset-1:])
	if r == utf8.RuneError {
		return err
	}
	msg := se.Error()
	at := strings.Index(msg, "'")
	end := strings.Index(msg[at+1:], "'")
	if !strings.HasPrefix(msg, "invalid character '") || end < 0 {
		return err
	}
	name := fmt.Sprintf("U+%04X", r)
	if unicode.IsGraphic(r) && !unicode.IsSpace(r) {
		name = fmt.Sprintf("'%c' (%s)", r, name)
	}
	return fmt.Sprintf("invalid character %s%s at byte %d", name, msg[at+1+end+1:], se.Offset)
}
