package pathquery

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/theory/jsonpath/spec"
)

// explosiveQuery compiles query with an extra function boom(v), true unless v is "boom",
// on which it panics like a library bug would.
func explosiveQuery(t *testing.T, query string) *Query {
	t.Helper()
	reg := newRegistry()
	err := reg.Register("boom", spec.FuncLogical,
		func(args []spec.FuncExprArg) error {
			if len(args) != 1 || !args[0].ConvertsTo(spec.FuncValue) {
				return errors.New("boom takes one value")
			}
			return nil
		},
		func(args []spec.PathValue) spec.PathValue {
			if v, ok := stringValue(args[0]); ok && v == "boom" {
				panic("boom")
			}
			return spec.LogicalTrue
		})
	if err != nil {
		t.Fatal(err)
	}
	q, err := compile(query, reg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

type sliceSource []any

func (s sliceSource) Len(context.Context) (int, error) { return len(s), nil }

func (s sliceSource) Each(_ context.Context, _ *Condition, fn func(td any) error) error {
	for _, td := range s {
		if err := fn(td); err != nil {
			return err
		}
	}
	return nil
}

func TestAPanickingTDContributesNothing(t *testing.T) {
	tds := sliceSource{
		map[string]any{"id": "a", "tags": []any{"x", "y"}},
		map[string]any{"id": "b", "tags": []any{"boom"}},
		map[string]any{"id": "c"},
		map[string]any{"id": "d", "tags": []any{"z"}},
	}
	for _, tc := range []struct {
		query  string
		want   []string
		failed int
	}{
		{`$[?boom(@.tags[0])].id`, []string{"a", "c", "d"}, 1},
		{`$[*].tags[?boom(@)]`, []string{"x", "y", "z"}, 1},
		{`$[::-1].tags[?boom(@)]`, []string{"z", "x", "y"}, 1},
		{`$[1:].tags[?boom(@)]`, []string{"z"}, 1},
		{`$[1].tags[?boom(@)]`, nil, 1},
		{`$..tags[?boom(@)]`, []string{"x", "y", "z"}, 1},
		{`$..[?boom(@[0])].id`, []string{"a", "b", "c", "d"}, 1},
	} {
		t.Run(tc.query, func(t *testing.T) {
			var got []string
			stats, err := Evaluate(context.Background(), explosiveQuery(t, tc.query), tds, Options{},
				func(n any) error {
					s, _ := n.(string)
					got = append(got, s)
					return nil
				})
			if err != nil {
				t.Fatal(err)
			}
			if stats.Failed != tc.failed {
				t.Errorf("Stats.Failed = %d, want %d", stats.Failed, tc.failed)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("selected %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAPanicOnTheWholeRootFailsTheEvaluation(t *testing.T) {
	tds := sliceSource{map[string]any{"title": "boom"}}
	_, err := Evaluate(context.Background(), explosiveQuery(t, `$[?boom(@.title) && $[0]]`), tds, Options{},
		func(any) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Fatalf("error %v", err)
	}
}
