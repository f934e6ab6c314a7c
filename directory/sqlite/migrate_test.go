package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/migrations"
)

// execSQL runs statements on the file at path outside the store, as an operator with the
// sqlite3 shell would.
func execSQL(t *testing.T, path, statements string) {
	t.Helper()
	db, err := sql.Open(driverName, dataSourceName(path, writerPragmas))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(testContext(t), statements); err != nil {
		t.Fatalf("%s: %v", statements, err)
	}
}

// forceSchema records version and dirty the way golang-migrate does.
func forceSchema(t *testing.T, path string, version int, dirty bool) {
	t.Helper()
	execSQL(t, path, fmt.Sprintf(`UPDATE %s SET version = %d, dirty = %t`, migrationsTable, version, dirty))
}

// insertThingBefore registers urn:m:a by SQL in a database migrated below a version,
// where the store cannot open it.
func insertThingBefore(t *testing.T, path string) {
	t.Helper()
	execSQL(t, path, `INSERT INTO things (id, created, modified, expires, ttl, member_seq, revision, document) VALUES
		('urn:m:a', 1, 1, NULL, NULL, 1, 1, CAST('{"id":"urn:m:a"}' AS BLOB));
		INSERT INTO thing_expansions (thing, done) SELECT num, 0 FROM things;
		UPDATE write_seq SET last = 1`)
}

// migrateBelow takes the database at path down to the version before version.
func migrateBelow(t *testing.T, path string, version uint) {
	t.Helper()
	if err := MigrateDown(testContext(t), path, int(latestVersion-version)+1); err != nil {
		t.Fatalf("MigrateDown of %06d: %v", version, err)
	}
	wantVersion(t, path, version-1, false)
}

func wantVersion(t *testing.T, path string, version uint, dirty bool) {
	t.Helper()
	v, d, err := MigrateVersion(testContext(t), path)
	if err != nil || v != version || d != dirty {
		t.Fatalf("MigrateVersion = %d, dirty %v, %v; want %d, dirty %v", v, d, err, version, dirty)
	}
}

func openStore(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(testContext(t), path, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// wantNotReady checks that Ready and every other method report why the store cannot
// serve.
func wantNotReady(t *testing.T, s *Store, want ...string) {
	t.Helper()
	ctx := testContext(t)
	_, putErr := s.Put(ctx, thing("urn:x:1"), t0)
	_, getErr := s.Get(ctx, "urn:x:1", t0)
	_, memberErr := s.Membership(ctx, t0)
	for what, err := range map[string]error{
		"Ready":      s.Ready(ctx),
		"Put":        putErr,
		"Get":        getErr,
		"Membership": memberErr,
		"List":       s.List(ctx, directory.Page{}, t0, func(directory.Thing) error { return nil }),
	} {
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s = %v, want an error saying %q", what, err, w)
			}
		}
	}
}

func TestMigrateUpDown(t *testing.T) {
	ctx := testContext(t)
	path := filepath.Join(t.TempDir(), "data", "lmosdir.db")
	wantVersion(t, path, 0, false)
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("MigrateVersion of a missing file created something: %v", err)
	}

	s := openStore(t, path)
	wantNotReady(t, s, "database schema is at version 0 but this lmosdir needs version", "run lmosdir migrate up")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for range 2 { // the second Up has nothing to do and says so by succeeding
		if err := MigrateUp(ctx, path); err != nil {
			t.Fatalf("MigrateUp: %v", err)
		}
		wantVersion(t, path, latestVersion, false)
	}
	s = openStore(t, path)
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("Ready after MigrateUp: %v", err)
	}
	if _, err := s.Put(ctx, thing("urn:x:1"), t0); err != nil {
		t.Fatalf("Put on the migrated schema: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	if err := MigrateDown(ctx, path, int(latestVersion)); err != nil {
		t.Fatalf("MigrateDown: %v", err)
	}
	wantVersion(t, path, 0, false)
	execSQL(t, path, `CREATE TABLE things (x INTEGER); DROP TABLE things`) // nothing of the schema is left in the way
	if err := MigrateDown(ctx, path, 0); err == nil {
		t.Fatal("MigrateDown of 0 migrations succeeded")
	}
	if err := MigrateUp(ctx, path); err != nil {
		t.Fatalf("MigrateUp after down: %v", err)
	}
	s = openStore(t, path)
	defer s.Close()
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("Ready after migrating up again: %v", err)
	}
	if _, err := s.Get(ctx, "urn:x:1", t0); !errors.Is(err, directory.ErrNotFound) {
		t.Fatalf("Get after down and up = %v, want ErrNotFound: the table should be new", err)
	}
}

func TestMigrateDirty(t *testing.T) {
	ctx := testContext(t)
	path := filepath.Join(t.TempDir(), "lmosdir.db")
	if err := MigrateUp(ctx, path); err != nil {
		t.Fatal(err)
	}
	// What golang-migrate leaves behind when the last migration fails halfway.
	last := int(latestVersion)
	forceSchema(t, path, last, true)
	want := fmt.Sprintf("database schema is dirty at version %d: a migration failed halfway; repair the schema by hand, then run: lmosdir migrate force %d", last, last)
	check := func(what string, err error) {
		t.Helper()
		var dirty *migrations.DirtyError
		if !errors.As(err, &dirty) || dirty.Version != last || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s = %v, want %q", what, err, want)
		}
	}
	check("MigrateUp", MigrateUp(ctx, path))
	check("MigrateDown", MigrateDown(ctx, path, 1))
	_, err := Open(ctx, path, Options{MigrateOnOpen: true})
	check("Open with MigrateOnOpen", err)
	_, err = Open(ctx, path, Options{})
	check("Open", err)
	// Never forced behind the operator's back: still dirty.
	wantVersion(t, path, latestVersion, true)

	if err := MigrateForce(ctx, path, last); err != nil {
		t.Fatalf("MigrateForce: %v", err)
	}
	wantVersion(t, path, latestVersion, false)
	if err := MigrateUp(ctx, path); err != nil {
		t.Fatalf("MigrateUp after force: %v", err)
	}
	s := openStore(t, path)
	defer s.Close()
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("Ready after force: %v", err)
	}
}

func TestMigrateFailureLeavesDirty(t *testing.T) {
	ctx := testContext(t)
	path := filepath.Join(t.TempDir(), "lmosdir.db")
	// A table in the way makes migration 1 fail.
	execSQL(t, path, `CREATE TABLE things (x INTEGER)`)
	err := MigrateUp(ctx, path)
	var dirty *migrations.DirtyError
	if !errors.As(err, &dirty) || !strings.Contains(err.Error(), "lmosdir migrate force 1") || !strings.Contains(err.Error(), "table things already exists") {
		t.Fatalf("MigrateUp = %v, want the failure and the way out of the dirty state", err)
	}
	wantVersion(t, path, 1, true)
	// The repair: undo what the failed migration left (SQLite rolled its own work back),
	// then mark version 1 as not applied.
	execSQL(t, path, `DROP TABLE things`)
	if err := MigrateForce(ctx, path, -1); err != nil {
		t.Fatalf("MigrateForce -1: %v", err)
	}
	if err := MigrateUp(ctx, path); err != nil {
		t.Fatalf("MigrateUp after the repair: %v", err)
	}
	wantVersion(t, path, latestVersion, false)
}

func TestSchemaNewerThanBinary(t *testing.T) {
	ctx := testContext(t)
	path := filepath.Join(t.TempDir(), "lmosdir.db")
	if err := MigrateUp(ctx, path); err != nil {
		t.Fatal(err)
	}
	forceSchema(t, path, int(latestVersion)+1, false)
	s := openStore(t, path)
	defer s.Close()
	wantNotReady(t, s, fmt.Sprintf("newer than the version %d this lmosdir knows: upgrade lmosdir", latestVersion))
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct{ url, path string }{
		{"sqlite:///var/lib/lmosdir/lmosdir.db", "/var/lib/lmosdir/lmosdir.db"},
		{"sqlite:/var/lib/lmosdir/lmosdir.db", "/var/lib/lmosdir/lmosdir.db"},
		{"sqlite://data/lmosdir.db", "data/lmosdir.db"},
		{"sqlite:data/lmosdir.db", "data/lmosdir.db"},
		{"sqlite:lmosdir.db", "lmosdir.db"},
		{"SQLite:///x.db", "/x.db"},
		{"sqlite:///my%20data/a%25b%3Fc%23d.db", "/my data/a%b?c#d.db"},
		{"sqlite:////double/slash.db", "//double/slash.db"},
	} {
		got, err := ParseURL(tc.url)
		if err != nil || got != tc.path {
			t.Errorf("ParseURL(%q) = %q, %v; want %q", tc.url, got, err, tc.path)
		}
	}
	for _, tc := range []struct{ url, says string }{
		{"postgres://localhost/db", "not a sqlite URL"},
		{"/var/lib/lmosdir.db", "not a sqlite URL"},
		{"sqlite", "not a sqlite URL"},
		{"sqlite:", "names no file"},
		{"sqlite://", "names no file"},
		{"sqlite:///x.db?_pragma=foo", "query or fragment"},
		{"sqlite:///x.db#frag", "query or fragment"},
		{"sqlite:///x%zz.db", "invalid percent escape"},
	} {
		if got, err := ParseURL(tc.url); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("ParseURL(%q) = %q, %v; want an error saying %q", tc.url, got, err, tc.says)
		}
	}
}

// TestMigrateOrigin migrates a database with Things across 000005 and back: the Things
// registered before it read back as a client's, and going down leaves the table as 000004
// made it, with its Things.
func TestMigrateOrigin(t *testing.T) {
	const originVersion = 5
	ctx := testContext(t)
	path := filepath.Join(t.TempDir(), "lmosdir.db")
	if err := MigrateUp(ctx, path); err != nil {
		t.Fatal(err)
	}
	migrateBelow(t, path, originVersion)
	before := tableSQL(t, path, "things")
	insertThingBefore(t, path)
	if err := MigrateUp(ctx, path); err != nil {
		t.Fatal(err)
	}

	s := openStore(t, path)
	old, err := s.Get(ctx, "urn:m:a", t0)
	if err != nil || string(old.Document) != `{"id":"urn:m:a"}` || !old.Retrieved.IsZero() || old.Origin != nil {
		t.Fatalf("Get of a Thing registered before the migration = %+v, %v; want it with a zero Retrieved and a nil Origin", old, err)
	}
	fetched := thing("urn:m:b")
	fetched.Retrieved, fetched.Origin = t0, []byte(`{"via":"mdns","href":"http://10.0.0.7/td"}`)
	if _, err := s.Put(ctx, fetched, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	migrateBelow(t, path, originVersion)
	if after := tableSQL(t, path, "things"); after != before {
		t.Fatalf("things after going down:\n%s\nwant, as 000004 made it:\n%s", after, before)
	}
	if err := MigrateUp(ctx, path); err != nil {
		t.Fatalf("MigrateUp after down: %v", err)
	}
	s = openStore(t, path)
	defer s.Close()
	got, err := s.Get(ctx, fetched.ID, t0)
	if err != nil || string(got.Document) != string(fetched.Document) || !got.Retrieved.IsZero() || got.Origin != nil {
		t.Fatalf("Get after down and up = %+v, %v; want the Thing without what went down with 000005", got, err)
	}
}

// tableSQL is the CREATE TABLE statement SQLite keeps for the table name.
func tableSQL(t *testing.T, path, name string) string {
	t.Helper()
	db, err := sql.Open(driverName, dataSourceName(path, writerPragmas))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stmt string
	if err := db.QueryRowContext(testContext(t), `SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1`, name).Scan(&stmt); err != nil {
		t.Fatalf("reading the schema of %s: %v", name, err)
	}
	return stmt
}
