package pathquery_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/theory/jsonpath"

	"github.com/lmosdir/lmosdir/pathquery"
)

type differentialCase struct {
	query string
	// anyOrder marks queries whose order the library takes from Go map iteration beyond
	// what a * or .. in the query shows (a filter applied to an object's members).
	anyOrder bool
	// libraryPanics marks queries on which the library's match or search panics; the
	// reference is then Query.Select on the whole array.
	libraryPanics bool
	// skips marks filters whose Condition must let the source skip TDs.
	skips bool
}

var differentialCases = []differentialCase{
	// Comparisons in filters on the TDs.
	{query: `$[?@.security == 'nosec_sc'].id`, skips: true},
	{query: `$[?@.security != 'bearer_sc'].id`},
	{query: `$[?@['@type'] == 'lmos:Tool'].title`, skips: true},
	{query: `$[?@.title == 'Garnet Travel Agent']`, skips: true},
	{query: `$[?'Echo Search Agent' == @.title].id`, skips: true},
	{query: `$[?@.version.instance == '0.11.5'].id`, skips: true},
	{query: `$[?@.created < '2024-01-01'].id`},
	{query: `$[?@.created <= '2023-05-21T00:02:53Z'].id`},
	{query: `$[?@.modified > '2025-01-01'].title`},
	{query: `$[?@.modified >= '2025-03-14T09:52:37Z'].id`},
	{query: `$[?@.title > 'M' && @.title < 'P'].title`},
	{query: `$[?@.security == 'bearer_sc' || @.security == 'nosec_sc'].id`, skips: true},
	{query: `$[?!(@.security == 'bearer_sc')].id`},
	{query: `$[?!@.titles].id`},
	{query: `$[?@.titles && @.links].id`, skips: true},
	{query: `$[?(@.titles || @.links) && @.security == 'basic_sc'].id`, skips: true},
	{query: `$[?(@.titles || length(@.links) > 0) && @.base].id`, skips: true},
	{query: `$[?@.titles.de].titles.de`, skips: true},
	{query: `$[?@.links[0].rel == 'service-doc'].links[0].href`, skips: true},
	{query: `$[?@.links[-1].rel == 'alternate'].id`, skips: true},
	{query: `$[?@.links[-2]].id`, skips: true},
	{query: `$[?@['lmos:metadata']['lmos:vendor']['lmos:name'] == 'Quantix Software Inc.'].id`, skips: true},
	{query: `$[?@['lmos:metadata']['lmos:capabilities'][?@.version == '1.2.0']].id`},
	{query: `$[?@.actions[?@.safe == true]].id`},
	{query: `$[?@.properties[?@.readOnly == true]].title`},
	{query: `$[?@.actions[?@.idempotent == false && @.safe == true]].id`},
	{query: `$[?@.n == 1].id`},
	{query: `$[?@.n == '1'].id`, skips: true},
	{query: `$[?@.n < 3].id`},
	{query: `$[?@.n == null].id`, skips: true},
	{query: `$[?@.nested.flag == false].id`, skips: true},
	{query: `$[?@.nested.val == null].nested`, skips: true},
	{query: `$[?@.extra.nums[1] == 2].id`},
	{query: `$[?@.registration.created].id`},
	{query: `$[?@.registration.created > '2024-02-01'].id`},
	{query: `$[?@.registration].registration`},
	{query: `$[?@.nested.*].id`, skips: true},
	{query: `$[?@.*[?@ == 'nosec_sc']].id`},
	{query: `$[?@.match == 'yes'].id`, skips: true},
	{query: `$[?@.extra.match == 'search('].id`, skips: true},
	{query: `$[?@.title == ''].id`, skips: true},
	{query: `$[?@.security[0] == 'nosec_sc'].id`, skips: true},
	{query: `$[?@ == 'x']`},
	{query: `$[?@.id == 'urn:hand:2' || @.id == 'urn:lmosdir:gen:7:0000010'].title`, skips: true},
	// Functions.
	{query: `$[?length(@.title) > 20].title`},
	{query: `$[?length(@.titles) == 3].id`},
	{query: `$[?count(@.properties.*) == 0].id`},
	{query: `$[?count(@..forms[*]) > 5].id`},
	{query: `$[?value(@.links[0].rel) == 'service-doc'].id`},
	{query: `$[?value(@..hreflang) == 'en'].id`},
	{query: `$[?match(@.title, '.*Agent')].title`, libraryPanics: true},
	{query: `$[?!match(@.title, '.*Agent')].id`, libraryPanics: true},
	{query: `$[?match(@.title, 'Line.break Agent')].id`, libraryPanics: true},
	{query: `$[?search(@.description, 'parcel')].id`, libraryPanics: true},
	{query: `$[?search(@.title, '^P') && @.titles].title`, libraryPanics: true},
	{query: `$[?match(@.security, 'bearer_sc|nosec_sc')].id`, libraryPanics: true},
	{query: `$[?match(@.title, @.titles.en)].id`, libraryPanics: true},
	{query: `$[?@.title && match(@.title, '[A-G][a-z]+ Travel Agent')].id`},
	{query: `$[?@.description && search(@.description, 'shipments?')].id`},
	{query: `$[?@.title && match(@.title, 'Garnet|Agent')].title`},
	// Descendant segments.
	{query: `$..title`},
	{query: `$..forms[0].href`},
	{query: `$..[?@.op == 'readproperty'].href`},
	{query: `$..links[*].rel`},
	{query: `$..['lmos:name']`},
	{query: `$..[0]`},
	{query: `$..[?@.rel]`},
	{query: `$..hreflang`},
	{query: `$..[?@ == 'nosec_sc']`},
	{query: `$..[1:3]`},
	{query: `$..['id', 'title']`},
	{query: `$..[?@.version == '2.4.0', 0].name`},
	{query: `$[0:30]..*`},
	{query: `$..deeper.title`},
	{query: `$..deep[?match(@.title, 'in.*')]`},
	// Wildcards.
	{query: `$[*].id`},
	{query: `$.*.title`},
	{query: `$[*].titles.*`},
	{query: `$[*]['lmos:metadata']['lmos:capabilities'][*].id`},
	{query: `$[*].links[*].href`},
	{query: `$[*]`},
	{query: `$[*].nested.list[*][*]`},
	// Indexes and slices of the root array.
	{query: `$[0]`},
	{query: `$[5].title`},
	{query: `$[-1].id`},
	{query: `$[-3]['@type']`},
	{query: `$[2004].id`},
	{query: `$[2005]`},
	{query: `$[-2005].id`},
	{query: `$[-2006]`},
	{query: `$[100000]`},
	{query: `$[0:5].id`},
	{query: `$[10:20:3].id`},
	{query: `$[-5:].id`},
	{query: `$[:3].title`},
	{query: `$[1990:3000].id`},
	{query: `$[-3000:2].id`},
	{query: `$[5:2].id`},
	{query: `$[::0]`},
	{query: `$[::-1].id`},
	{query: `$[-1:-6:-1].id`},
	{query: `$[10:0:-3].id`},
	{query: `$[3:-2000:-1].title`},
	// Unions and names on the root.
	{query: `$[0,2,-1].id`},
	{query: `$[3,1].id`},
	{query: `$[1,1].id`},
	{query: `$[0:2,5,?@.security == 'nosec_sc'].id`},
	{query: `$[?@.n, 0, ::-700].id`},
	{query: `$['title', 0].id`},
	{query: `$.title`},
	{query: `$['id']`},
	{query: `$.length`},
	{query: `$`},
	// Filters that refer to the root: evaluated on the whole array.
	{query: `$[?@.id == $[0].id].title`},
	{query: `$[?length($) > 2000].id`},
	{query: `$[?@.security == $[1].security].id`},
	{query: `$[?count($[*]) == 2005][0]`},
	{query: `$[0][?@ == $[0].title]`},
	{query: `$..[?@ == $[3].id]`},
	{query: `$[?@.title == $[-1].title].id`},
	{query: `$[?match(@.title, $[4].title)].id`, libraryPanics: true},
	{query: `$[*][?@ == $[2].security]`},
}

func TestEvaluateMatchesLibrary(t *testing.T) {
	root := corpus()
	if len(differentialCases) < 80 {
		t.Fatalf("only %d differential queries", len(differentialCases))
	}
	for _, tc := range differentialCases {
		t.Run(tc.query, func(t *testing.T) {
			q := mustCompile(t, tc.query)
			want, panicked := librarySelect(tc.query, root)
			if panicked != tc.libraryPanics {
				t.Fatalf("library panicked: %v, expected %v", panicked, tc.libraryPanics)
			}
			if panicked {
				want = q.Select(root)
			}
			src := &memSource{tds: root}
			got, stats := collect(t, q, src, pathquery.Options{})
			if stats.Failed != 0 {
				t.Errorf("Stats.Failed = %d", stats.Failed)
			}
			anyOrder := tc.anyOrder || strings.ContainsAny(tc.query, "*") || strings.Contains(tc.query, "..")
			compareNodes(t, got, want, anyOrder)
			if tc.skips && src.skipped == 0 {
				t.Errorf("the source skipped no TD; passes %v", q.Passes())
			}
			checkConditionsNecessary(t, q, root)
		})
	}
}

// librarySelect runs the library itself on the whole array.
func librarySelect(query string, root []any) (nodes []any, panicked bool) {
	defer func() {
		if recover() != nil {
			nodes, panicked = nil, true
		}
	}()
	return jsonpath.MustParse(query).Select(root), false
}

func compareNodes(t *testing.T, got, want []any, anyOrder bool) {
	t.Helper()
	gotJSON, wantJSON := canonical(t, got), canonical(t, want)
	if anyOrder {
		slices.Sort(gotJSON)
		slices.Sort(wantJSON)
	}
	if len(gotJSON) != len(wantJSON) {
		t.Fatalf("%d nodes, the library selects %d", len(gotJSON), len(wantJSON))
	}
	for i := range gotJSON {
		if gotJSON[i] != wantJSON[i] {
			t.Fatalf("node %d is %.200s, the library's is %.200s", i, gotJSON[i], wantJSON[i])
		}
	}
}

func canonical(t *testing.T, nodes []any) []string {
	t.Helper()
	out := make([]string, len(nodes))
	for i, n := range nodes {
		b, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

// checkConditionsNecessary proves each filter pass's Condition on the corpus: every TD the
// exact filter accepts satisfies it, as stored.
func checkConditionsNecessary(t *testing.T, q *pathquery.Query, root []any) {
	t.Helper()
	for _, p := range q.Passes() {
		if p.Kind != pathquery.PassFilter || p.Cond == nil {
			continue
		}
		for _, td := range root {
			if pathquery.FilterAccepts(p, td) && !holds(p.Cond, stored(td)) {
				t.Errorf("%s rules out %v, which the filter accepts", p.Cond.SQLJSONPath(), td.(map[string]any)["id"])
			}
		}
	}
}
