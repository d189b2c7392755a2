package model

import "bytes"

// syntaxWhy is err, a JSON decoder's refusal of raw, in words a client
// can act on where the decoder's are not: JSON text that starts with a
// UTF-8 byte order mark read "invalid character 'ï' looking for beginning
// of value".
func syntaxWhy(raw []byte, err error) any {
	if bytes.HasPrefix(bytes.TrimLeft(raw, " \t\r\n"), []byte{0xEF, 0xBB, 0xBF}) {
		return "they start with a UTF-8 byte order mark (bytes EF BB BF), which JSON does not allow — send them without one"
	}
	return err
}
