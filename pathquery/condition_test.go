package pathquery_test

import (
	"strings"
	"testing"

	"github.com/lmosdir/lmosdir/pathquery"
)

func TestFilterConditionsAsSQLJSONPath(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  string // "" when the pass has no condition
	}{
		{`$[?@.title == 'X']`, `$ ? (@."title" == "X")`},
		{`$[?'X' == @.title]`, `$ ? (@."title" == "X")`},
		{`$[?@.a.b[0].*]`, `$ ? (exists(@."a"."b"[0].**{1}))`},
		{`$[?@['a']['b'][-1]]`, `$ ? (exists(@."a"."b"[last]))`},
		{`$[?@.a[-3] == true]`, `$ ? (@."a"[last - 2] == true)`},
		{`$[?@.a == false]`, `$ ? (@."a" == false)`},
		{`$[?@.a == null]`, `$ ? (@."a" == null)`},
		{`$[?@ == 'x']`, `$ ? (@ == "x")`},
		{`$[?@.a && @.b == 'y']`, `$ ? (exists(@."a") && @."b" == "y")`},
		{`$[?@.a || @.b]`, `$ ? (exists(@."a") || exists(@."b"))`},
		{`$[?(@.a || @.b) && @.c == 'z']`, `$ ? ((exists(@."a") || exists(@."b")) && @."c" == "z")`},
		{`$[?@.a && (@.b && @.c)]`, `$ ? (exists(@."a") && exists(@."b") && exists(@."c"))`},
		{`$[?@.a && @.b || @.c == 'v']`, `$ ? ((exists(@."a") && exists(@."b")) || @."c" == "v")`},
		// Untranslatable conjuncts are dropped.
		{`$[?@.a && !@.b]`, `$ ? (exists(@."a"))`},
		{`$[?@.a && @.n == 1]`, `$ ? (exists(@."a"))`},
		{`$[?@.a && length(@.t) > 1 && match(@.t, 'x')]`, `$ ? (exists(@."a"))`},
		{`$[?@.a && @.b != 'x' && @.c < 'x']`, `$ ? (exists(@."a"))`},
		{`$[?@.a && @.b[?@.c]]`, `$ ? (exists(@."a"))`},
		{`$[?@.a && @.registration.created == 'x']`, `$ ? (exists(@."a"))`},
		{`$[?@.a && @.*.created]`, `$ ? (exists(@."a"))`},
		{`$[?@.a && @..b]`, `$ ? (exists(@."a"))`},
		{`$[?@.a && @[1:2]]`, `$ ? (exists(@."a"))`},
		{`$[?@.a && @['b','c']]`, `$ ? (exists(@."a"))`},
		{`$[?@.a && @.b == "x\u0000"]`, `$ ? (exists(@."a"))`},
		{`$[?@.a && @["\u0000"]]`, `$ ? (exists(@."a"))`},
		{`$[?@.a && @[''] && @.b[''] == 'x']`, `$ ? (exists(@."a"))`},
		{`$[?@.a == '']`, `$ ? (@."a" == "")`},
		{`$[?@.a && @.b[4294967296]]`, `$ ? (exists(@."a"))`},
		{`$[?@.a && @.b == @.c]`, `$ ? (exists(@."a"))`},
		// Nothing translatable, or a disjunct that is not: no condition.
		{`$[?!@.a]`, ""},
		{`$[?@.a != 'x']`, ""},
		{`$[?@.n == 1.5]`, ""},
		{`$[?@.a || !@.b]`, ""},
		{`$[?@.a || @.n > 1]`, ""},
		{`$[?@.registration]`, ""},
		{`$[?@.*]`, ""},
		{`$[?@]`, ""},
		{`$[?match(@.a, 'b')]`, ""},
		{`$[?count(@.*) > 1]`, ""},
		{`$[?'a' == 'a']`, ""},
		// Names and strings are quoted and escaped as jsonpath string literals.
		{`$[?@['q"b\\s'] == 'a\nb\u001f"']`, `$ ? (@."q\"b\\s" == "a\u000ab\u001f\"")`},
		{`$[?@['lmos:metadata']['lmos:vendor'] && @['@type'] == 'ü€😀']`, `$ ? (exists(@."lmos:metadata"."lmos:vendor") && @."@type" == "ü€😀")`},
	} {
		t.Run(tc.query, func(t *testing.T) {
			passes := mustCompile(t, tc.query).Passes()
			if len(passes) != 1 || passes[0].Kind != pathquery.PassFilter {
				t.Fatalf("passes %v, want one filter pass", passes)
			}
			got := ""
			if c := passes[0].Cond; c != nil {
				got = c.SQLJSONPath()
			}
			if got != tc.want {
				t.Errorf("condition %s\n                 want %s", got, tc.want)
			}
		})
	}
}

func TestConditionTree(t *testing.T) {
	c := mustCompile(t, `$[?@.a[-1].* && (@.b == 'x' || @.c == null)]`).Passes()[0].Cond
	want := &pathquery.Condition{Kind: pathquery.CondAnd, Operands: []*pathquery.Condition{
		{Kind: pathquery.CondExists, Path: []pathquery.Step{
			{Kind: pathquery.StepName, Name: "a"},
			{Kind: pathquery.StepIndex, Index: -1},
			{Kind: pathquery.StepWildcard},
		}},
		{Kind: pathquery.CondOr, Operands: []*pathquery.Condition{
			{Kind: pathquery.CondEquals, Path: []pathquery.Step{{Kind: pathquery.StepName, Name: "b"}}, Value: "x"},
			{Kind: pathquery.CondEquals, Path: []pathquery.Step{{Kind: pathquery.StepName, Name: "c"}}, Value: nil},
		}},
	}}
	if !equalConditions(c, want) {
		t.Errorf("condition %s, want %s", c.SQLJSONPath(), want.SQLJSONPath())
	}
}

func equalConditions(a, b *pathquery.Condition) bool {
	if a.Kind != b.Kind || len(a.Operands) != len(b.Operands) || len(a.Path) != len(b.Path) || a.Value != b.Value {
		return false
	}
	for i := range a.Operands {
		if !equalConditions(a.Operands[i], b.Operands[i]) {
			return false
		}
	}
	for i := range a.Path {
		if a.Path[i] != b.Path[i] {
			return false
		}
	}
	return true
}

func TestPasses(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  []pathquery.PassKind
	}{
		{`$`, []pathquery.PassKind{pathquery.PassRootArray}},
		{`$.title`, nil},
		{`$[*].id`, []pathquery.PassKind{pathquery.PassWildcard}},
		{`$[?@.a].id`, []pathquery.PassKind{pathquery.PassFilter}},
		{`$[1, -1:, 'x', ?@.a, *]`, []pathquery.PassKind{pathquery.PassIndex, pathquery.PassSlice, pathquery.PassFilter, pathquery.PassWildcard}},
		{`$..title`, []pathquery.PassKind{pathquery.PassEachTD}},
		{`$..[0, ?@.a]`, []pathquery.PassKind{pathquery.PassIndex, pathquery.PassFilter, pathquery.PassEachTD}},
		{`$[?@.id == $[0].id]`, []pathquery.PassKind{pathquery.PassWholeRoot}},
		{`$[0][?length($) > 1]`, []pathquery.PassKind{pathquery.PassWholeRoot}},
		{`$[?count(@[?@ == $[0]]) > 1]`, []pathquery.PassKind{pathquery.PassWholeRoot}},
		{`$[?@.a == '$[0]']`, []pathquery.PassKind{pathquery.PassFilter}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			var got []pathquery.PassKind
			for _, p := range mustCompile(t, tc.query).Passes() {
				got = append(got, p.Kind)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("passes %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("passes %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestPassDescriptions(t *testing.T) {
	var got []string
	for _, p := range mustCompile(t, `$..[1, -1::-2, ?@.a == 'x', ?!@.b, *]`).Passes() {
		got = append(got, p.String())
	}
	want := []string{
		"index [1]",
		"slice [-1::-2]",
		`filter, pre-filtered by $ ? (@."a" == "x")`,
		"filter",
		"wildcard",
		"each TD",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("descriptions\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
