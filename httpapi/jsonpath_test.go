package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/theory/jsonpath"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/internal/tdgen"
)

func (f *fixture) jsonPath(query string) response {
	f.t.Helper()
	return f.get("/search/jsonpath?" + url.Values{"query": {query}}.Encode())
}

func decodeNumbers(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v: %.200s", err, data)
	}
	return v
}

func TestJSONPathSearch(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		registerCatalog(t, f)
		for _, tc := range []struct{ query, want string }{
			{"$[?@.title=='Billing tool'].id", `["urn:example:billing"]`},
			{"$[?@['@type']=='lmos:Agent'].title", `["Support agent","Weather agent"]`},
			{"$[*].id", `["urn:example:billing","urn:example:forecast","urn:example:support","urn:example:weather"]`},
			{"$[0].title", `["Billing tool"]`},
			{"$[-1].id", `["urn:example:weather"]`},
			{"$[1:3].id", `["urn:example:forecast","urn:example:support"]`},
			{"$[?@['lmos:metadata']['lmos:vendor']['lmos:name']=='Acme' && @.actions.getForecast].id", `["urn:example:forecast"]`},
			{"$[?match(@.description, 'Seven.*')].id", `["urn:example:forecast"]`},
			{"$[?search(@.nothing, 'x')].id", `[]`},
			{"$[?!match(@.nothing, 'x')].id", `["urn:example:billing","urn:example:forecast","urn:example:support","urn:example:weather"]`},
			{"$[?@.registration.created=='2026-11-21T10:00:00Z'].id", `["urn:example:billing","urn:example:forecast","urn:example:support","urn:example:weather"]`},
			{"$[?@.title=='nobody']", `[]`},
			{"$[?@.title == $[0].title].id", `["urn:example:billing"]`},
			{"$", ""},
		} {
			t.Run(tc.query, func(t *testing.T) {
				r := f.jsonPath(tc.query).want(t, http.StatusOK)
				if ct := r.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
				if tc.want == "" {
					roots, _ := decodeNumbers(t, r.body).([]any)
					if len(roots) != 1 || len(roots[0].([]any)) != len(searchCatalog) {
						t.Errorf("$ gave %.300s, want one node: the array of all TDs", r.body)
					}
					return
				}
				if string(r.body) != tc.want {
					t.Errorf("got %s, want %s", r.body, tc.want)
				}
			})
		}
		head := f.do(http.MethodHead, "/search/jsonpath?query=%24%5B0%5D.id", "", "").want(t, http.StatusOK)
		if head.header.Get("Content-Length") != fmt.Sprint(len(`["urn:example:billing"]`)) {
			t.Errorf("HEAD Content-Length %q", head.header.Get("Content-Length"))
		}
	})
}

func TestJSONPathErrors(t *testing.T) {
	f := newFixtureWith(t, "sqlite", fixtureOptions{limits: directory.SearchLimits{MaxResultBytes: 2000, MaxWholeRoot: 3}})
	registerCatalog(t, f)
	for _, tc := range []struct {
		path   string
		status int
		field  string
		detail string
	}{
		{"/search/jsonpath?query=" + url.QueryEscape("$[?@.title=="), http.StatusBadRequest, "query", "invalid JSONPath query"},
		{"/search/jsonpath?query=" + url.QueryEscape("$.x["+strings.Repeat("1,", 2100)+"1]"), http.StatusBadRequest, "query", "the limit is 4096"},
		{"/search/jsonpath", http.StatusBadRequest, "", "the query parameter is missing"},
		{"/search/jsonpath?query=%24&query=%24", http.StatusBadRequest, "", "given 2 times"},
		{"/search/jsonpath?q=%24", http.StatusBadRequest, "", `unknown query parameter "q"`},
		{"/search/jsonpath?query=" + url.QueryEscape("$[*]"), http.StatusUnprocessableEntity, "", "larger than this directory's limit of 2000 bytes"},
		{"/search/jsonpath?query=" + url.QueryEscape("$[?@.title == $[0].title]"), http.StatusUnprocessableEntity, "", "the limit is 3"},
	} {
		t.Run(tc.path[:min(len(tc.path), 40)], func(t *testing.T) {
			p := f.get(tc.path).want(t, tc.status).problem(t)
			if !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("detail %q does not contain %q", p.Detail, tc.detail)
			}
			if tc.field != "" && (len(p.ValidationErrors) != 1 || p.ValidationErrors[0].Field != tc.field) {
				t.Errorf("validationErrors %+v, want the field %s", p.ValidationErrors, tc.field)
			}
			if tc.status == http.StatusUnprocessableEntity && p.Type != problemQueryLimit {
				t.Errorf("type %q", p.Type)
			}
		})
	}
}

// importAll registers TDs through the directory core, many at once: the HTTP path is
// tested elsewhere, and corpora of thousands would take most of the test's time over it.
func importAll(t *testing.T, f *fixture, tds [][]byte) {
	t.Helper()
	ctx := context.Background()
	jobs := make(chan []byte)
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for range 8 {
		wg.Go(func() {
			for raw := range jobs {
				if _, err := f.dir.Import(ctx, raw); err != nil {
					select {
					case errs <- fmt.Errorf("%.80s: %w", raw, err):
					default:
					}
				}
			}
		})
	}
	for _, raw := range tds {
		jobs <- raw
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

func generated(seed int64, n int) [][]byte {
	gen := tdgen.New(seed)
	tds := make([][]byte, n)
	for i := range tds {
		tds[i] = gen.TD(i)
	}
	return tds
}

// differentialQueries run through /search/jsonpath and through theory/jsonpath on the
// whole listing. ordered: the query's answer has one right order (no wildcard, descendant
// or filter over an object's members, whose order RFC 9535 leaves open).
var differentialQueries = []struct {
	query   string
	ordered bool
}{
	{"$[?@.title=='Billing tool']", true},
	{"$[?@['@type']=='lmos:Tool'].id", true},
	{"$[?@['@type']=='lmos:Agent' && @['lmos:metadata']['lmos:vendor']['lmos:name']=='Acme'].id", true},
	{"$[?@['@type']=='lmos:Tool' || @.title=='Weather agent'].id", true},
	{"$[?!(@['@type']=='lmos:Tool')].id", true},
	{"$[?@.actions].id", true},
	{"$[?@.actions.getWeather].title", true},
	{"$[?@.version.instance].version", true},
	{"$[?@.security=='nosec_sc'].id", true},
	{"$[?@.title != 'Billing tool'].id", true},
	{"$[?@.title < 'C'].title", true},
	{"$[?@.title >= 'W'].title", true},
	{"$[?length(@.title) > 20].title", true},
	{"$[?length(@.actions) >= 3].id", true},
	{"$[?count(@.links[*]) > 1].id", true},
	{"$[?count(@..forms[*]) > 10].id", true},
	{"$[?value(@.titles.de) != null].titles.de", true},
	{"$[?match(@.title, '[A-M].*')].title", true},
	{"$[?search(@.description, 'weather')].id", true},
	{"$[?search(@.title, 'Agent$')].title", true},
	{"$[?@.titles && @.descriptions].id", true},
	{"$[?@.registration.ttl].id", true},
	{"$[?@['lmos:metadata']['lmos:capabilities'][0].id=='weather'].id", true},
	{"$[?@['lmos:metadata']['lmos:capabilities'][?@.version=='1.0']].id", true},
	{"$[?@.links[?@.rel=='service-doc']].id", true},
	{"$[0]", true},
	{"$[3].title", true},
	{"$[-1].id", true},
	{"$[-3].id", true},
	{"$[100000].id", true},
	{"$[0,2,-1].id", true},
	{"$[1:5].id", true},
	{"$[-4:].id", true},
	{"$[::50].id", true},
	{"$[10:2:-3].id", true},
	{"$[::-40].id", true},
	{"$[0:0].id", true},
	{"$[0, ?@.title=='Billing tool', 1:3].id", true},
	{"$.id", true},
	{"$['title']", true},
	{"$[*].title", true},
	{"$.*.id", true},
	{"$[*]['@type']", true},
	{"$[*].actions.*.forms[0].href", false},
	{"$[*].properties[?@.readOnly==true].type", false},
	{"$[*].events.*", false},
	{"$..['lmos:name']", false},
	{"$..href", false},
	{"$..forms[?@.subprotocol=='lmosprotocol'].href", false},
	{"$..[?@.type=='object'].type", false},
	{"$..*", false},
	{"$..[0]", false},
	{"$[?@.title == $[0].title].id", true},
	{"$[?@['@type'] == $[-1]['@type']].id", true},
	{"$", true},
}

func TestJSONPathDifferential(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixtureWith(t, store, fixtureOptions{withoutExpansion: true})
		registerCatalog(t, f)
		importAll(t, f, generated(7, 300))
		root := decodeNumbers(t, f.get("/things").want(t, http.StatusOK).body)
		for _, tc := range differentialQueries {
			t.Run(tc.query, func(t *testing.T) {
				want := jsonpath.MustParse(tc.query).Select(root)
				got, _ := decodeNumbers(t, f.jsonPath(tc.query).want(t, http.StatusOK).body).([]any)
				if tc.ordered {
					if a, b := canonical(t, []any(want)), canonical(t, got); a != b {
						t.Fatalf("\n got: %.400s\nwant: %.400s", b, a)
					}
					return
				}
				if a, b := sortedCanonical(t, want), sortedCanonical(t, got); !slices.Equal(a, b) {
					t.Fatalf("%d nodes, want %d, or they differ", len(b), len(a))
				}
			})
		}
	})
}

func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sortedCanonical(t *testing.T, nodes []any) []string {
	t.Helper()
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = canonical(t, n)
	}
	slices.Sort(out)
	return out
}
