package sqlite

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/td"
)

func indexedThing(id string, ix directory.Index) directory.Thing {
	th := thing(id)
	th.Index = &ix
	return th
}

func searchIDs(t *testing.T, s *Store, q directory.SearchQuery, now time.Time) []string {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 100
	}
	res, err := s.Search(testContext(t), q, now)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	ids := []string{}
	for _, h := range res.Hits {
		ids = append(ids, h.Thing.ID)
	}
	return ids
}

// count returns the rows of table that belong to the Thing num.
func count(t *testing.T, s *Store, table, column string, num int64) int {
	t.Helper()
	var n int
	if err := s.readers.QueryRowContext(testContext(t), `SELECT count(*) FROM `+table+` WHERE `+column+` = ?1`, num).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// derivedRows counts what is stored for the Thing num besides its row, by table.
func derivedRows(t *testing.T, s *Store, num int64) map[string]int {
	t.Helper()
	return map[string]int{
		"thing_index":      count(t, s, "thing_index", "thing", num),
		"thing_terms":      count(t, s, "thing_terms", "thing", num),
		"thing_text":       count(t, s, "thing_text", "rowid", num),
		"thing_expansions": count(t, s, "thing_expansions", "thing", num),
	}
}

func numOf(t *testing.T, s *Store, id string) int64 {
	t.Helper()
	var num int64
	if err := s.readers.QueryRowContext(testContext(t), `SELECT num FROM things WHERE id = ?1`, id).Scan(&num); err != nil {
		t.Fatal(err)
	}
	return num
}

var fullIndex = directory.Index{
	Kind: td.KindTool, Types: []string{"lmos:Tool"}, TypeIRIs: []string{"lmos:Tool"},
	VendorName: "Acme", VendorURL: "https://acme.example", Title: "Lamp",
	Actions: []string{"toggle"}, Protocols: []string{"https"},
	Text: td.TextFields{Titles: "Lamp", Names: "toggle"},
}

// TestDerivedRowsGoWithTheThing checks that no write leaves index, terms, text or
// expansion rows behind, or stale: they are keyed by a number that a later Thing may get.
func TestDerivedRowsGoWithTheThing(t *testing.T) {
	s, _ := open(t)
	ctx := testContext(t)
	want := func(num int64, index, expansions int) {
		t.Helper()
		got := derivedRows(t, s, num)
		// Terms: type_iri, action, protocol, vendor_name, vendor_url.
		wantRows := map[string]int{"thing_index": index, "thing_terms": 5 * index, "thing_text": index, "thing_expansions": expansions}
		if !maps.Equal(got, wantRows) {
			t.Fatalf("rows of thing %d: %v, want %v", num, got, wantRows)
		}
	}

	th := indexedThing("urn:d:1", fullIndex)
	if _, err := s.Put(ctx, th, t0); err != nil {
		t.Fatal(err)
	}
	num := numOf(t, s, th.ID)
	want(num, 1, 1)

	// Replaced without an index: none left, not even the text.
	th.Index = nil
	if _, err := s.Put(ctx, th, t0); err != nil {
		t.Fatal(err)
	}
	want(num, 0, 1)

	if err := s.SaveDerived(ctx, th.ID, th.Document, fullIndex, directory.Expansion{Expanded: []byte("[]")}); err != nil {
		t.Fatal(err)
	}
	want(num, 1, 1)
	if err := s.Delete(ctx, th.ID, t0); err != nil {
		t.Fatal(err)
	}
	want(num, 0, 0)

	var nums []int64
	for i := range 3 {
		th := indexedThing(fmt.Sprintf("urn:d:expiring:%d", i), fullIndex)
		th.Expires = t0.Add(time.Second)
		if _, err := s.Put(ctx, th, t0); err != nil {
			t.Fatal(err)
		}
		nums = append(nums, numOf(t, s, th.ID))
	}
	if n, err := s.PurgeExpired(ctx, t0.Add(time.Minute)); err != nil || n != 3 {
		t.Fatalf("PurgeExpired = %d, %v; want 3", n, err)
	}
	for _, num := range nums {
		want(num, 0, 0)
	}
	if got := searchIDs(t, s, directory.SearchQuery{Text: "lamp"}, t0); len(got) != 0 {
		t.Fatalf("search finds %q after every Thing went", got)
	}
}

// TestSearchFollowsExpiry checks the copy of expires that thing_index keeps for search:
// every write that changes a Thing's expiry changes what search finds.
func TestSearchFollowsExpiry(t *testing.T) {
	s, _ := open(t)
	ctx := testContext(t)
	later := t0.Add(time.Minute)
	th := indexedThing("urn:e:1", fullIndex)
	if _, err := s.Put(ctx, th, t0); err != nil {
		t.Fatal(err)
	}
	setExpiry := func(expires time.Time) {
		t.Helper()
		err := s.Update(ctx, th.ID, t0, func(cur directory.Thing) (directory.Thing, error) {
			cur.Expires = expires // and a nil Index: the stored one stays
			return cur, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	setExpiry(t0.Add(time.Second))
	if got := searchIDs(t, s, directory.SearchQuery{}, later); len(got) != 0 {
		t.Fatalf("after an Update that made it expire, search still finds %q", got)
	}
	setExpiry(time.Time{})
	if got := searchIDs(t, s, directory.SearchQuery{}, later); !slices.Equal(got, []string{th.ID}) {
		t.Fatalf("after an Update that removed its expiry, search finds %q", got)
	}

	// SaveDerived indexes a Thing with the expiry of its row.
	other := thing("urn:e:2")
	other.Expires = t0.Add(time.Second)
	if _, err := s.Put(ctx, other, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveDerived(ctx, other.ID, other.Document, fullIndex, directory.Expansion{}); err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, s, directory.SearchQuery{}, t0); !slices.Equal(got, []string{th.ID, other.ID}) {
		t.Fatalf("before the expiry search finds %q", got)
	}
	if got := searchIDs(t, s, directory.SearchQuery{}, later); !slices.Equal(got, []string{th.ID}) {
		t.Fatalf("after the expiry search finds %q", got)
	}
}

// TestSearchTextIsNotSyntax checks that words FTS5 would read as operators are searched as
// words.
func TestSearchTextIsNotSyntax(t *testing.T) {
	s, _ := open(t)
	ctx := testContext(t)
	for id, title := range map[string]string{
		"urn:t:and":   "Near and far",
		"urn:t:not":   "Not a lamp",
		"urn:t:title": "titles vendor",
		"urn:t:café":  "Café Ünïcode",
	} {
		if _, err := s.Put(ctx, indexedThing(id, directory.Index{Kind: td.KindThing, Text: td.TextFields{Titles: title}}), t0); err != nil {
			t.Fatal(err)
		}
	}
	for text, want := range map[string][]string{
		"AND":                 {"urn:t:and"},
		"near AND far":        {"urn:t:and"},
		"NOT lamp":            {"urn:t:not"},
		"NEAR(far and)":       {"urn:t:and"},
		"titles: vendor*":     {"urn:t:title"},
		"{titles}: vendor":    {"urn:t:title"},
		`"cafe" UNICODE`:      {"urn:t:café"},
		"lamp OR far":         {},
		"lamp lamp LAMP, not": {"urn:t:not"},
		"(":                   {"urn:t:and", "urn:t:café", "urn:t:not", "urn:t:title"}, // no word: no text to match
	} {
		if got := searchIDs(t, s, directory.SearchQuery{Text: text}, t0); !slices.Equal(got, want) {
			t.Errorf("Text %q finds %q, want %q", text, got, want)
		}
	}
}

// TestMigrationLeavesThingsToDerive registers Things on the schema before search, then
// migrates: they keep their rows, are not found, and are listed for derivation, which makes
// them found.
func TestMigrationLeavesThingsToDerive(t *testing.T) {
	ctx := testContext(t)
	path := filepath.Join(t.TempDir(), "lmosdir.db")
	if err := MigrateUp(ctx, path); err != nil {
		t.Fatal(err)
	}
	migrateBelow(t, path, 2)
	execSQL(t, path, `INSERT INTO things (id, created, modified, expires, ttl, member_seq, revision, document) VALUES
		('urn:m:a', 1, 1, NULL, NULL, 1, 1, CAST('{"id":"urn:m:a"}' AS BLOB)),
		('urn:m:b', 1, 1, NULL, NULL, 2, 2, CAST('{"id":"urn:m:b"}' AS BLOB));
		DELETE FROM things WHERE id = 'urn:m:a';
		INSERT INTO things (id, created, modified, expires, ttl, member_seq, revision, document) VALUES
		('urn:m:c', 1, 1, NULL, NULL, 3, 3, CAST('{"id":"urn:m:c"}' AS BLOB));
		UPDATE write_seq SET last = 3`)
	if err := MigrateUp(ctx, path); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, path)
	defer s.Close()

	got, err := s.Get(ctx, "urn:m:c", t0)
	if err != nil || string(got.Document) != `{"id":"urn:m:c"}` {
		t.Fatalf("Get after the migration = %s, %v", got.Document, err)
	}
	if ids := searchIDs(t, s, directory.SearchQuery{}, t0); len(ids) != 0 {
		t.Fatalf("search finds %q before any derivation", ids)
	}
	pending, err := s.Unexpanded(ctx, t0, 10)
	if err != nil || len(pending) != 2 {
		t.Fatalf("Unexpanded = %v, %v; want the two Things", pending, err)
	}
	for _, th := range pending {
		if err := s.SaveDerived(ctx, th.ID, th.Document, directory.Index{Kind: td.KindThing}, directory.Expansion{}); err != nil {
			t.Fatal(err)
		}
	}
	if ids := searchIDs(t, s, directory.SearchQuery{}, t0); !slices.Equal(ids, []string{"urn:m:b", "urn:m:c"}) {
		t.Fatalf("search finds %q after the derivation", ids)
	}
	// A new Thing gets a number of its own.
	if _, err := s.Put(ctx, indexedThing("urn:m:d", directory.Index{Kind: td.KindThing}), t0); err != nil {
		t.Fatal(err)
	}
	if ids := searchIDs(t, s, directory.SearchQuery{}, t0); !slices.Equal(ids, []string{"urn:m:b", "urn:m:c", "urn:m:d"}) {
		t.Fatalf("search finds %q after a Put", ids)
	}
}

// seedSearch registers n indexed Things from 32 goroutines, so that the writes share
// commits: vocabularies are skewed, as real ones are, so that some words and filter
// values are common and others rare.
func seedSearch(tb testing.TB, s *Store, n int) {
	tb.Helper()
	kinds := []string{td.KindAgent, td.KindAgent, td.KindTool, td.KindTool, td.KindThing, td.KindDirectory}
	protocols := []string{"http", "https", "coap", "mqtt", "wss"}
	word := func(i, n int) string { return fmt.Sprintf("w%d", (i*i)%n) }
	var wg sync.WaitGroup
	for g := range benchParallel {
		wg.Go(func() {
			for i := g; i < n; i += benchParallel {
				ix := directory.Index{
					Kind:         kinds[i%len(kinds)],
					Types:        []string{fmt.Sprintf("type%d", i%7*i%50)},
					VendorName:   fmt.Sprintf("Vendor %d", i%200),
					VendorURL:    fmt.Sprintf("https://v%d.example", i%200),
					Title:        word(i, 1000) + " " + word(i+1, 97),
					Description:  word(i, 2000) + " " + word(i+3, 500) + " " + word(i+7, 31),
					Actions:      []string{word(i, 500), word(i+1, 300)},
					Properties:   []string{word(i, 400), word(i+2, 50)},
					Events:       []string{word(i, 30)},
					Capabilities: []string{fmt.Sprintf("cap%d", i%300)},
					Protocols:    []string{protocols[i%5], protocols[i%3]},
				}
				ix.TypeIRIs = append(slices.Clone(ix.Types), "https://types.example/"+ix.Types[0])
				ix.Text = td.TextFields{
					Titles:       ix.Title,
					Names:        strings.Join(slices.Concat(ix.Actions, ix.Properties, ix.Events), " "),
					Vendor:       ix.VendorName,
					Descriptions: ix.Description,
				}
				th := directory.Thing{
					ID:       fmt.Sprintf("urn:s:%05d", i),
					Document: fmt.Appendf(nil, `{"id":"urn:s:%05d","title":%q,"pad":"%s"}`, i, ix.Title, strings.Repeat("x", 3000)),
					Created:  t0, Modified: t0, Index: &ix,
				}
				if _, err := s.Put(context.Background(), th, t0); err != nil {
					tb.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// plan returns SQLite's query plan of query, one step a line, indented by depth.
func plan(t testing.TB, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.readers.QueryContext(testContext(t), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	depth := map[int]int{}
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		depth[id] = depth[parent] + 1
		fmt.Fprintf(&b, "%s%s\n", strings.Repeat("  ", depth[id]), detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSearchPlans checks that every filter is a lookup in an index and that no search reads
// a whole table, but the one that matches every Thing.
func TestSearchPlans(t *testing.T) {
	s, _ := open(t)
	seedSearch(t, s, 500)
	after := &directory.SearchCursor{Score: 0, ID: "urn:s:00100"}
	for _, q := range []directory.SearchQuery{
		{Kind: td.KindDirectory},
		{Type: "type3"},
		{Vendor: "Vendor 7"},
		{Action: "w4"},
		{Property: "w4"},
		{Event: "w4"},
		{Capability: "cap7"},
		{Protocol: "COAP"},
		{Capability: "cap7", Protocol: "http", Kind: td.KindAgent},
		{Text: "w4"},
		{Text: "w4 w1", Action: "w4", After: &directory.SearchCursor{Score: 3, ID: "urn:s:00100"}},
		{Kind: td.KindTool, After: after},
	} {
		q.Limit = 20
		m := matchSQL(q, t0)
		hits, hitArgs := hitsSQL(m, q)
		facets, facetArgs := facetsSQL(m)
		for name, p := range map[string]string{"hits": plan(t, s, hits, hitArgs...), "facets": plan(t, s, facets, facetArgs...)} {
			for _, table := range []string{"thing_index", "thing_terms", "things", "i", "t"} {
				if strings.Contains(p, "SCAN "+table+"\n") || strings.Contains(p, "SCAN "+table+" ") {
					t.Errorf("%+v: %s reads all of %s:\n%s", q, name, table, p)
				}
			}
			if strings.Contains(p, "USING PRIMARY KEY (field=?)") {
				t.Errorf("%+v: %s reads all the terms of a field:\n%s", q, name, p)
			}
		}
	}
	// The page of a search without filters is the first ids in order, not a sort of all.
	q := directory.SearchQuery{Limit: 20}
	hits, args := hitsSQL(matchSQL(q, t0), q)
	if p := plan(t, s, hits, args...); !strings.Contains(p, "MATERIALIZE page\n    SCAN t USING COVERING INDEX sqlite_autoindex_things_1\n") {
		t.Errorf("the first page of everything is not read in id order:\n%s", p)
	}
	if p := plan(t, s, unexpandedSQL, t0, 10); !strings.HasPrefix(p, "  SCAN e USING COVERING INDEX thing_expansions_pending_idx\n") {
		t.Errorf("Unexpanded does not read the pending index:\n%s", p)
	}
	if p := plan(t, s, getSQL, "urn:s:00001", t0); strings.Contains(p, "SCAN") {
		t.Errorf("Get scans:\n%s", p)
	}
}

// agentIndex is an Index the size of agent-4k.json's.
func agentIndex() *directory.Index {
	return &directory.Index{
		Kind: td.KindAgent, Types: []string{"lmos:Agent", "Thing"}, TypeIRIs: []string{"lmos:Agent", "Thing", "https://eclipse.dev/lmos/protocol/v1Agent", "https://www.w3.org/2019/wot/td#Thing"},
		VendorName: "Acme Corp", VendorURL: "https://acme.example", Title: "Weather agent", Description: "Forecasts the weather for any location, hourly and daily",
		Actions: []string{"getForecast", "getAlerts", "subscribe", "unsubscribe"}, Properties: []string{"location", "units", "status"}, Events: []string{"alert", "update"},
		Capabilities: []string{"weather", "weather@1.2", "alerts"}, Protocols: []string{"https", "wss", "lmosprotocol"},
		Text: td.TextFields{
			Titles: "Weather agent Wetter-Agent", Names: "get forecast get alerts subscribe unsubscribe location units status alert update",
			Descriptions: "Forecasts the weather for any location, hourly and daily. Vorhersagen für jeden Ort.", Vendor: "Acme Corp",
		},
	}
}

// BenchmarkSearch runs searches on 5,000 Things, one at a time: its time is the latency
// of one search.
func BenchmarkSearch(b *testing.B) {
	s, _ := open(b)
	seedSearch(b, s, 5000)
	for _, bc := range []struct {
		name string
		q    directory.SearchQuery
	}{
		{"all", directory.SearchQuery{}},
		{"kind=directory", directory.SearchQuery{Kind: td.KindDirectory}},
		{"protocol=https", directory.SearchQuery{Protocol: "https"}},
		{"capability=cap7", directory.SearchQuery{Capability: "cap7"}},
		{"kind+protocol", directory.SearchQuery{Kind: td.KindAgent, Protocol: "coap"}},
		{"text=common", directory.SearchQuery{Text: "w31"}},
		{"text=rare", directory.SearchQuery{Text: "w1999"}},
		{"text=two", directory.SearchQuery{Text: "w4 w9"}},
		{"text+filters", directory.SearchQuery{Text: "w4", Kind: td.KindTool, Protocol: "https"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			q := bc.q
			q.Limit = 20
			for b.Loop() {
				if _, err := s.Search(b.Context(), q, t0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
