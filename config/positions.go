package config

import (
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// positions maps every key of a TOML document, as a dotted path with array
// tables numbered from 0 ("tools.2.arguments"), to the line it is on, so a
// semantic error (an unknown provider, a bad schema) names its line like a
// syntax error does. The document must already have parsed.
type positions map[string]int

func indexPositions(doc []byte) positions {
	pos := positions{}
	var p unstable.Parser
	p.Reset(doc)
	arrays := map[string]int{} // array-table path → elements so far
	prefix := []string(nil)
	line := func(n *unstable.Node) int { return p.Shape(n.Raw).Start.Line }
	// resolve turns key parts into a path, numbering every prefix that is
	// an array table with its latest element.
	resolve := func(base []string, parts []string) []string {
		out := append([]string(nil), base...)
		for _, k := range parts {
			out = append(out, k)
			if n, ok := arrays[strings.Join(out, ".")]; ok {
				out = append(out, strconv.Itoa(n-1))
			}
		}
		return out
	}
	keyParts := func(n *unstable.Node) ([]string, int) {
		var parts []string
		first := 0
		it := n.Key()
		for it.Next() {
			if first == 0 {
				first = line(it.Node())
			}
			parts = append(parts, string(it.Node().Data))
		}
		return parts, first
	}
	var keyValue func(base []string, n *unstable.Node)
	keyValue = func(base []string, n *unstable.Node) {
		parts, l := keyParts(n)
		full := append(append([]string(nil), base...), parts...)
		pos[strings.Join(full, ".")] = l
		if v := n.Value(); v != nil && v.Kind == unstable.InlineTable {
			it := v.Children()
			for it.Next() {
				keyValue(full, it.Node())
			}
		}
	}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			parts, l := keyParts(e)
			prefix = resolve(nil, parts)
			pos[strings.Join(prefix, ".")] = l
		case unstable.ArrayTable:
			parts, l := keyParts(e)
			path := resolve(nil, parts[:len(parts)-1])
			path = append(path, parts[len(parts)-1])
			key := strings.Join(path, ".")
			arrays[key]++
			prefix = append(path, strconv.Itoa(arrays[key]-1))
			pos[strings.Join(prefix, ".")] = l
		case unstable.KeyValue:
			keyValue(prefix, e)
		}
	}
	return pos
}

// line returns the line of the most specific known key along path, or 0.
func (p positions) line(path ...string) int {
	for n := len(path); n > 0; n-- {
		if l, ok := p[strings.Join(path[:n], ".")]; ok {
			return l
		}
	}
	return 0
}
