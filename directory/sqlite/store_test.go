package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/directory/storetest"
)

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// open returns a migrated store on a new file, and the file's path.
func open(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lmosdir.db")
	s, err := Open(testContext(t), path, Options{MigrateOnOpen: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, path
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) directory.Store {
		s, _ := open(t)
		return s
	})
}

// TestPragmas checks the settings that durability and concurrency rest on, on the
// connections the store really uses.
func TestPragmas(t *testing.T) {
	s, _ := open(t)
	ctx := testContext(t)
	pragma := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}, name string) string {
		t.Helper()
		var v string
		if err := q.QueryRowContext(ctx, "PRAGMA "+name).Scan(&v); err != nil {
			t.Fatalf("PRAGMA %s: %v", name, err)
		}
		return v
	}
	for name, want := range map[string]string{"journal_mode": "wal", "synchronous": "2", "busy_timeout": "10000", "query_only": "0"} {
		if got := pragma(s.w.conn, name); got != want {
			t.Errorf("writer: %s = %s, want %s", name, got, want)
		}
	}
	for name, want := range map[string]string{"journal_mode": "wal", "query_only": "1", "busy_timeout": "10000"} {
		if got := pragma(s.readers, name); got != want {
			t.Errorf("readers: %s = %s, want %s", name, got, want)
		}
	}
	if _, err := s.readers.ExecContext(ctx, `DELETE FROM things`); err == nil {
		t.Error("a reader connection could write")
	}
}

// TestJSONQueries checks that SQLite's JSON functions read the document column, the
// registered bytes, directly.
func TestJSONQueries(t *testing.T) {
	s, _ := open(t)
	ctx := testContext(t)
	docs := map[string]string{
		"urn:j:plain":   `{"id":"urn:j:plain","title":"Lamp","n":1.0e2}`,
		"urn:j:unicode": `{"id":"urn:j:unicode","title":"K\u00fcche 🔌"}`,
		"urn:j:spaced":  " \t\n{ \"id\" : \"urn:j:spaced\" , \"title\" : \"x\\\"y\" }\n",
		// Eight bytes starting with {, the size and type a JSONB header byte would
		// give: still read as text.
		"urn:j:short": `{"a":12}`,
	}
	want := map[string]string{"urn:j:plain": "Lamp", "urn:j:unicode": "Küche 🔌", "urn:j:spaced": `x"y`, "urn:j:short": ""}
	for id, doc := range docs {
		th := thing(id)
		th.Document = []byte(doc)
		if _, err := s.Put(ctx, th, t0); err != nil {
			t.Fatal(err)
		}
	}
	for _, expr := range []string{"document", "CAST(document AS TEXT)"} {
		rows, err := s.readers.QueryContext(ctx, `SELECT id, json_valid(`+expr+`), coalesce(json_extract(`+expr+`, '$.title'), ''), json_type(`+expr+`) FROM things`)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var id, title, typ string
			var valid bool
			if err := rows.Scan(&id, &valid, &title, &typ); err != nil {
				t.Fatal(err)
			}
			if !valid || title != want[id] || typ != "object" {
				t.Errorf("%s of %s: json_valid %v, title %q, type %s; want valid, %q, object", expr, id, valid, title, typ, want[id])
			}
			n++
		}
		if err := rows.Err(); err != nil || n != len(docs) {
			t.Fatalf("%s: %d rows, %v", expr, n, err)
		}
		rows.Close()
	}
}

// TestMembershipNumbersSurviveReopen replaces the newest member after a restart: had the
// next number been max(member_seq)+1, the newcomer would get the leaver's number and the
// tag would not change.
func TestMembershipNumbersSurviveReopen(t *testing.T) {
	s, path := open(t)
	ctx := testContext(t)
	for _, id := range []string{"urn:m:a", "urn:m:b"} {
		if _, err := s.Put(ctx, thing(id), t0); err != nil {
			t.Fatal(err)
		}
	}
	before, err := s.Membership(ctx, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "urn:m:b", t0); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put(ctx, thing("urn:m:c"), t0); err != nil {
		t.Fatal(err)
	}
	after, err := s.Membership(ctx, t0)
	if err != nil {
		t.Fatal(err)
	}
	if before.Total != 2 || after.Total != 2 || before.Tag == after.Tag {
		t.Fatalf("membership went from %+v to %+v; want 2 and 2 with different tags", before, after)
	}
}

// TestListUsesIndexOrder checks that listings stream in id order from the primary key's
// index.
func TestListUsesIndexOrder(t *testing.T) {
	s, _ := open(t)
	rows, err := s.readers.QueryContext(testContext(t), "EXPLAIN QUERY PLAN "+listSQL, 0, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	// A sort would read every row before returning the first: memory would grow with
	// the directory.
	if joined := strings.Join(plan, "; "); strings.Contains(joined, "TEMP B-TREE") || !strings.Contains(joined, "USING INDEX") {
		t.Fatalf("listing plan %q, want a scan of the id index without a sort", joined)
	}
}
