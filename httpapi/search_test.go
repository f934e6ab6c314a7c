package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// lmosTD is a valid TD of an LMOS agent or tool ("lmos:Agent", "lmos:Tool") with a vendor,
// one action, one capability and an endpoint of the given scheme.
func lmosTD(id, kind, title, description, vendor, action, capability, scheme string) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return `{"@context": ["https://www.w3.org/2022/wot/td/v1.1", {"lmos": "https://eclipse.dev/lmos/protocol/v1"}],
  "id": ` + q(id) + `, "@type": ` + q(kind) + `, "title": ` + q(title) + `, "description": ` + q(description) + `,
  "lmos:metadata": {"lmos:vendor": {"lmos:name": ` + q(vendor) + `, "lmos:url": "https://` + strings.ToLower(strings.ReplaceAll(vendor, " ", "")) + `.example"},
    "lmos:capabilities": [{"id": ` + q(capability) + `, "version": "1.0"}]},
  "securityDefinitions": {"nosec_sc": {"scheme": "nosec"}}, "security": "nosec_sc",
  "actions": {` + q(action) + `: {"description": "Does ` + action + `", "forms": [{"href": ` + q(scheme+"://agents.example/"+action) + `}]}}}`
}

var searchCatalog = []struct{ id, kind, title, description, vendor, action, capability, scheme string }{
	{"urn:example:weather", "lmos:Agent", "Weather agent", "Answers questions about the weather", "Acme", "getWeather", "weather", "wss"},
	{"urn:example:forecast", "lmos:Tool", "Forecast tool", "Seven-day weather forecasts", "Acme", "getForecast", "forecast", "https"},
	{"urn:example:billing", "lmos:Tool", "Billing tool", "Creates and sends invoices", "Globex", "createInvoice", "billing", "https"},
	{"urn:example:support", "lmos:Agent", "Support agent", "Opens tickets about billing problems", "Initech", "openTicket", "support", "wss"},
}

func registerCatalog(t *testing.T, f *fixture) {
	t.Helper()
	for _, c := range searchCatalog {
		f.put("/things/"+c.id, lmosTD(c.id, c.kind, c.title, c.description, c.vendor, c.action, c.capability, c.scheme)).want(t, http.StatusCreated)
	}
}

type searchAnswer struct {
	Items  []searchItem
	Facets map[string]map[string]int
	Next   *string
}

type searchItem struct {
	ID, Kind, Title, Description string
	Vendor                       *struct{ Name, URL string }
	Score                        float64
	TD                           map[string]any
}

func (r response) search(t *testing.T) searchAnswer {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json", ct)
	}
	var a searchAnswer
	if err := json.Unmarshal(r.body, &a); err != nil {
		t.Fatalf("search answer: %v: %s", err, r.body)
	}
	return a
}

func (a searchAnswer) ids() []string {
	ids := make([]string, len(a.Items))
	for i, it := range a.Items {
		ids[i] = it.ID
	}
	return ids
}

func TestSearch(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		registerCatalog(t, f)
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"", []string{"urn:example:billing", "urn:example:forecast", "urn:example:support", "urn:example:weather"}},
			{"kind=tool", []string{"urn:example:billing", "urn:example:forecast"}},
			{"kind=agent&vendor=acme", []string{"urn:example:weather"}},
			{"vendor=https://globex.example", []string{"urn:example:billing"}},
			{"type=lmos:Tool", []string{"urn:example:billing", "urn:example:forecast"}},
			{"action=getWeather", []string{"urn:example:weather"}},
			{"capability=billing", []string{"urn:example:billing"}},
			{"capability=billing@1.0", []string{"urn:example:billing"}},
			{"protocol=WSS", []string{"urn:example:support", "urn:example:weather"}},
			{"q=weather", []string{"urn:example:weather", "urn:example:forecast"}},
			{"q=billing", []string{"urn:example:billing", "urn:example:support"}},
			{"q=billing&kind=agent", []string{"urn:example:support"}},
			{"q=invoices+globex", []string{"urn:example:billing"}},
			{"q=nothing+like+this", []string{}},
			{"kind=", []string{"urn:example:billing", "urn:example:forecast", "urn:example:support", "urn:example:weather"}},
		} {
			t.Run(tc.query, func(t *testing.T) {
				a := f.get("/search?"+tc.query).want(t, http.StatusOK).search(t)
				if got := a.ids(); !slices.Equal(got, tc.want) {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
				if a.Next != nil {
					t.Errorf("next %q on a complete result", *a.Next)
				}
			})
		}

		a := f.get("/search?q=weather&kind=agent").want(t, http.StatusOK).search(t)
		it := a.Items[0]
		if it.Kind != "agent" || it.Title != "Weather agent" || it.Description != "Answers questions about the weather" ||
			it.Vendor == nil || it.Vendor.Name != "Acme" || it.Vendor.URL != "https://acme.example" || it.Score <= 0 {
			t.Errorf("item %+v", it)
		}
		if it.TD["id"] != "urn:example:weather" || it.TD["registration"] == nil {
			t.Errorf("td of the item is not the Enriched TD: %v", it.TD)
		}
		allResponse := f.get("/search").want(t, http.StatusOK)
		all := allResponse.search(t)
		want := map[string]map[string]int{
			"kind":   {"agent": 2, "tool": 2},
			"vendor": {"Acme": 2, "Globex": 1, "Initech": 1},
			"type":   {"lmos:Agent": 2, "lmos:Tool": 2},
		}
		if fmt.Sprint(all.Facets) != fmt.Sprint(want) {
			t.Errorf("facets %v, want %v", all.Facets, want)
		}
		if !strings.Contains(string(allResponse.body), `"vendor":{"Acme":2,`) {
			t.Error("the vendor facet does not list the largest count first")
		}
	})
}

func TestSearchFindsUpdatesAndForgetsDeletes(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		registerCatalog(t, f)
		f.do(http.MethodPatch, "/things/urn:example:billing", mediaMergePatch, `{"title": "Invoice robot"}`).want(t, http.StatusNoContent)
		if got := f.get("/search?q=robot").want(t, http.StatusOK).search(t).ids(); !slices.Equal(got, []string{"urn:example:billing"}) {
			t.Fatalf("after PATCH: %q", got)
		}
		f.do(http.MethodDelete, "/things/urn:example:billing", "", "").want(t, http.StatusNoContent)
		if got := f.get("/search?q=robot").want(t, http.StatusOK).search(t).ids(); len(got) != 0 {
			t.Fatalf("after DELETE: %q", got)
		}
		f.put("/things/urn:example:short", strings.Replace(minimalTD("urn:example:short", "Short lived robot"), `"title"`, `"registration": {"ttl": 60}, "title"`, 1)).want(t, http.StatusCreated)
		if got := f.get("/search?q=robot").want(t, http.StatusOK).search(t).ids(); !slices.Equal(got, []string{"urn:example:short"}) {
			t.Fatalf("with a ttl: %q", got)
		}
		f.clock.Advance(2 * time.Minute)
		if got := f.get("/search?q=robot").want(t, http.StatusOK).search(t).ids(); len(got) != 0 {
			t.Fatalf("after expiry: %q", got)
		}
	})
}

func TestSearchPages(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		for i := range 12 {
			id := fmt.Sprintf("urn:example:tool-%02d", i)
			f.put("/things/"+id, lmosTD(id, "lmos:Tool", fmt.Sprintf("Tool %d", i), "A weather tool", "Acme", "run", "run", "https")).want(t, http.StatusCreated)
		}
		for _, query := range []string{"kind=tool&limit=5", "q=weather&limit=5"} {
			var seen []string
			next := "/search?" + query
			for pages := 0; next != ""; pages++ {
				if pages > 3 {
					t.Fatalf("%s: more than 3 pages", query)
				}
				r := f.get(next).want(t, http.StatusOK)
				a := r.search(t)
				seen = append(seen, a.ids()...)
				next = ""
				if a.Next != nil {
					next = *a.Next
					if link := r.header.Get("Link"); link != "<"+next+`>; rel="next"` {
						t.Errorf("Link %q, want the next URL %q", link, next)
					}
					u, err := url.Parse(next)
					if err != nil || u.Path != "/search" || u.Query().Get("limit") != "5" || u.Query().Get("cursor") == "" {
						t.Errorf("next %q does not repeat the arguments", next)
					}
				}
			}
			if len(seen) != 12 || len(slices.Compact(slices.Sorted(slices.Values(seen)))) != 12 {
				t.Errorf("%s: pages gave %q, want each of the 12 tools once", query, seen)
			}
		}
		a := f.get("/search?kind=tool&limit=5").want(t, http.StatusOK).search(t)
		next, err := url.Parse(*a.Next)
		if err != nil {
			t.Fatal(err)
		}
		cursor := url.QueryEscape(next.Query().Get("cursor"))
		p := f.get("/search?kind=agent&cursor="+cursor).want(t, http.StatusBadRequest).problem(t)
		if len(p.ValidationErrors) != 1 || p.ValidationErrors[0].Field != "cursor" || !strings.Contains(p.Detail, "other parameters") {
			t.Errorf("cursor of another search: %+v", p)
		}
		if got := f.get("/search?kind=tool&limit=7&cursor="+cursor).want(t, http.StatusOK).search(t).ids(); len(got) != 7 || got[0] != "urn:example:tool-05" {
			t.Errorf("another page size from the same cursor gave %q", got)
		}
		f.get("/search?cursor=not-a-cursor!").want(t, http.StatusBadRequest).problem(t)
	})
}

func TestSearchArguments(t *testing.T) {
	f := newFixture(t, "sqlite")
	for _, tc := range []struct{ query, detail string }{
		{"sort=title", `unknown query parameter "sort"`},
		{"kind=tool&kind=agent", `"kind" is given 2 times`},
		{"kind=robot", `unknown kind "robot"`},
		{"limit=0", "limit must be a positive integer"},
		{"limit=abc", "limit must be a positive integer"},
		{"limit=101", "limit must be between 1 and 100"},
		{"q=" + strings.Repeat("word+", 300), "the limit is 1000"},
		{"vendor=%FF", "UTF-8"},
	} {
		t.Run(tc.query[:min(len(tc.query), 20)], func(t *testing.T) {
			p := f.get("/search?"+tc.query).want(t, http.StatusBadRequest).problem(t)
			if !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("detail %q does not contain %q", p.Detail, tc.detail)
			}
		})
	}
	get := f.get("/search?kind=tool").want(t, http.StatusOK)
	head := f.do(http.MethodHead, "/search?kind=tool", "", "").want(t, http.StatusOK)
	if len(head.body) != 0 || head.header.Get("Content-Length") != get.header.Get("Content-Length") || head.header.Get("Content-Type") != "application/json" {
		t.Errorf("HEAD headers %v differ from GET %v", head.header, get.header)
	}
}

func TestUnsupportedSearchLanguages(t *testing.T) {
	f := newFixture(t, "sqlite")
	for _, r := range []response{
		f.get("/search/xpath?query=/"),
		f.get("/search/sparql?query=SELECT"),
		f.do(http.MethodPost, "/search/sparql", "application/sparql-query", "SELECT * WHERE {}"),
	} {
		p := r.want(t, http.StatusNotFound).problem(t)
		if !strings.Contains(p.Detail, "not supported") || !strings.Contains(p.Detail, "/search/jsonpath") {
			t.Errorf("detail %q does not say what is supported", p.Detail)
		}
	}
}

const expandedAccept = `application/ld+json; profile="http://www.w3.org/ns/json-ld#expanded"`

func TestExpandedThing(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		registerCatalog(t, f)
		r := f.doAccept(http.MethodGet, "/things/urn:example:weather", "text/html, "+expandedAccept+";q=0.9").want(t, http.StatusOK)
		if ct := r.header.Get("Content-Type"); ct != expandedAccept {
			t.Errorf("Content-Type %q", ct)
		}
		if r.header.Get("Vary") != "Accept" {
			t.Errorf("Vary %q, want Accept", r.header.Get("Vary"))
		}
		var nodes []map[string]any
		if err := json.Unmarshal(r.body, &nodes); err != nil || len(nodes) != 1 {
			t.Fatalf("expanded form: %v: %s", err, r.body)
		}
		if nodes[0]["@id"] != "urn:example:weather" || nodes[0]["https://www.w3.org/2019/wot/td#title"] == nil {
			t.Errorf("expanded node %v", nodes[0])
		}
		plain := f.doAccept(http.MethodGet, "/things/urn:example:weather", "application/ld+json").want(t, http.StatusOK)
		if ct := plain.header.Get("Content-Type"); ct != mediaTD {
			t.Errorf("Accept without the expanded profile gave %q", ct)
		}
		head := f.doAccept(http.MethodHead, "/things/urn:example:weather", expandedAccept).want(t, http.StatusOK)
		if head.header.Get("Content-Length") != fmt.Sprint(len(r.body)) {
			t.Errorf("HEAD Content-Length %q, GET body %d bytes", head.header.Get("Content-Length"), len(r.body))
		}
		f.doAccept(http.MethodGet, "/things/urn:example:absent", expandedAccept).want(t, http.StatusNotFound).problem(t)
	})
}

func TestIncompleteExpansionIsInRegistration(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		const remote = "https://contexts.example/agents.jsonld"
		td := `{"@context": ["https://www.w3.org/2022/wot/td/v1.1", "` + remote + `"], "id": "urn:example:remote",
			"title": "Remote context", "securityDefinitions": {"nosec_sc": {"scheme": "nosec"}}, "security": "nosec_sc"}`
		f.put("/things/urn:example:remote", td).want(t, http.StatusCreated)
		// The background expansion gets to it without anyone asking.
		deadline := time.Now().Add(20 * time.Second)
		var reg map[string]any
		for {
			reg, _ = f.get("/things/urn:example:remote").want(t, http.StatusOK).object(t)["registration"].(map[string]any)
			if reg["expansion"] != nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		x, _ := reg["expansion"].(map[string]any)
		if x["complete"] != false || !strings.Contains(fmt.Sprint(x["reason"]), remote) {
			t.Fatalf("registration %v does not say the expansion is incomplete because of %s", reg, remote)
		}
		r := f.doAccept(http.MethodGet, "/things/urn:example:remote", expandedAccept).want(t, http.StatusOK)
		if !strings.Contains(string(r.body), `"https://www.w3.org/2019/wot/td#title":[{"@language":"en","@value":"Remote context"}]`) {
			t.Errorf("the partial expansion lacks what the loadable context defines: %s", r.body)
		}
		f.put("/things/urn:example:remote", minimalTD("urn:example:remote", "Local now")).want(t, http.StatusNoContent)
		if reg := f.get("/things/urn:example:remote").object(t)["registration"].(map[string]any); reg["expansion"] != nil {
			t.Errorf("the replaced TD still reports the old expansion problem: %v", reg)
		}
	})
}
