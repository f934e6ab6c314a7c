package pathquery

import (
	"slices"
	"testing"
)

func TestScanQuery(t *testing.T) {
	for _, tc := range []struct {
		query        string
		parsed       string
		renamedAt    []int
		refersToRoot bool
	}{
		{`$[?@.match=='search(']`, `$[?@.match=='search(']`, nil, false},
		{`$[?match(@.a, "match(")]`, `$[?lmosdir_match(@.a, "match(")]`, []int{3}, false},
		{`$[?search(@.a,'x\'search(') || !match(@.b,'y')]`, `$[?lmosdir_search(@.a,'x\'search(') || !lmosdir_match(@.b,'y')]`, []int{3, 32}, false},
		{`$..match[?@..search]`, `$..match[?@..search]`, nil, false},
		{`$[?@match(x)]`, `$[?@match(x)]`, nil, false},
		{`$[?xmatch(@.a)]`, `$[?xmatch(@.a)]`, nil, false},
		{`$[?2match(@.a)]`, `$[?2match(@.a)]`, nil, false},
		{`$[?match]`, `$[?match]`, nil, false},
		{`$[?match (@.a, 'b')]`, `$[?lmosdir_match (@.a, 'b')]`, []int{3}, false},
		{`$[?@.a == $.b]`, `$[?@.a == $.b]`, nil, true},
		{`$[?@.a == '$.b' && @["$"]]`, `$[?@.a == '$.b' && @["$"]]`, nil, false},
		{`$[?@.a == "\"$"]`, `$[?@.a == "\"$"]`, nil, false},
		{`$[?@.a == "unterminated $`, `$[?@.a == "unterminated $`, nil, false},
		{`$[?@.a == 'ü' && search($.x, 'y')]`, `$[?@.a == 'ü' && lmosdir_search($.x, 'y')]`, []int{18}, true},
	} {
		t.Run(tc.query, func(t *testing.T) {
			s := scanQuery(tc.query)
			if s.parsed != tc.parsed {
				t.Errorf("parsed %s, want %s", s.parsed, tc.parsed)
			}
			if !slices.Equal(s.renamedAt, tc.renamedAt) {
				t.Errorf("renamed at %v, want %v", s.renamedAt, tc.renamedAt)
			}
			if s.refersToRoot != tc.refersToRoot {
				t.Errorf("refersToRoot = %v", s.refersToRoot)
			}
		})
	}
}

func TestUserOffset(t *testing.T) {
	s := scanQuery(`$[?match(@.a,'x') && search(@.b,'y')]`)
	// The user's names start at 3 and 21, the parsed ones at 3+8 and 21+16.
	for parsed, user := range map[int]int{0: 0, 3: 3, 10: 3, 11: 3, 12: 4, 28: 20, 29: 21, 36: 21, 37: 21, 38: 22, 44: 28} {
		if got := s.userOffset(parsed); got != user {
			t.Errorf("userOffset(%d) = %d, want %d", parsed, got, user)
		}
	}
}
