package model_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// enumLists is every string enum of the model and the variable that lists
// all its values. A const added to one of these types but not to its list
// is a value the console cannot filter by, the CLI does not accept and the
// SQL CHECK tests do not check; the test below reads the source to find it.
var enumLists = map[string]string{
	"State":         "AllStates",
	"Outcome":       "AllOutcomes",
	"Action":        "AllActions",
	"Class":         "AllClasses",
	"FindingKind":   "AllFindingKinds",
	"FindingFilter": "AllFindingFilters",
	"LocalTable":    "LocalTables",
	"SortColumn":    "AllSortColumns",
}

// notEnumerated are the model's string types with consts but no list of
// all values, and why none is needed. A new string type with consts goes
// into one map or the other.
var notEnumerated = map[string]string{
	"Code":       "error codes: branched on by callers, never stored, listed or parsed",
	"EffectKind": "local or external: every use is a two-way branch",
}

// notListed are consts deliberately left out of their type's list.
var notListed = map[string]string{
	"FilterAnyFinding": "the zero value, no filter at all: AllFindingFilters is every filter but \"any\"",
}

// modelSource parses the model package's own files (no tests).
func modelSource(t *testing.T) []*ast.File {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatal("no model source found")
	}
	return files
}

// Every const of each enum type is in the type's All list, once, and every
// string type that has consts is either enumerated or says why not — read
// from the source with go/parser, so nothing has to remember to update a
// test when a value is added.
func TestEveryEnumConstIsInItsAllList(t *testing.T) {
	consts := map[string][]string{} // type → const names
	lists := map[string][]string{}  // list var → element names
	stringTypes := map[string]bool{}
	for _, f := range modelSource(t) {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			var lastType string // a const without a type repeats the one before (iota style)
			for _, spec := range gd.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if id, ok := s.Type.(*ast.Ident); ok && id.Name == "string" {
						stringTypes[s.Name.Name] = true
					}
				case *ast.ValueSpec:
					typ := ""
					if id, ok := s.Type.(*ast.Ident); ok {
						typ = id.Name
					}
					switch gd.Tok {
					case token.CONST:
						if typ == "" && len(s.Values) == 0 {
							typ = lastType
						}
						lastType = typ
						for _, n := range s.Names {
							if n.Name != "_" && typ != "" {
								consts[typ] = append(consts[typ], n.Name)
							}
						}
					case token.VAR:
						for i, n := range s.Names {
							if i >= len(s.Values) {
								continue
							}
							if cl, ok := s.Values[i].(*ast.CompositeLit); ok {
								for _, e := range cl.Elts {
									if id, ok := e.(*ast.Ident); ok {
										lists[n.Name] = append(lists[n.Name], id.Name)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	for typ := range consts {
		if !stringTypes[typ] {
			continue
		}
		_, listed := enumLists[typ]
		_, exempt := notEnumerated[typ]
		if !listed && !exempt {
			t.Errorf("model type %s has consts %v but no entry in enumLists (and its All list) or notEnumerated", typ, consts[typ])
		}
	}
	for typ, list := range enumLists {
		names, ok := consts[typ]
		if !ok {
			t.Errorf("enumLists names type %s, which has no consts in model", typ)
			continue
		}
		elems, ok := lists[list]
		if !ok {
			t.Errorf("no var %s = []%s{...} in model", list, typ)
			continue
		}
		for _, e := range elems {
			if n := strings.Count(" "+strings.Join(elems, " ")+" ", " "+e+" "); n > 1 {
				t.Errorf("%s lists %s %d times", list, e, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			if _, ok := notListed[n]; !ok && !slices.Contains(elems, n) {
				t.Errorf("%s %s is missing from %s", typ, n, list)
			}
		}
		for _, e := range elems {
			if !slices.Contains(names, e) {
				t.Errorf("%s lists %s, which is not a const of type %s", list, e, typ)
			}
		}
	}
}

// sqlCheckLists reads the list of every CHECK on column in one driver's
// migrations (store/DRIVER/migrations), written either as an IN list,
// CHECK (col IN ('a','b')), or as an OR chain, CHECK (col = 'a' OR col =
// 'b') — SQLite's migration 9 spells the hot tables' CHECKs so, inside the
// schema text it writes, where every quote is doubled — or, inside the
// function a CHECK calls, as (col IN ('a','b')) IS NOT FALSE (PostgreSQL's
// migration 10). The last migration that mentions a column wins, and
// within one the last mention.
func sqlCheckLists(t *testing.T, driver string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(driver, "migrations", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations found in %s: %v", driver, err)
	}
	sort.Strings(files)
	inList := regexp.MustCompile(`CHECK\s*\(\s*(\w+)\s+IN\s*\(([^)]*)\)|\(\s*(\w+)\s+IN\s*\(([^)]*)\)\)\s*IS NOT FALSE`)
	orChain := regexp.MustCompile(`CHECK\s*\(\s*(\w+\s*=\s*'[^']*'(?:\s+OR\s+\w+\s*=\s*'[^']*')+)\s*\)`)
	term := regexp.MustCompile(`(\w+)\s*=\s*'([^']*)'`)
	out := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(b), "''", "'")
		type mention struct {
			at   int
			col  string
			vals []string
		}
		var found []mention
		for _, m := range inList.FindAllStringSubmatchIndex(text, -1) {
			if m[2] < 0 { // the function form's groups
				m = append(m[:2], m[6:]...)
			}
			var vals []string
			for _, v := range strings.Split(text[m[4]:m[5]], ",") {
				vals = append(vals, strings.Trim(strings.TrimSpace(v), "'"))
			}
			found = append(found, mention{m[0], text[m[2]:m[3]], vals})
		}
		for _, m := range orChain.FindAllStringSubmatchIndex(text, -1) {
			var col string
			var vals []string
			for _, tm := range term.FindAllStringSubmatch(text[m[2]:m[3]], -1) {
				if col != "" && tm[1] != col {
					t.Errorf("%s: an OR chain CHECK compares %s and %s; an enum CHECK names one column", f, col, tm[1])
				}
				col = tm[1]
				vals = append(vals, tm[2])
			}
			found = append(found, mention{m[0], col, vals})
		}
		sort.Slice(found, func(i, j int) bool { return found[i].at < found[j].at })
		for _, m := range found {
			out[m.col] = m.vals
		}
	}
	return out
}

func sameSet(t *testing.T, what string, sqlVals []string, modelVals []string) {
	t.Helper()
	a := append([]string(nil), sqlVals...)
	b := append([]string(nil), modelVals...)
	sort.Strings(a)
	sort.Strings(b)
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("%s: SQL CHECK lists %v, the model lists %v", what, a, b)
	}
}

// The SQL CHECK constraints and the Go lists must agree both ways: a state
// the model can produce but SQL refuses fails at runtime; a state SQL allows
// but the model does not know is data nobody can read. (store's tests insert
// each value into a real ledger; this one reads the migration text.)
// Every driver's migrations are checked.
func TestSQLCheckListsMatchTheModel(t *testing.T) {
	drivers, _ := filepath.Glob(filepath.Join("..", "store", "*", "migrations"))
	if len(drivers) == 0 {
		t.Fatal("no driver migrations found under store/")
	}
	for _, d := range drivers {
		t.Run(filepath.Base(filepath.Dir(d)), func(t *testing.T) { checkListsMatch(t, sqlCheckLists(t, filepath.Dir(d))) })
	}
}

func checkListsMatch(t *testing.T, lists map[string][]string) {
	var states, outcomes, actions []string
	for _, s := range model.AllStates {
		states = append(states, string(s))
	}
	for _, o := range model.AllOutcomes {
		outcomes = append(outcomes, string(o))
	}
	for _, a := range model.AllActions {
		actions = append(actions, string(a))
	}
	var findings []string
	for _, f := range model.AllFindingKinds {
		findings = append(findings, string(f))
	}
	wantLists := map[string][]string{"state": states, "final_state": states, "outcome": outcomes, "action": actions, "finding": findings}
	for col, vals := range lists {
		if _, ok := wantLists[col]; !ok && strings.Join(vals, ",") != "0,1" { // a boolean is no enum
			t.Errorf("the migrations CHECK %s IN %v, which no model list is compared with", col, vals)
		}
	}
	for col, want := range wantLists {
		got, ok := lists[col]
		if !ok {
			t.Errorf("no CHECK (%s IN (...)) found in the migrations", col)
			continue
		}
		sameSet(t, col, got, want)
	}
}
