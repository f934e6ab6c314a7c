package pathquery_test

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/lmosdir/lmosdir/internal/tdgen"
	"github.com/lmosdir/lmosdir/pathquery"
)

// handWritten are TDs the generator never makes: without title, description or security,
// so that functions meet Nothing; with numbers, nulls, nested arrays and a registration
// member, which the directory adds to the TDs it evaluates but does not store.
var handWritten = []string{
	`{"id":"urn:hand:0","@type":"lmos:Tool","n":1,"nested":{"flag":false,"val":null,"list":[[1,2],[3]]},
	  "registration":{"created":"2024-01-01T00:00:00Z","retrieved":"2024-02-01T00:00:00Z"}}`,
	`{"id":"urn:hand:1","title":"Line\nbreak Agent","n":2.5,"extra":{"nums":[1,2,3],"match":"search("},
	  "links":[{"rel":"service-doc","href":"https://x.example/doc","hreflang":"en"}],
	  "registration":{"created":"2024-03-01T00:00:00Z"}}`,
	`{"id":"urn:hand:2","description":"no title here","security":["nosec_sc"],"titles":{"en":"Hand"},
	  "actions":{"a":{"safe":true,"forms":[{"op":"invokeaction","href":"a"}]}},"n":"1"}`,
	`{"id":"urn:hand:3","title":"","n":null,"extra":{"nums":[],"deep":{"deeper":{"title":"inner"}}},
	  "match":"yes","registration":{"created":"2024-04-01T00:00:00Z","expires":"2030-01-01T00:00:00Z"}}`,
	`{"id":"urn:hand:4","title":"ab","security":"nosec_sc","properties":{},"events":[],"registration":{}}`,
}

// corpus is the root array: 2,000 generated TDs and the hand-written ones, in id order.
var corpus = sync.OnceValue(func() []any {
	g := tdgen.New(7)
	type entry struct {
		id string
		td any
	}
	entries := make([]entry, 0, 2000+len(handWritten))
	for i := range 2000 {
		entries = append(entries, entry{g.ID(i), decode(g.TD(i))})
	}
	for _, doc := range handWritten {
		td := decode([]byte(doc))
		entries = append(entries, entry{td.(map[string]any)["id"].(string), td})
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.id, b.id) })
	tds := make([]any, len(entries))
	for i, e := range entries {
		tds[i] = e.td
	}
	return tds
})

func decode(doc []byte) any {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		panic(err)
	}
	return v
}

// memSource streams an in-memory root array. It skips the TDs a Condition rules out, judged
// on the TD as the directory stores it (without registration) with PostgreSQL's lax-mode
// semantics, so a condition that is not really necessary loses results in the tests.
type memSource struct {
	tds []any
	// skipped counts the TDs left out because of a Condition.
	skipped int
}

func (s *memSource) Len(context.Context) (int, error) { return len(s.tds), nil }

func (s *memSource) Each(ctx context.Context, cond *pathquery.Condition, fn func(td any) error) error {
	for _, td := range s.tds {
		if err := ctx.Err(); err != nil {
			return err
		}
		if cond != nil && !holds(cond, stored(td)) {
			s.skipped++
			continue
		}
		if err := fn(td); err != nil {
			return err
		}
	}
	return nil
}

// stored is td without the registration member the directory adds when it serves a TD.
func stored(td any) any {
	obj, ok := td.(map[string]any)
	if !ok {
		return td
	}
	if _, ok := obj["registration"]; !ok {
		return td
	}
	without := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "registration" {
			without[k] = v
		}
	}
	return without
}

// holds interprets c as `doc @? c.SQLJSONPath()` does in PostgreSQL's lax mode.
func holds(c *pathquery.Condition, doc any) bool {
	switch c.Kind {
	case pathquery.CondAnd:
		for _, o := range c.Operands {
			if !holds(o, doc) {
				return false
			}
		}
		return true
	case pathquery.CondOr:
		for _, o := range c.Operands {
			if holds(o, doc) {
				return true
			}
		}
		return false
	case pathquery.CondExists:
		return len(laxSelect(doc, c.Path)) > 0
	case pathquery.CondEquals:
		// Comparison operands are unwrapped one level in lax mode.
		for _, item := range laxSelect(doc, c.Path) {
			for _, v := range unwrapArray(item) {
				if laxEqual(v, c.Value) {
					return true
				}
			}
		}
		return false
	}
	panic("unknown condition kind")
}

// laxSelect follows path as lax mode does: a member accessor looks into the elements of an
// array, an index accessor treats a non-array as a one-element array, and .**{1} yields
// the members of an object and the elements of an array.
func laxSelect(doc any, path []pathquery.Step) []any {
	items := []any{doc}
	for _, step := range path {
		var next []any
		for _, item := range items {
			switch step.Kind {
			case pathquery.StepName:
				for _, v := range unwrapArray(item) {
					if obj, ok := v.(map[string]any); ok {
						if member, ok := obj[step.Name]; ok {
							next = append(next, member)
						}
					}
				}
			case pathquery.StepIndex:
				arr, ok := item.([]any)
				if !ok {
					arr = []any{item}
				}
				i := step.Index
				if i < 0 {
					i += len(arr) // last - k
				}
				if 0 <= i && i < len(arr) {
					next = append(next, arr[i])
				}
			case pathquery.StepWildcard:
				switch v := item.(type) {
				case map[string]any:
					for _, member := range v {
						next = append(next, member)
					}
				case []any:
					next = append(next, v...)
				}
			}
		}
		items = next
	}
	return items
}

func unwrapArray(v any) []any {
	if arr, ok := v.([]any); ok {
		return arr
	}
	return []any{v}
}

// laxEqual compares as jsonpath == does for the literals a Condition holds: strings by
// bytes, booleans, and null equal to null only.
func laxEqual(v, literal any) bool {
	switch l := literal.(type) {
	case string:
		s, ok := v.(string)
		return ok && s == l
	case bool:
		b, ok := v.(bool)
		return ok && b == l
	case nil:
		return v == nil
	}
	return false
}

// collect evaluates q over a memSource of tds and returns the emitted nodes.
func collect(t *testing.T, q *pathquery.Query, src pathquery.Source, opts pathquery.Options) ([]any, pathquery.Stats) {
	t.Helper()
	var nodes []any
	stats, err := pathquery.Evaluate(context.Background(), q, src, opts, func(n any) error {
		nodes = append(nodes, n)
		return nil
	})
	if err != nil {
		t.Fatalf("Evaluate(%s): %v", q, err)
	}
	return nodes, stats
}

func mustCompile(t *testing.T, query string) *pathquery.Query {
	t.Helper()
	q, err := pathquery.Compile(query, 0)
	if err != nil {
		t.Fatalf("Compile(%s): %v", query, err)
	}
	return q
}
