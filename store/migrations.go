package store

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one numbered schema step of a driver ("0003_tokens.sql").
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations reads a driver's embedded migrations from dir in fsys,
// ordered by number. They are embedded at build time, so a missing number,
// a gap or an unreadable file is a bug of the build and panics.
func Migrations(fsys fs.FS, dir string) []Migration {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		panic(err)
	}
	var out []Migration
	for _, e := range entries {
		n, err := strconv.Atoi(strings.SplitN(e.Name(), "_", 2)[0])
		if err != nil {
			panic("migration without a number: " + e.Name())
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			panic(err)
		}
		out = append(out, Migration{n, e.Name(), string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			panic(fmt.Sprintf("migrations must be numbered 1..n without gaps; %s is #%d", m.Name, i+1))
		}
	}
	return out
}
