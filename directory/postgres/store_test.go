package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/directory/storetest"
	"github.com/lmosdir/lmosdir/internal/pgtest"
	"github.com/lmosdir/lmosdir/migrations"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// open returns a migrated store on a new database, and the database's URL.
func open(t testing.TB) (*Store, string) {
	t.Helper()
	dbURL := pgtest.NewDatabase(t)
	s, err := Open(testContext(t), dbURL, Options{MigrateOnOpen: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, dbURL
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) directory.Store {
		s, _ := open(t)
		return s
	})
}

// connect opens a connection of its own to dbURL, closed when the test ends.
func connect(t *testing.T, dbURL string) *pgx.Conn {
	t.Helper()
	ctx := testContext(t)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func exec(t *testing.T, dbURL, sql string) {
	t.Helper()
	if _, err := connect(t, dbURL).Exec(testContext(t), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func wantVersion(t *testing.T, dbURL string, version uint, dirty bool) {
	t.Helper()
	v, d, err := MigrateVersion(testContext(t), dbURL)
	if err != nil || v != version || d != dirty {
		t.Fatalf("MigrateVersion = %d, dirty %v, %v; want %d, dirty %v", v, d, err, version, dirty)
	}
}

func TestMigrateUpDown(t *testing.T) {
	ctx := testContext(t)
	dbURL := pgtest.NewDatabase(t)
	wantVersion(t, dbURL, 0, false)

	s, err := Open(ctx, dbURL, Options{})
	if err != nil {
		t.Fatalf("Open of an unmigrated database: %v", err)
	}
	defer s.Close()
	err = s.Ready(ctx)
	if err == nil || !strings.Contains(err.Error(), "version 0") || !strings.Contains(err.Error(), "run lmosdir migrate up") {
		t.Fatalf("Ready before migrations = %v, want the version and the command to run", err)
	}

	for range 2 { // the second Up has nothing to do and says so by succeeding
		if err := MigrateUp(ctx, dbURL); err != nil {
			t.Fatalf("MigrateUp: %v", err)
		}
		wantVersion(t, dbURL, latestVersion, false)
		if err := s.Ready(ctx); err != nil {
			t.Fatalf("Ready after MigrateUp: %v", err)
		}
	}
	if _, err := s.Put(ctx, directory.Thing{ID: "urn:x:1", Document: []byte(`{}`), Created: time.Now(), Modified: time.Now()}, time.Now()); err != nil {
		t.Fatalf("Put on the migrated schema: %v", err)
	}

	if err := MigrateDown(ctx, dbURL, int(latestVersion)); err != nil {
		t.Fatalf("MigrateDown: %v", err)
	}
	wantVersion(t, dbURL, 0, false)
	if err := s.Ready(ctx); err == nil {
		t.Fatal("Ready after reverting every migration succeeded")
	}
	if _, err := s.Get(ctx, "urn:x:1", time.Now()); err == nil {
		t.Fatal("Get after reverting every migration succeeded; the table survived")
	}
	if err := MigrateDown(ctx, dbURL, 0); err == nil {
		t.Fatal("MigrateDown of 0 migrations succeeded")
	}

	if err := MigrateUp(ctx, dbURL); err != nil {
		t.Fatalf("MigrateUp after down: %v", err)
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("Ready after migrating up again: %v", err)
	}
}

func TestMigrateDirty(t *testing.T) {
	ctx := testContext(t)
	s, dbURL := open(t)
	// What golang-migrate leaves behind when a migration fails halfway.
	exec(t, dbURL, `UPDATE schema_migrations SET dirty = true`)
	v := int(latestVersion)
	want := fmt.Sprintf("database schema is dirty at version %d: a migration failed halfway; repair the schema by hand, then run: lmosdir migrate force %d", v, v)

	check := func(what string, err error) {
		t.Helper()
		var dirty *migrations.DirtyError
		if !errors.As(err, &dirty) || dirty.Version != v || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s = %v, want %q", what, err, want)
		}
	}
	check("MigrateUp", MigrateUp(ctx, dbURL))
	check("MigrateDown", MigrateDown(ctx, dbURL, 1))
	check("Ready", s.Ready(ctx))
	_, err := Open(ctx, dbURL, Options{MigrateOnOpen: true})
	check("Open with MigrateOnOpen", err)
	_, err = Open(ctx, dbURL, Options{})
	check("Open", err)
	// Never forced behind the operator's back: still dirty.
	wantVersion(t, dbURL, latestVersion, true)

	if err := MigrateForce(ctx, dbURL, v); err != nil {
		t.Fatalf("MigrateForce: %v", err)
	}
	wantVersion(t, dbURL, latestVersion, false)
	if err := MigrateUp(ctx, dbURL); err != nil {
		t.Fatalf("MigrateUp after force: %v", err)
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("Ready after force: %v", err)
	}
}

func TestMigrateFailureLeavesDirty(t *testing.T) {
	ctx := testContext(t)
	dbURL := pgtest.NewDatabase(t)
	// A table in the way makes migration 1 fail.
	exec(t, dbURL, `CREATE TABLE things (x int)`)
	err := MigrateUp(ctx, dbURL)
	var dirty *migrations.DirtyError
	if !errors.As(err, &dirty) || !strings.Contains(err.Error(), "lmosdir migrate force 1") || !strings.Contains(err.Error(), `"things" already exists`) {
		t.Fatalf("MigrateUp = %v, want the failure and the way out of the dirty state", err)
	}
	wantVersion(t, dbURL, 1, true)
	// The repair: undo what the failed migration left, then mark version 1 as not applied.
	exec(t, dbURL, `DROP TABLE things`)
	if err := MigrateForce(ctx, dbURL, -1); err != nil {
		t.Fatalf("MigrateForce -1: %v", err)
	}
	if err := MigrateUp(ctx, dbURL); err != nil {
		t.Fatalf("MigrateUp after the repair: %v", err)
	}
	wantVersion(t, dbURL, latestVersion, false)
}

func TestMigrateUpConcurrently(t *testing.T) {
	ctx := testContext(t)
	dbURL := pgtest.NewDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = MigrateUp(ctx, dbURL) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("MigrateUp %d: %v", i, err)
		}
	}
	wantVersion(t, dbURL, latestVersion, false)
	s, err := Open(ctx, dbURL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("Ready: %v", err)
	}
}

func TestOpenConcurrentlyWithMigrate(t *testing.T) {
	ctx := testContext(t)
	dbURL := pgtest.NewDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := Open(ctx, dbURL, Options{MigrateOnOpen: true})
			if err == nil {
				err = s.Ready(ctx)
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
}

func TestDatabaseURLs(t *testing.T) {
	ctx := testContext(t)
	dbURL := pgtest.NewDatabase(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Scheme = "postgresql"
	q := u.Query()
	q.Set("pool_max_conns", "3")
	u.RawQuery = q.Encode()
	if err := MigrateUp(ctx, u.String()); err != nil {
		t.Fatalf("MigrateUp(postgresql://...?pool_max_conns=3): %v", err)
	}
	s, err := Open(ctx, u.String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.pool.Config().MaxConns; got != 3 {
		t.Errorf("MaxConns from the URL = %d, want 3", got)
	}
	s.Close()
	s, err = Open(ctx, u.String(), Options{MaxConns: 7})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.pool.Config().MaxConns; got != 7 {
		t.Errorf("MaxConns from Options = %d, want 7", got)
	}
	s.Close()

	for _, bad := range []string{"mysql://localhost/x", "host=localhost dbname=x", "::"} {
		if err := MigrateUp(ctx, bad); err == nil || !strings.Contains(err.Error(), "postgres://") {
			t.Errorf("MigrateUp(%q) = %v, want an error showing a postgres:// URL", bad, err)
		}
	}
	got, err := migrateURL("postgres://u:p%40ss@h:5432/db?sslmode=disable&pool_max_conns=4&pool_min_conns=1")
	if want := "pgx5://u:p%40ss@h:5432/db?sslmode=disable"; err != nil || got != want {
		t.Errorf("migrateURL = %q, %v; want %q", got, err, want)
	}
}

// openICU returns a migrated store on a new database whose default collation sorts "a"
// before "B", as most servers' locales do.
func openICU(t *testing.T) *Store {
	t.Helper()
	ctx := testContext(t)
	base := pgtest.NewDatabase(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/") + "_icu"
	exec(t, base, `CREATE DATABASE `+pgx.Identifier{name}.Sanitize()+
		` TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Error(err)
			return
		}
		defer func() { _ = conn.Close(ctx) }()
		if _, err := conn.Exec(ctx, `DROP DATABASE `+pgx.Identifier{name}.Sanitize()+` WITH (FORCE)`); err != nil {
			t.Error(err)
		}
	})
	u.Path = "/" + name
	s, err := Open(ctx, u.String(), Options{MigrateOnOpen: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })

	var localeSorted bool
	if err := s.pool.QueryRow(ctx, `SELECT 'urn:x:a' < 'urn:x:B'`).Scan(&localeSorted); err != nil || !localeSorted {
		t.Fatalf("the database does not sort by locale (%v, %v); the test proves nothing", localeSorted, err)
	}
	return s
}

// TestListOrderICU runs on a database whose default collation sorts "a" before "B", as
// most servers' locales do: the id column's own collation must still give code points.
func TestListOrderICU(t *testing.T) {
	ctx := testContext(t)
	s := openICU(t)

	ids := []string{"urn:x:B", "urn:x:a", "urn:x:ä", "urn:x:Z", "urn:x:A", "urn:x:b", "urn:x:é", "urn:x:😀", "urn:x:~"}
	now := time.Now()
	for _, id := range ids {
		if _, err := s.Put(ctx, directory.Thing{ID: id, Document: []byte(`{}`), Created: now, Modified: now}, now); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if err := s.List(ctx, directory.Page{}, now, func(th directory.Thing) error {
		got = append(got, th.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if !slices.Equal(got, ids) {
		t.Fatalf("List = %q, want code-point order %q", got, ids)
	}
}

// TestMembershipOutOfOrderCommit commits a newcomer whose member_seq is lower than that of
// a member that arrived later, while another member leaves: the count and the highest
// member_seq stay the same, and the tag must still change.
func TestMembershipOutOfOrderCommit(t *testing.T) {
	ctx := testContext(t)
	s, _ := open(t)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	thing := func(id string) directory.Thing {
		return directory.Thing{ID: id, Document: fmt.Appendf(nil, `{"id":%q}`, id), Created: now, Modified: now}
	}
	if _, err := s.Put(ctx, thing("urn:x:a"), now); err != nil {
		t.Fatal(err)
	}
	tx, err := s.pool.Begin(ctx) // a slow Put of c: it has its member_seq, not yet committed
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, putSQL, writeArgs(thing("urn:x:c"), now)...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, thing("urn:x:b"), now); err != nil {
		t.Fatal(err)
	}
	before, err := s.Membership(ctx, now) // {a, b}
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "urn:x:a", now); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := s.Membership(ctx, now) // {b, c}
	if err != nil {
		t.Fatal(err)
	}
	if before.Total != 2 || after.Total != 2 || before.Tag == after.Tag {
		t.Fatalf("membership went from %+v to %+v; want 2 and 2 with different tags", before, after)
	}
}

func TestJSONBCopy(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":"plain"}`, ""},
		{`{"a":"\u00e4\ud83d\ude00\"\\"}`, ""},
		{`{"a":"\\u0000"}`, ""}, // an escaped backslash, then text
		{`{"a":"\u0000"}`, `{"a":"\ufffd"}`},
		{`{"a":"x\\\u0000"}`, `{"a":"x\\\ufffd"}`},
		{`{"a":"\ud800"}`, `{"a":"\ufffd"}`},
		{`{"a":"\uDBFFx"}`, `{"a":"\ufffdx"}`},
		{`{"a":"\udc00\ud83d"}`, `{"a":"\ufffd\ufffd"}`},
		{`{"a":"\ud800\ud800\udc00"}`, `{"a":"\ufffd\ud800\udc00"}`},
		{`{"\u0000":"\u0000"}`, `{"\ufffd":"\ufffd"}`},
		{"{\"a\":\"\xff\"}", `{"a":"` + "\uFFFD" + `"}`},
		{`{"a":"\u00`, ""}, // not JSON; left for PostgreSQL to reject
	} {
		got := jsonbCopy([]byte(tc.in))
		if string(got) != tc.want {
			t.Errorf("jsonbCopy(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestQueryCopy checks the jsonb column: a copy of the document for queries, also for
// documents jsonb cannot hold as they are.
func TestQueryCopy(t *testing.T) {
	ctx := testContext(t)
	s, _ := open(t)
	now := time.Now()
	for doc, want := range map[string]string{
		`{"b":1.0e2,"a":"x"}`:            `{"a": "x", "b": 100}`,
		`{"a":"nul \u0000 here"}`:        `{"a": "nul ` + "\uFFFD" + ` here"}`,
		`{"a":"lone \udfff"}`:            `{"a": "lone ` + "\uFFFD" + `"}`,
		"{\"a\":\"latin-1 \xe4\"}":       `{"a": "latin-1 ` + "\uFFFD" + `"}`,
		`{"a":"\ud83d\ude00","b":[1E2]}`: `{"a": "😀", "b": [100]}`,
	} {
		th := directory.Thing{ID: fmt.Sprintf("urn:x:%x", doc), Document: []byte(doc), Created: now, Modified: now}
		if _, err := s.Put(ctx, th, now); err != nil {
			t.Fatalf("Put(%q): %v", doc, err)
		}
		got, err := s.Get(ctx, th.ID, now)
		if err != nil || string(got.Document) != doc {
			t.Fatalf("Get = %q, %v; want the registered bytes %q", got.Document, err, doc)
		}
		var queryCopy string
		if err := s.pool.QueryRow(ctx, `SELECT doc::text FROM things WHERE id = $1`, th.ID).Scan(&queryCopy); err != nil {
			t.Fatal(err)
		}
		if queryCopy != want {
			t.Errorf("doc of %q = %s, want %s", doc, queryCopy, want)
		}
	}

	// Numbers beyond jsonb's range are the client's to fix, not a server failure.
	huge := directory.Thing{ID: "urn:x:huge", Document: []byte(`{"n":1e200000}`), Created: now, Modified: now}
	_, err := s.Put(ctx, huge, now)
	var reqErr *directory.RequestError
	if !errors.As(err, &reqErr) {
		t.Fatalf("Put of a number beyond jsonb = %v, want a RequestError", err)
	}
	if err := s.Create(ctx, huge, now); !errors.As(err, &reqErr) {
		t.Fatalf("Create of a number beyond jsonb = %v, want a RequestError", err)
	}
}

func TestUpdateCannotRename(t *testing.T) {
	ctx := testContext(t)
	s, _ := open(t)
	now := time.Now()
	th := directory.Thing{ID: "urn:x:a", Document: []byte(`{}`), Created: now, Modified: now}
	if _, err := s.Put(ctx, th, now); err != nil {
		t.Fatal(err)
	}
	err := s.Update(ctx, th.ID, now, func(current directory.Thing) (directory.Thing, error) {
		current.ID = "urn:x:b"
		return current, nil
	})
	if err == nil || !strings.Contains(err.Error(), "cannot rename") {
		t.Fatalf("Update that renames = %v, want an error", err)
	}
}

// benchDocument is a TD-sized document of about 4 KB.
var benchDocument = func() []byte {
	var b strings.Builder
	b.WriteString(`{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"bench","properties":{`)
	for i := 0; b.Len() < 4000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"type":"number","forms":[{"href":"https://example.com/things/bench/p%d"}]}`, i, i)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}()

func BenchmarkPut(b *testing.B) {
	ctx := testContext(b)
	s, _ := open(b)
	var n atomic.Int64
	b.SetBytes(int64(len(benchDocument)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			now := time.Now()
			// Half creates, half replaces.
			th := directory.Thing{ID: fmt.Sprintf("urn:bench:%d", n.Add(1)/2), Document: benchDocument, Created: now, Modified: now}
			if _, err := s.Put(ctx, th, now); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkGet(b *testing.B) {
	ctx := testContext(b)
	s, _ := open(b)
	const things = 1000
	now := time.Now()
	for i := range things {
		th := directory.Thing{ID: fmt.Sprintf("urn:bench:%d", i), Document: benchDocument, Created: now, Modified: now}
		if _, err := s.Put(ctx, th, now); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(benchDocument)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Get(ctx, fmt.Sprintf("urn:bench:%d", rand.IntN(things)), now); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
