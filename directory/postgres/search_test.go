package postgres

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-migrate/migrate/v4"
	"github.com/jackc/pgx/v5"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/internal/pgtest"
	"github.com/lmosdir/lmosdir/td"
)

func indexedThing(id string, ix directory.Index) directory.Thing {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	return directory.Thing{ID: id, Document: fmt.Appendf(nil, `{"id":%q}`, id), Created: now, Modified: now, Index: &ix}
}

func searchIDs(t *testing.T, s *Store, q directory.SearchQuery) ([]string, directory.SearchResult) {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 100
	}
	res, err := s.Search(testContext(t), q, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	ids := []string{}
	for _, h := range res.Hits {
		ids = append(ids, h.Thing.ID)
	}
	return ids, res
}

// TestSearchStopWords checks the choice for words the english configuration does not
// index: they are ignored among other words, and a text of nothing else filters nothing.
func TestSearchStopWords(t *testing.T) {
	ctx := testContext(t)
	s, _ := open(t)
	for _, th := range []directory.Thing{
		indexedThing("urn:x:1", directory.Index{Kind: td.KindTool, Text: td.TextFields{Titles: "Weather tool"}}),
		indexedThing("urn:x:2", directory.Index{Kind: td.KindThing, Text: td.TextFields{Titles: "Lamp", Names: "on off"}}),
		indexedThing("urn:x:3", directory.Index{Kind: td.KindTool, Text: td.TextFields{Titles: "Calendar"}}),
	} {
		if _, err := s.Put(ctx, th, th.Created); err != nil {
			t.Fatal(err)
		}
	}
	all := []string{"urn:x:1", "urn:x:2", "urn:x:3"}
	for _, tc := range []struct {
		q         directory.SearchQuery
		want      []string
		stopWords bool // the text is stop words only: no text filter, and no score
	}{
		{directory.SearchQuery{Text: "the weather"}, []string{"urn:x:1"}, false},
		{directory.SearchQuery{Text: "the nonexistentword"}, []string{}, false},
		{directory.SearchQuery{Text: "on"}, all, true},
		{directory.SearchQuery{Text: "The, and IT!"}, all, true},
		{directory.SearchQuery{Text: "the", Kind: td.KindTool}, []string{"urn:x:1", "urn:x:3"}, true},
		{directory.SearchQuery{Text: "the", Limit: 1, After: &directory.SearchCursor{ID: "urn:x:1"}}, []string{"urn:x:2"}, true},
		{directory.SearchQuery{Text: "the", Kind: td.KindAgent}, []string{}, true},
	} {
		got, res := searchIDs(t, s, tc.q)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%+v: got %q, want %q", tc.q, got, tc.want)
		}
		for _, h := range res.Hits {
			if (h.Score == 0) != tc.stopWords {
				t.Errorf("%+v: %s has score %v", tc.q, h.Thing.ID, h.Score)
			}
		}
	}
}

// TestSearchCursorOrderICU pages through results on a database whose default collation is
// not code-point order: the cursor must continue in the order of the id column, and facet
// values of equal counts come in code-point order too.
func TestSearchCursorOrderICU(t *testing.T) {
	ctx := testContext(t)
	s := openICU(t)
	ids := []string{"urn:x:B", "urn:x:a", "urn:x:ä", "urn:x:Z", "urn:x:A", "urn:x:b", "urn:x:é", "urn:x:😀", "urn:x:~"}
	for _, id := range ids {
		th := indexedThing(id, directory.Index{Kind: td.KindTool, VendorName: strings.TrimPrefix(id, "urn:x:"), Text: td.TextFields{Titles: "robot"}})
		if _, err := s.Put(ctx, th, th.Created); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(ids)
	for _, text := range []string{"", "robot"} {
		var got []string
		var after *directory.SearchCursor
		for {
			page, res := searchIDs(t, s, directory.SearchQuery{Text: text, Limit: 2, After: after})
			got = append(got, page...)
			if !res.More {
				break
			}
			c := res.Hits[len(res.Hits)-1].Cursor()
			after = &c
		}
		if !slices.Equal(got, ids) {
			t.Errorf("text %q: paged through %q, want code-point order %q", text, got, ids)
		}
	}
	_, res := searchIDs(t, s, directory.SearchQuery{})
	var vendors []string
	for _, c := range res.Facets.Vendor {
		vendors = append(vendors, "urn:x:"+c.Value)
	}
	if !slices.Equal(vendors, ids) {
		t.Errorf("vendor facet in %q, want code-point order", vendors)
	}
}

// TestIndexValuesPostgresCannotHold: text cannot hold NUL, which JSON strings may, and an
// index entry has a size limit that JSON strings do not.
func TestIndexValuesPostgresCannotHold(t *testing.T) {
	ctx := testContext(t)
	s, _ := open(t)
	th := indexedThing("urn:x:nul", directory.Index{Kind: "tool\x00", Title: "a\x00b", Actions: []string{"ok", "run\x00now"}, Text: td.TextFields{Titles: "nul\x00here"}})
	if _, err := s.Put(ctx, th, th.Created); err != nil {
		t.Fatalf("Put with NUL in the index: %v", err)
	}
	got, res := searchIDs(t, s, directory.SearchQuery{Action: "run\x00now", Kind: "tool\x00"})
	if !slices.Equal(got, []string{th.ID}) || res.Hits[0].Index.Title != "a\uFFFDb" {
		t.Fatalf("search by a value with NUL: %q %+v", got, res.Hits)
	}
	if got, _ := searchIDs(t, s, directory.SearchQuery{Text: "here"}); !slices.Equal(got, []string{th.ID}) {
		t.Fatalf("text search: %q", got)
	}

	long := make([]byte, 4000) // random letters, which compression cannot shrink
	for i := range long {
		long[i] = byte('a' + rand.IntN(26))
	}
	for name, ix := range map[string]directory.Index{
		"action": {Kind: td.KindTool, Actions: []string{string(long)}},
		"vendor": {Kind: td.KindTool, VendorName: string(long)},
		"types":  {Kind: td.KindTool, Types: []string{string(long[:2000]), string(long[2000:])}},
	} {
		th := indexedThing("urn:x:long-"+name, ix)
		_, err := s.Put(ctx, th, th.Created)
		var reqErr *directory.RequestError
		if !errors.As(err, &reqErr) || !strings.Contains(err.Error(), "too long") {
			t.Errorf("Put with a long %s = %v, want a RequestError", name, err)
		}
	}
}

// TestMigrateDownRestoresSchema checks that migrating down from the latest version leaves
// the schema exactly as the previous version made it.
func TestMigrateDownRestoresSchema(t *testing.T) {
	ctx := testContext(t)
	dbURL := pgtest.NewDatabase(t)
	previous := int(latestVersion) - 1
	if err := withMigrate(ctx, dbURL, func(m *migrate.Migrate) error { return m.Migrate(uint(previous)) }); err != nil {
		t.Fatal(err)
	}
	before := schemaOf(t, dbURL)
	if err := MigrateUp(ctx, dbURL); err != nil {
		t.Fatal(err)
	}
	if latest := schemaOf(t, dbURL); latest == before {
		t.Fatal("the latest migration changed nothing the schema dump shows")
	}
	if err := MigrateDown(ctx, dbURL, 1); err != nil {
		t.Fatal(err)
	}
	if after := schemaOf(t, dbURL); after != before {
		t.Fatalf("schema after down differs from version %d:\n%s\nwant:\n%s", previous, after, before)
	}
}

// schemaOf lists the columns and indexes of the public schema.
func schemaOf(t *testing.T, dbURL string) string {
	t.Helper()
	ctx := testContext(t)
	rows, err := connect(t, dbURL).Query(ctx, `
SELECT format('%s.%s %s %s %s', table_name, column_name, data_type, is_nullable, attstorage)
FROM information_schema.columns
JOIN pg_attribute ON attrelid = (table_schema || '.' || table_name)::regclass AND attname = column_name
WHERE table_schema = 'public' AND table_name <> 'schema_migrations'
UNION ALL
SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> 'schema_migrations'
ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
