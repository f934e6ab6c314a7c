package pathquery

import "github.com/theory/jsonpath/spec"

// FilterAccepts tells whether the exact filter of a PassFilter accepts td, for tests that
// check a pass's Condition against it.
func FilterAccepts(p Pass, td any) bool {
	return p.sel.(*spec.FilterSelector).Eval(td, td)
}
