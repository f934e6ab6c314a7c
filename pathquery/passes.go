package pathquery

import (
	"github.com/theory/jsonpath/spec"
)

// PassKind says what a pass over the TDs does.
type PassKind int

const (
	// PassWholeRoot loads all TDs and runs the query on their array: a filter refers to
	// the root, so no TD can be judged alone.
	PassWholeRoot PassKind = iota + 1
	// PassRootArray emits the array of all TDs as one node: the query is $ alone.
	PassRootArray
	// PassWildcard applies the rest of the query to every TD in order.
	PassWildcard
	// PassFilter applies the rest of the query to every TD the filter accepts, in order.
	PassFilter
	// PassIndex applies the rest of the query to the TD at one position.
	PassIndex
	// PassSlice applies the rest of the query to the TDs a slice selects, in its order.
	PassSlice
	// PassEachTD runs the whole query with each TD in turn as the root: what a descendant
	// segment at the top finds below the root array.
	PassEachTD
)

func (k PassKind) String() string {
	switch k {
	case PassWholeRoot:
		return "whole root"
	case PassRootArray:
		return "root array"
	case PassWildcard:
		return "wildcard"
	case PassFilter:
		return "filter"
	case PassIndex:
		return "index"
	case PassSlice:
		return "slice"
	case PassEachTD:
		return "each TD"
	}
	return "unknown"
}

// Pass is one streaming pass over the TDs. The query's result is the concatenation of
// its passes' results.
type Pass struct {
	Kind PassKind
	// Cond, set only for some filter passes, is a necessary condition for a TD to pass
	// the filter; a source may skip the TDs for which it does not hold.
	Cond *Condition
	// sel is the selector of the first segment that an index, slice or filter pass
	// applies to the root array.
	sel spec.Selector
}

// String describes the pass for logs and explanations.
func (p Pass) String() string {
	switch p.Kind {
	case PassIndex, PassSlice:
		return p.Kind.String() + " [" + p.sel.String() + "]"
	case PassFilter:
		if p.Cond != nil {
			return "filter, pre-filtered by " + p.Cond.SQLJSONPath()
		}
	}
	return p.Kind.String()
}

// plan splits q = $ s1 rest… into passes. The root is an array of TDs, so each selector of
// s1 picks whole TDs (or nothing, for a name), and rest applies to each picked TD alone.
// A descendant s1 also applies s1 rest… below the array, i.e. to each TD as a root.
func plan(q *spec.PathQuery, refersToRoot bool) []Pass {
	segments := q.Segments()
	switch {
	case refersToRoot:
		return []Pass{{Kind: PassWholeRoot}}
	case len(segments) == 0:
		return []Pass{{Kind: PassRootArray}}
	}
	var passes []Pass
	for _, sel := range segments[0].Selectors() {
		switch sel := sel.(type) {
		case spec.Name:
			// Selects nothing from an array.
		case spec.WildcardSelector:
			passes = append(passes, Pass{Kind: PassWildcard})
		case spec.Index:
			passes = append(passes, Pass{Kind: PassIndex, sel: sel})
		case spec.SliceSelector:
			passes = append(passes, Pass{Kind: PassSlice, sel: sel})
		case *spec.FilterSelector:
			passes = append(passes, Pass{Kind: PassFilter, Cond: conditionOf(sel), sel: sel})
		default:
			// A selector this package does not know: the library's own evaluation is right.
			return []Pass{{Kind: PassWholeRoot}}
		}
	}
	if segments[0].IsDescendant() {
		passes = append(passes, Pass{Kind: PassEachTD})
	}
	return passes
}
