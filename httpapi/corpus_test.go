//go:build !race

// The race detector slows the embedded store's pure-Go SQLite about tenfold, which makes
// loading this corpus take minutes; the race-free run of `make test` covers it instead.

package httpapi

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/lmosdir/lmosdir/internal/tdgen"
)

// corpusSize is the generated directory the search tests run on: thousands of agent and
// tool TDs with varied vendors, types, languages and affordances.
const corpusSize = 10000

// TestSearchGeneratedCorpus checks /search and JSONPath on a directory of corpusSize TDs
// against what the generator says it put into each one.
func TestSearchGeneratedCorpus(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixtureWith(t, store, fixtureOptions{withoutExpansion: true})
		const seed = 42
		gen := tdgen.New(seed)
		importAll(t, f, generated(seed, corpusSize))
		infos := make([]tdgen.Info, corpusSize)
		kinds, vendors, types := map[string]int{}, map[string]int{}, map[string]int{}
		for i := range infos {
			infos[i] = gen.Info(i)
			kinds[infos[i].Kind]++
			vendors[infos[i].Vendor]++
			for _, ty := range infos[i].Types {
				types[ty]++
			}
		}
		if len(vendors) < 20 || len(kinds) != 2 {
			t.Fatalf("the generated corpus is not varied: %d vendors, kinds %v", len(vendors), kinds)
		}

		all := f.get("/search?limit=1").want(t, http.StatusOK).search(t)
		if fmt.Sprint(all.Facets["kind"]) != fmt.Sprint(kinds) {
			t.Errorf("kind facet %v, want %v", all.Facets["kind"], kinds)
		}
		if want := topCounts(types); fmt.Sprint(all.Facets["type"]) != fmt.Sprint(want) {
			t.Errorf("type facet %v, want %v", all.Facets["type"], want)
		}
		if want := topCounts(vendors); fmt.Sprint(all.Facets["vendor"]) != fmt.Sprint(want) {
			t.Errorf("vendor facet %v, want %v", all.Facets["vendor"], want)
		}

		for _, start := range []int{0, 4321, corpusSize / 2} {
			// The probe is the first Thing from start on with an action and a capability.
			probe := start + slices.IndexFunc(infos[start:], func(in tdgen.Info) bool { return len(in.Actions) > 0 && len(in.Capabilities) > 0 })
			info := infos[probe]
			want := func(keep func(tdgen.Info) bool) []string {
				var ids []string
				for _, in := range infos {
					if keep(in) {
						ids = append(ids, in.ID)
					}
				}
				slices.Sort(ids)
				return ids
			}
			for _, tc := range []struct {
				query string
				want  []string
			}{
				{"kind=" + info.Kind + "&vendor=" + url.QueryEscape(strings.ToUpper(info.Vendor)), want(func(in tdgen.Info) bool {
					return in.Kind == info.Kind && in.Vendor == info.Vendor
				})},
				{"action=" + url.QueryEscape(info.Actions[0]) + "&vendor=" + url.QueryEscape(info.Vendor), want(func(in tdgen.Info) bool {
					return slices.Contains(in.Actions, info.Actions[0]) && in.Vendor == info.Vendor
				})},
				{"capability=" + url.QueryEscape(info.Capabilities[0]) + "&type=" + url.QueryEscape(info.Types[len(info.Types)-1]), want(func(in tdgen.Info) bool {
					return slices.Contains(in.Capabilities, info.Capabilities[0]) && slices.Contains(in.Types, info.Types[len(info.Types)-1])
				})},
			} {
				if got := searchAll(t, f, tc.query); !slices.Equal(got, tc.want) {
					t.Errorf("%s: %d results, want %d", tc.query, len(got), len(tc.want))
				}
			}
			// Full text: the words of the title find the Thing.
			if got := searchAll(t, f, "q="+url.QueryEscape(info.Title)); !slices.Contains(got, info.ID) {
				t.Errorf("q=%s: %d results without %s", info.Title, len(got), info.ID)
			}

			query := "$[?@.title==" + quoteJSONPath(info.Title) + "].id"
			got := decodeNumbers(t, f.jsonPath(query).want(t, http.StatusOK).body)
			wantIDs := want(func(in tdgen.Info) bool { return in.Title == info.Title })
			if fmt.Sprint(got) != fmt.Sprint(wantIDs) {
				t.Errorf("%s: %v, want %v", query, got, wantIDs)
			}
		}
	})
}

// searchAll follows a /search query through all its pages and returns the ids sorted.
func searchAll(t *testing.T, f *fixture, query string) []string {
	t.Helper()
	var ids []string
	next := "/search?limit=100&" + query
	for next != "" {
		a := f.get(next).want(t, http.StatusOK).search(t)
		ids = append(ids, a.ids()...)
		next = ""
		if a.Next != nil {
			next = *a.Next
		}
	}
	slices.Sort(ids)
	return ids
}

// topCounts is a facet as the directory computes it: the largest counts, at most 20.
func topCounts(counts map[string]int) map[string]int {
	keys := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), strings.Compare(a, b))
	})
	top := map[string]int{}
	for _, k := range keys[:min(len(keys), 20)] {
		top[k] = counts[k]
	}
	return top
}

func quoteJSONPath(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
