package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/td"
)

// indexed is a Thing with an Index: kind, vendor and the other fields a test sets.
func indexed(id string, ix directory.Index) directory.Thing {
	th := newThing(id, t0)
	th.Index = &ix
	return th
}

func putAll(t *testing.T, s directory.Store, things ...directory.Thing) {
	t.Helper()
	for _, th := range things {
		put(t, s, th, th.Created)
	}
}

func search(t *testing.T, s directory.Store, q directory.SearchQuery) directory.SearchResult {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 100
	}
	res, err := s.Search(ctx(t), q, t0)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return res
}

func hitIDs(res directory.SearchResult) []string {
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.Thing.ID
	}
	return ids
}

// catalog is a small directory with one distinguishing value per filter.
func catalog() []directory.Thing {
	return []directory.Thing{
		indexed("urn:a:weather", directory.Index{
			Kind: td.KindAgent, Types: []string{"lmos:Agent"}, TypeIRIs: []string{"lmos:Agent", "https://eclipse.dev/lmos/protocol/v1Agent"},
			VendorName: "Acme Corp", VendorURL: "https://acme.example",
			Title: "Weather agent", Description: "Forecasts",
			Actions: []string{"getWeather"}, Properties: []string{"location"}, Events: []string{"alert"},
			Capabilities: []string{"weather", "weather@1.2"}, Protocols: []string{"wss", "lmosprotocol"},
			Text: td.TextFields{Titles: "Weather agent", Names: "get weather location alert", Descriptions: "Forecasts", Vendor: "Acme Corp"},
		}),
		indexed("urn:b:billing", directory.Index{
			Kind: td.KindTool, Types: []string{"lmos:Tool", "Thing"}, TypeIRIs: []string{"lmos:Tool", "Thing", "https://www.w3.org/2019/wot/td#Thing"},
			VendorName: "Globex", VendorURL: "https://globex.example",
			Title: "Billing tool", Description: "Creates invoices",
			Actions: []string{"createInvoice"}, Properties: []string{"currency"},
			Capabilities: []string{"billing"}, Protocols: []string{"https"},
			Text: td.TextFields{Titles: "Billing tool", Names: "create invoice currency", Descriptions: "Creates invoices", Vendor: "Globex"},
		}),
		indexed("urn:c:lamp", directory.Index{
			Kind: td.KindThing, Types: []string{"saref:LightSwitch"}, TypeIRIs: []string{"saref:LightSwitch", "https://saref.etsi.org/core/LightSwitch"},
			Title: "Lamp", Actions: []string{"toggle"}, Properties: []string{"on"}, Events: []string{"overheating"},
			Protocols: []string{"http", "coap"},
			Text:      td.TextFields{Titles: "Lamp", Names: "toggle on overheating", Descriptions: "A lamp in the hall"},
		}),
		indexed("urn:d:tickets", directory.Index{
			Kind: td.KindTool, Types: []string{"lmos:Tool"}, TypeIRIs: []string{"lmos:Tool"},
			VendorName: "acme corp", Title: "Ticket tool", Description: "Opens support tickets",
			Actions: []string{"openTicket", "getWeather"}, Protocols: []string{"https"},
			Text: td.TextFields{Titles: "Ticket tool", Names: "open ticket get weather", Descriptions: "Opens support tickets", Vendor: "acme corp"},
		}),
	}
}

func testSearchFilters(t *testing.T, s directory.Store) {
	putAll(t, s, catalog()...)
	for _, tc := range []struct {
		name string
		q    directory.SearchQuery
		want []string
	}{
		{"none", directory.SearchQuery{}, []string{"urn:a:weather", "urn:b:billing", "urn:c:lamp", "urn:d:tickets"}},
		{"kind", directory.SearchQuery{Kind: td.KindTool}, []string{"urn:b:billing", "urn:d:tickets"}},
		{"type as written", directory.SearchQuery{Type: "lmos:Tool"}, []string{"urn:b:billing", "urn:d:tickets"}},
		{"type expanded", directory.SearchQuery{Type: "https://www.w3.org/2019/wot/td#Thing"}, []string{"urn:b:billing"}},
		{"type is exact", directory.SearchQuery{Type: "lmos:tool"}, []string{}},
		{"vendor ignores case", directory.SearchQuery{Vendor: "ACME corp"}, []string{"urn:a:weather", "urn:d:tickets"}},
		{"vendor url", directory.SearchQuery{Vendor: "https://globex.example"}, []string{"urn:b:billing"}},
		{"vendor is not a substring", directory.SearchQuery{Vendor: "Acme"}, []string{}},
		{"action", directory.SearchQuery{Action: "getWeather"}, []string{"urn:a:weather", "urn:d:tickets"}},
		{"action is exact", directory.SearchQuery{Action: "getweather"}, []string{}},
		{"property", directory.SearchQuery{Property: "currency"}, []string{"urn:b:billing"}},
		{"event", directory.SearchQuery{Event: "overheating"}, []string{"urn:c:lamp"}},
		{"capability", directory.SearchQuery{Capability: "weather"}, []string{"urn:a:weather"}},
		{"capability with version", directory.SearchQuery{Capability: "weather@1.2"}, []string{"urn:a:weather"}},
		{"protocol", directory.SearchQuery{Protocol: "HTTPS"}, []string{"urn:b:billing", "urn:d:tickets"}},
		{"subprotocol", directory.SearchQuery{Protocol: "lmosprotocol"}, []string{"urn:a:weather"}},
		{"filters combine", directory.SearchQuery{Kind: td.KindTool, Action: "getWeather"}, []string{"urn:d:tickets"}},
		{"no match", directory.SearchQuery{Kind: td.KindAgent, Vendor: "Globex"}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := search(t, s, tc.q)
			if got := hitIDs(res); !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for _, h := range res.Hits {
				if h.Score != 0 {
					t.Errorf("%s: score %v without text, want 0", h.Thing.ID, h.Score)
				}
			}
			if res.More {
				t.Error("More is set on a complete result")
			}
		})
	}
}

func testSearchHitFields(t *testing.T, s directory.Store) {
	th := catalog()[0]
	th.Expires = at(time.Hour)
	th.TTL = 3600
	th.Retrieved, th.Origin = at(-time.Microsecond), []byte(origin)
	putAll(t, s, th)
	res := search(t, s, directory.SearchQuery{Text: "weather"})
	if len(res.Hits) != 1 {
		t.Fatalf("got %d hits, want 1", len(res.Hits))
	}
	h := res.Hits[0]
	if !bytes.Equal(h.Thing.Document, th.Document) {
		t.Errorf("Document = %s, want %s", h.Thing.Document, th.Document)
	}
	if !h.Thing.Created.Equal(t0) || !h.Thing.Modified.Equal(t0) || !h.Thing.Expires.Equal(th.Expires) || h.Thing.TTL != 3600 ||
		!h.Thing.Retrieved.Equal(th.Retrieved) || !bytes.Equal(h.Thing.Origin, th.Origin) {
		t.Errorf("registration = %v %v %v %v %v %s, want the stored one", h.Thing.Created, h.Thing.Modified, h.Thing.Expires, h.Thing.TTL, h.Thing.Retrieved, h.Thing.Origin)
	}
	want := directory.Index{Kind: td.KindAgent, VendorName: "Acme Corp", VendorURL: "https://acme.example", Title: "Weather agent", Description: "Forecasts"}
	if h.Index.Kind != want.Kind || h.Index.VendorName != want.VendorName || h.Index.VendorURL != want.VendorURL || h.Index.Title != want.Title || h.Index.Description != want.Description {
		t.Errorf("Index = %+v, want %+v", h.Index, want)
	}
	if h.Score <= 0 {
		t.Errorf("score %v for a text match, want > 0", h.Score)
	}
	if c := h.Cursor(); c.ID != th.ID || c.Score != h.Score {
		t.Errorf("Cursor() = %+v", c)
	}
}

func testSearchText(t *testing.T, s directory.Store) {
	doc := func(id, titles, names, descriptions string) directory.Thing {
		return indexed(id, directory.Index{Kind: td.KindTool, Title: titles, Text: td.TextFields{Titles: titles, Names: names, Descriptions: descriptions}})
	}
	putAll(t, s,
		doc("urn:1", "Invoice tool", "create", "Makes documents"),
		doc("urn:2", "Documents", "send invoice", "Sends things"),
		doc("urn:3", "Mailer", "send", "Puts an invoice in the mail"),
		doc("urn:4", "Calendar", "book", "Books rooms"),
		doc("urn:5", "Invoice archive", "store", "Keeps every invoice for years"),
	)
	res := search(t, s, directory.SearchQuery{Text: "invoice"})
	got := hitIDs(res)
	if len(got) != 4 || got[3] != "urn:3" || !slices.Contains(got[:2], "urn:1") || !slices.Contains(got[:2], "urn:5") || got[2] != "urn:2" {
		t.Fatalf("invoice: got %q, want title matches (urn:1, urn:5) first, then the name match urn:2, then the description match urn:3", got)
	}
	for i := 1; i < len(res.Hits); i++ {
		a, b := res.Hits[i-1], res.Hits[i]
		if a.Score < b.Score || (a.Score == b.Score && a.Thing.ID > b.Thing.ID) {
			t.Errorf("hits %d and %d are out of order: %v %s, %v %s", i-1, i, a.Score, a.Thing.ID, b.Score, b.Thing.ID)
		}
	}
	for _, tc := range []struct {
		name string
		q    directory.SearchQuery
		want []string
	}{
		{"ignores case", directory.SearchQuery{Text: "CALENDAR"}, []string{"urn:4"}},
		{"every word must occur", directory.SearchQuery{Text: "invoice years"}, []string{"urn:5"}},
		{"punctuation is not syntax", directory.SearchQuery{Text: `"calendar" (books) -rooms*`}, []string{"urn:4"}},
		{"no word", directory.SearchQuery{Text: "nonexistentword"}, []string{}},
		{"with a filter", directory.SearchQuery{Text: "invoice", Kind: td.KindAgent}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hitIDs(search(t, s, tc.q)); !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// testSearchPaging walks results page by page while Things come and go between pages:
// every Thing present throughout is seen exactly once, and the order holds across pages.
func testSearchPaging(t *testing.T, s directory.Store) {

	for _, text := range []string{"", "robot"} {
		t.Run("text="+text, func(t *testing.T) {
			prefix := fmt.Sprintf("urn:p:%s:", text)
			var stable []string
			for i := range 30 {
				// Scores fall into a few ties: the word in the title, in the names, in the
				// description, or in the title and the description.
				words := [4]td.TextFields{
					{Titles: "robot", Descriptions: "arm"},
					{Titles: "arm", Names: "robot"},
					{Titles: "arm", Descriptions: "robot"},
					{Titles: "robot", Descriptions: "robot arm"},
				}[i%4]
				id := fmt.Sprintf("%s%02d", prefix, (i*7)%30)
				putAll(t, s, indexed(id, directory.Index{Kind: td.KindTool, Text: words}))
				stable = append(stable, id)
			}
			seen := map[string]int{}
			var last *directory.SearchCursor
			var pages int
			for {
				res, err := s.Search(ctx(t), directory.SearchQuery{Text: text, Limit: 7, After: last}, t0)
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range res.Hits {
					seen[h.Thing.ID]++
					if last != nil && (h.Score > last.Score || (h.Score == last.Score && h.Thing.ID <= last.ID)) {
						t.Fatalf("page %d: %s (%v) comes after %s (%v)", pages, h.Thing.ID, h.Score, last.ID, last.Score)
					}
					c := h.Cursor()
					last = &c
				}
				pages++
				if !res.More {
					break
				}
				if len(res.Hits) != 7 {
					t.Fatalf("page %d has %d hits and More", pages, len(res.Hits))
				}
				if pages > 20 {
					t.Fatal("paging does not end")
				}
				// Between pages one Thing goes (seen or not yet) and a new one comes.
				gone := stable[pages]
				if err := s.Delete(ctx(t), gone, t0); err != nil {
					t.Fatal(err)
				}
				stable = slices.DeleteFunc(stable, func(id string) bool { return id == gone })
				putAll(t, s, indexed(fmt.Sprintf("%snew%d", prefix, pages), directory.Index{Kind: td.KindTool, Text: td.TextFields{Titles: "robot"}}))
			}
			for _, id := range stable {
				if seen[id] != 1 {
					t.Errorf("%s seen %d times, want once", id, seen[id])
				}
			}
			for id, n := range seen {
				if n > 1 {
					t.Errorf("%s seen %d times", id, n)
				}
			}
		})
	}
}

func testSearchFacets(t *testing.T, s directory.Store) {
	putAll(t, s, catalog()...)
	res := search(t, s, directory.SearchQuery{Limit: 1})
	if len(res.Hits) != 1 || !res.More {
		t.Fatalf("Limit 1: %d hits, More %v", len(res.Hits), res.More)
	}
	wantKind := []directory.FacetCount{{Value: "tool", Count: 2}, {Value: "agent", Count: 1}, {Value: "thing", Count: 1}}
	if !slices.Equal(res.Facets.Kind, wantKind) {
		t.Errorf("kind facet %v, want %v", res.Facets.Kind, wantKind)
	}
	wantVendor := []directory.FacetCount{{Value: "Acme Corp", Count: 1}, {Value: "Globex", Count: 1}, {Value: "acme corp", Count: 1}}
	if !slices.Equal(res.Facets.Vendor, wantVendor) {
		t.Errorf("vendor facet %v, want %v", res.Facets.Vendor, wantVendor)
	}
	wantType := []directory.FacetCount{{Value: "lmos:Tool", Count: 2}, {Value: "Thing", Count: 1}, {Value: "lmos:Agent", Count: 1}, {Value: "saref:LightSwitch", Count: 1}}
	if !slices.Equal(res.Facets.Type, wantType) {
		t.Errorf("type facet %v, want %v", res.Facets.Type, wantType)
	}
	filtered := search(t, s, directory.SearchQuery{Action: "getWeather"})
	if want := []directory.FacetCount{{Value: "agent", Count: 1}, {Value: "tool", Count: 1}}; !slices.Equal(filtered.Facets.Kind, want) {
		t.Errorf("kind facet of a filtered search %v, want %v", filtered.Facets.Kind, want)
	}
}

func testSearchFacetLimit(t *testing.T, s directory.Store) {
	var things []directory.Thing
	for i := range directory.MaxFacetValues + 5 {
		for range i%3 + 1 {
			things = append(things, indexed(fmt.Sprintf("urn:v:%02d:%d", i, len(things)), directory.Index{Kind: td.KindTool, VendorName: fmt.Sprintf("vendor %02d", i)}))
		}
	}
	putAll(t, s, things...)
	got := search(t, s, directory.SearchQuery{Limit: 1}).Facets.Vendor
	if len(got) != directory.MaxFacetValues {
		t.Fatalf("%d vendor facet values, want %d", len(got), directory.MaxFacetValues)
	}
	for i := 1; i < len(got); i++ {
		if got[i-1].Count < got[i].Count || (got[i-1].Count == got[i].Count && got[i-1].Value > got[i].Value) {
			t.Fatalf("facet values out of order at %d: %v", i, got)
		}
	}
	if got[0] != (directory.FacetCount{Value: "vendor 02", Count: 3}) {
		t.Errorf("first vendor facet %v, want vendor 02 with 3", got[0])
	}
}

func testSearchSkipsExpiredAndUnindexed(t *testing.T, s directory.Store) {
	live := catalog()[0]
	gone := catalog()[1]
	gone.Expires = at(time.Second)
	unindexed := newThing("urn:e:plain", t0)
	putAll(t, s, live, gone, unindexed)
	res, err := s.Search(ctx(t), directory.SearchQuery{Limit: 10}, at(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got := hitIDs(res); !slices.Equal(got, []string{live.ID}) {
		t.Fatalf("got %q, want only the live, indexed Thing", got)
	}
	if want := []directory.FacetCount{{Value: "agent", Count: 1}}; !slices.Equal(res.Facets.Kind, want) {
		t.Errorf("kind facet %v, want %v: facets count only what is found", res.Facets.Kind, want)
	}
}

func testSearchNilIndexKeepsOnUpdate(t *testing.T, s directory.Store) {
	putAll(t, s, catalog()[0])

	err := s.Update(ctx(t), "urn:a:weather", at(time.Second), func(th directory.Thing) (directory.Thing, error) {
		th.Document = []byte(`{"id":"urn:a:weather","title":"renamed"}`)
		th.Modified = at(time.Second)
		return th, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := hitIDs(search(t, s, directory.SearchQuery{Kind: td.KindAgent})); !slices.Equal(got, []string{"urn:a:weather"}) {
		t.Fatalf("after an Update with a nil Index: %q, want the Thing found by its stored index", got)
	}
	err = s.Update(ctx(t), "urn:a:weather", at(2*time.Second), func(th directory.Thing) (directory.Thing, error) {
		th.Index = &directory.Index{Kind: td.KindTool}
		return th, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := hitIDs(search(t, s, directory.SearchQuery{Kind: td.KindAgent})); len(got) != 0 {
		t.Fatalf("after an Update with a new Index the old kind still finds %q", got)
	}
	if got := hitIDs(search(t, s, directory.SearchQuery{Kind: td.KindTool})); !slices.Equal(got, []string{"urn:a:weather"}) {
		t.Fatalf("the new kind finds %q", got)
	}
}

func expansionOf(t *testing.T, s directory.Store, id string) directory.Expansion {
	t.Helper()
	x, err := s.Expansion(ctx(t), id, t0)
	if err != nil {
		t.Fatalf("Expansion(%s): %v", id, err)
	}
	return x
}

func unexpandedIDs(t *testing.T, s directory.Store, now time.Time, limit int) []string {
	t.Helper()
	things, err := s.Unexpanded(ctx(t), now, limit)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(things))
	for i, th := range things {
		ids[i] = th.ID
		if len(th.Document) == 0 {
			t.Errorf("Unexpanded gave %s without its Document", th.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

func testExpansionLifecycle(t *testing.T, s directory.Store) {

	th := newThing("urn:x:1", t0)
	putAll(t, s, th, newThing("urn:x:2", t0))
	if x := expansionOf(t, s, th.ID); x.Done {
		t.Fatalf("a new Thing's expansion is %+v, want not Done", x)
	}
	if got := unexpandedIDs(t, s, t0, 10); !slices.Equal(got, []string{"urn:x:1", "urn:x:2"}) {
		t.Fatalf("Unexpanded = %q", got)
	}
	expanded := []byte(`[{"@id":"urn:x:1"}]`)
	ix := directory.Index{Kind: td.KindTool, Title: "one"}
	if err := s.SaveDerived(ctx(t), th.ID, th.Document, ix, directory.Expansion{Expanded: expanded, Problem: "context https://x.example/ctx is not allowed"}); err != nil {
		t.Fatal(err)
	}
	x := expansionOf(t, s, th.ID)
	if !x.Done || !bytes.Equal(x.Expanded, expanded) || x.Problem != "context https://x.example/ctx is not allowed" {
		t.Fatalf("after SaveDerived: %+v", x)
	}
	got, err := s.Get(ctx(t), th.ID, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got.ExpansionProblem != x.Problem {
		t.Errorf("Get: ExpansionProblem %q, want %q", got.ExpansionProblem, x.Problem)
	}
	if ids := hitIDs(search(t, s, directory.SearchQuery{Kind: td.KindTool})); !slices.Equal(ids, []string{th.ID}) {
		t.Errorf("SaveDerived's index is not searched: %q", ids)
	}
	if got := unexpandedIDs(t, s, t0, 10); !slices.Equal(got, []string{"urn:x:2"}) {
		t.Fatalf("Unexpanded after SaveDerived = %q", got)
	}

	err = s.Update(ctx(t), th.ID, at(time.Second), func(cur directory.Thing) (directory.Thing, error) {
		cur.Expires = at(time.Hour)
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if x := expansionOf(t, s, th.ID); !x.Done {
		t.Fatal("an Update that keeps the Document lost the expansion")
	}

	err = s.Update(ctx(t), th.ID, at(2*time.Second), func(cur directory.Thing) (directory.Thing, error) {
		cur.Document = []byte(`{"id":"urn:x:1","title":"changed"}`)
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if x := expansionOf(t, s, th.ID); x.Done || x.Expanded != nil || x.Problem != "" {
		t.Fatalf("an Update that changed the Document kept the expansion: %+v", x)
	}
	got, err = s.Get(ctx(t), th.ID, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got.ExpansionProblem != "" {
		t.Errorf("Get after a change: ExpansionProblem %q, want none", got.ExpansionProblem)
	}

	// A derivation of the old document arrives after the change: it is dropped.
	if err := s.SaveDerived(ctx(t), th.ID, th.Document, ix, directory.Expansion{Expanded: expanded}); err != nil {
		t.Fatal(err)
	}
	if x := expansionOf(t, s, th.ID); x.Done {
		t.Fatal("SaveDerived of a stale document was stored")
	}

	if err := s.SaveDerived(ctx(t), th.ID, []byte(`{"id":"urn:x:1","title":"changed"}`), ix, directory.Expansion{Problem: "not JSON-LD"}); err != nil {
		t.Fatal(err)
	}
	if x := expansionOf(t, s, th.ID); !x.Done || x.Expanded != nil || x.Problem != "not JSON-LD" {
		t.Fatalf("a failed expansion: %+v", x)
	}

	putAll(t, s, th)
	if x := expansionOf(t, s, th.ID); x.Done {
		t.Fatal("Put kept the expansion of the document it replaced")
	}
	if err := s.SaveDerived(ctx(t), "urn:x:absent", th.Document, ix, directory.Expansion{}); err != nil {
		t.Fatalf("SaveDerived of a deleted Thing: %v, want nil", err)
	}
	if _, err := s.Expansion(ctx(t), "urn:x:absent", t0); !errors.Is(err, directory.ErrNotFound) {
		t.Fatalf("Expansion of an absent Thing: %v, want ErrNotFound", err)
	}
}

func testUnexpandedLimitAndExpiry(t *testing.T, s directory.Store) {
	for i := range 5 {
		th := newThing(fmt.Sprintf("urn:u:%d", i), t0)
		if i == 4 {
			th.Expires = at(time.Second)
		}
		putAll(t, s, th)
	}
	if got := unexpandedIDs(t, s, t0, 3); len(got) != 3 {
		t.Fatalf("limit 3 gave %q", got)
	}
	if got := unexpandedIDs(t, s, at(time.Minute), 10); !slices.Equal(got, []string{"urn:u:0", "urn:u:1", "urn:u:2", "urn:u:3"}) {
		t.Fatalf("Unexpanded listed an expired Thing: %q", got)
	}
	if _, err := s.Expansion(ctx(t), "urn:u:4", at(time.Minute)); !errors.Is(err, directory.ErrNotFound) {
		t.Fatalf("Expansion of an expired Thing: %v, want ErrNotFound", err)
	}
}
