package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// schemaKeywordLine is the line of the doc a schema's keyword is on: the
// schema's JSON text (args) as it stands in doc from byte from on (a
// literal string, multi-line or not, stands verbatim), and the keyword at
// pointer in it. 0 when it cannot tell (a basic string with escapes, or
// no such keyword): the caller names the arguments key's line.
func schemaKeywordLine(doc []byte, from int, args, pointer, keyword string) int {
	if keyword == "" || from < 0 || from > len(doc) {
		return 0
	}
	at := strings.Index(string(doc[from:]), args)
	if at < 0 {
		return 0
	}
	off := keywordOffset(args, pointer, keyword)
	if off < 0 {
		return 0
	}
	end := from + at + off
	return 1 + strings.Count(string(doc[:end]), "\n")
}

// lineStart is the byte offset of line n (from 1) of doc; -1 past its end.
func lineStart(doc []byte, n int) int {
	off := 0
	for l := 1; l < n; l++ {
		i := bytes.IndexByte(doc[off:], '\n')
		if i < 0 {
			return -1
		}
		off += i + 1
	}
	return off
}

var errFound = errors.New("found")

// keywordOffset is the byte offset, in the JSON text of a schema, inside
// the key keyword of the object at pointer (RFC 6901), or -1.
func keywordOffset(text, pointer, keyword string) int {
	var want []string
	if pointer != "" {
		for _, seg := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
			want = append(want, strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~"))
		}
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	found := -1
	var value func(path []string) error
	value = func(path []string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		switch d {
		case '{':
			here := samePath(path, want)
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := k.(string)
				if here && key == keyword {
					// The offset is just past the key's closing quote,
					// on the key's line (a JSON string holds no newline).
					found = int(dec.InputOffset()) - 1
					return errFound
				}
				if err := value(append(path[:len(path):len(path)], key)); err != nil {
					return err
				}
			}
		case '[':
			for i := 0; dec.More(); i++ {
				if err := value(append(path[:len(path):len(path)], strconv.Itoa(i))); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	if err := value(nil); err != nil && err != errFound && err != io.EOF {
		return -1
	}
	return found
}

func samePath(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
