package storetest

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/theory/jsonpath"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/pathquery"
)

// testListWhere runs JSONPath pre-filter conditions: whatever a store makes of them, the
// candidates include every TD the exact filter accepts, and the listing stays in id order.
func testListWhere(t *testing.T, s directory.Store) {
	docs := map[string]string{
		"urn:a": `{"id":"urn:a","title":"Lamp","@type":"lmos:Tool","on":true,"tags":["x","y"],"q\"b\\s":"odd","n":1}`,
		"urn:b": `{"id":"urn:b","title":"Fan","@type":["lmos:Tool","Thing"],"on":false,"tags":["y"],"note":null}`,
		"urn:c": `{"id":"urn:c","title":"Heater","@type":"lmos:Agent","tags":[],"actions":{"heat":{"forms":[{"href":"x"}]}}}`,
		"urn:d": `{"id":"urn:d","title":"","properties":{"p":{"readOnly":true}},"tags":[["nested"]],"on":"true"}`,
		"urn:e": `{"id":"urn:e","title":{"en":"Lamp"},"on":1,"note":"null","tags":"y"}`,
	}
	var decoded []any
	for _, id := range slices.Sorted(maps.Keys(docs)) {
		th := newThing(id, t0)
		th.Document = []byte(docs[id])
		put(t, s, th, t0)
		var v any
		if err := json.Unmarshal(th.Document, &v); err != nil {
			t.Fatal(err)
		}
		decoded = append(decoded, v)
	}
	for _, tc := range []struct {
		query string
		// exact are the candidates when every store can decide the condition exactly.
		exact []string
	}{
		{"$[?@.title=='Lamp']", []string{"urn:a"}},
		{"$[?@.title=='']", []string{"urn:d"}},
		{"$[?@['@type']=='lmos:Tool']", nil},
		{"$[?@.on==true]", []string{"urn:a"}},
		{"$[?@.on==false]", []string{"urn:b"}},
		{"$[?@.note==null]", []string{"urn:b"}},
		{`$[?@['q"b\\s']=='odd']`, nil},
		{"$[?@.actions.heat.forms[0].href]", []string{"urn:c"}},
		{"$[?@.actions.*.forms]", nil},
		{"$[?@.properties.*.readOnly]", nil},
		{"$[?@.tags[-1]=='y']", nil},
		{"$[?@.tags[0][0]=='nested']", nil},
		{"$[?@.tags[*]]", nil},
		{"$[?@.title=='Fan' || @.title=='Heater']", []string{"urn:b", "urn:c"}},
		{"$[?@.title=='Fan' && @.on==false]", []string{"urn:b"}},
		{"$[?@.title=='Fan' && @.on==true]", []string{}},
		{"$[?@.title=='Lamp' && @.tags[*]]", []string{"urn:a"}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			q, err := pathquery.Compile(tc.query, 0)
			if err != nil {
				t.Fatal(err)
			}
			passes := q.Passes()
			if len(passes) != 1 || passes[0].Cond == nil {
				t.Fatalf("no pre-filter for %s: %v", tc.query, passes)
			}
			cond := passes[0].Cond
			var candidates []string
			err = s.List(ctx(t), directory.Page{Where: cond}, t0, func(th directory.Thing) error {
				candidates = append(candidates, th.ID)
				return nil
			})
			if err != nil {
				t.Fatalf("%s: %v", cond.SQLJSONPath(), err)
			}
			if !slices.IsSorted(candidates) {
				t.Errorf("candidates %q are not in id order", candidates)
			}
			for _, node := range jsonpath.MustParse(tc.query).Select(decoded) {
				if id := node.(map[string]any)["id"].(string); !slices.Contains(candidates, id) {
					t.Errorf("%s left out %s, which the query selects", cond.SQLJSONPath(), id)
				}
			}
			if tc.exact != nil && !slices.Equal(candidates, tc.exact) {
				t.Errorf("%s: candidates %q, want %q", cond.SQLJSONPath(), candidates, tc.exact)
			}
		})
	}
}
