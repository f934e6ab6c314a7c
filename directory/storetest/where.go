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
// All but urn:e and urn:f carry the index the directory would derive for their title and
// @type, so that a store may answer from its index; those two have none, as before their
// derivation, and must be found all the same.
func testListWhere(t *testing.T, s directory.Store) {
	docs := map[string]string{
		"urn:a": `{"id":"urn:a","title":"Lamp","@type":"lmos:Tool","on":true,"tags":["x","y"],"q\"b\\s":"odd","n":1}`,
		"urn:b": `{"id":"urn:b","title":"Fan","@type":["lmos:Tool","Thing"],"on":false,"tags":["y"],"note":null}`,
		"urn:c": `{"id":"urn:c","title":"Heater","@type":"lmos:Agent","tags":[],"actions":{"heat":{"forms":[{"href":"x"}]}}}`,
		"urn:d": `{"id":"urn:d","title":"","properties":{"p":{"readOnly":true}},"tags":[["nested"]],"on":"true"}`,
		"urn:e": `{"id":"urn:e","title":{"en":"Lamp"},"on":1,"note":"null","tags":"y"}`,
		"urn:f": `{"id":"urn:f","title":"Lamp","@type":"lmos:Agent"}`,
	}
	var decoded []any
	for _, id := range slices.Sorted(maps.Keys(docs)) {
		th := newThing(id, t0)
		th.Document = []byte(docs[id])
		var v map[string]any
		if err := json.Unmarshal(th.Document, &v); err != nil {
			t.Fatal(err)
		}
		if id != "urn:e" && id != "urn:f" {
			th.Index = indexOfTitleAndTypes(v)
		}
		put(t, s, th, t0)
		decoded = append(decoded, v)
	}
	for _, tc := range []struct {
		query string
		// exact are the candidates when every store can decide the condition exactly.
		exact []string
	}{
		{"$[?@.title=='Lamp']", []string{"urn:a", "urn:f"}},
		{"$[?@.title=='']", []string{"urn:d"}},
		{"$[?@['@type']=='lmos:Tool']", nil},
		{"$[?@['@type']=='lmos:Agent']", []string{"urn:c", "urn:f"}},
		{"$[?@.title=='Heater' || @['@type']=='Thing']", nil},
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
		{"$[?@.title=='Lamp' && @.tags[*]]", nil},
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

// indexOfTitleAndTypes is the part of the directory's index a JSONPath pre-filter may use:
// the plain title and the string @type values.
func indexOfTitleAndTypes(doc map[string]any) *directory.Index {
	ix := &directory.Index{Kind: "thing"}
	ix.Title, _ = doc["title"].(string)
	switch types := doc["@type"].(type) {
	case string:
		ix.Types = []string{types}
	case []any:
		for _, ty := range types {
			if s, ok := ty.(string); ok {
				ix.Types = append(ix.Types, s)
			}
		}
	}
	ix.TypeIRIs = ix.Types
	return ix
}
