package model

// SortColumn is the order a list of operations is read in. Every order ends
// on the row id, so it is total and a page can be anchored on one row.
type SortColumn string

const (
	// SortAge: newest first (by id, which grows with creation time).
	SortAge SortColumn = "age"
	// SortKey: by tenant, then key, A → Z (one tenant's keys in order).
	SortKey SortColumn = "key"
	// SortState: by state name, A → Z (applied … unknown).
	SortState SortColumn = "state"
	// SortTenant: by tenant, A → Z, oldest first within one.
	SortTenant SortColumn = "tenant"
	// SortTool: by tool name, A → Z.
	SortTool SortColumn = "tool"
	// SortChanged: by the last change, longest unchanged first (what has
	// been stuck longest).
	SortChanged SortColumn = "changed"
)

// AllSortColumns is every order, in the console's cycle order.
var AllSortColumns = []SortColumn{SortAge, SortKey, SortState, SortTenant, SortTool, SortChanged}

// ParseSortColumn accepts a column name; "" is SortAge.
func ParseSortColumn(s string) (SortColumn, error) {
	if s == "" {
		return SortAge, nil
	}
	for _, c := range AllSortColumns {
		if string(c) == s {
			return c, nil
		}
	}
	switch s {
	case "stuck", "updated":
		return SortChanged, nil
	case "created", "new", "newest":
		return SortAge, nil
	}
	return "", Errorf(CodeInvalid, "unknown sort column %q (want age, key, state, tenant, tool or changed)", s)
}

// Valid reports whether c is one of AllSortColumns or "" (SortAge).
func (c SortColumn) Valid() bool {
	if c == "" {
		return true
	}
	for _, x := range AllSortColumns {
		if x == c {
			return true
		}
	}
	return false
}

// Next is the order after c in AllSortColumns, wrapping.
func (c SortColumn) Next() SortColumn {
	for i, x := range AllSortColumns {
		if x == c {
			return AllSortColumns[(i+1)%len(AllSortColumns)]
		}
	}
	return AllSortColumns[1]
}

// Descending reports whether the column's natural order reads the rows
// from the highest value down: only age (newest first).
func (c SortColumn) Descending() bool { return c == SortAge || c == "" }

// Words says the order for a status line: "key A→Z", "age oldest first".
func (c SortColumn) Words(reverse bool) string {
	switch c {
	case SortAge, "":
		if reverse {
			return "oldest first"
		}
		return "newest first"
	case SortChanged:
		if reverse {
			return "changed, most recent first"
		}
		return "changed, longest unchanged first"
	}
	if reverse {
		return string(c) + " Z→A"
	}
	return string(c) + " A→Z"
}
