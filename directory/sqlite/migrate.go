package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	migratesqlite "github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source/iofs"

	"github.com/lmosdir/lmosdir/migrations"
)

// migrationsTable is golang-migrate's default, read directly by Ready and Open.
const migrationsTable = "schema_migrations"

// MigrateUp applies every embedded migration not yet applied to the database file at path,
// creating it (and its directory) if needed. It takes the file's process lock, so it fails
// at once while a server has the database open: the server's schema must not change
// under it.
func MigrateUp(ctx context.Context, path string) error {
	return withLockedMigrate(ctx, path, migrations.Up)
}

// MigrateDown reverts the n most recent migrations.
func MigrateDown(ctx context.Context, path string, n int) error {
	return withLockedMigrate(ctx, path, func(m *migrate.Migrate) error { return migrations.Down(m, n) })
}

// MigrateVersion returns the applied schema version, 0 when none is or when the file does
// not exist (which it does not create). It takes no process lock, so it works while a
// server has the file open: at most it creates golang-migrate's empty version table, a
// write SQLite serializes with the server's.
func MigrateVersion(ctx context.Context, path string) (version uint, dirty bool, err error) {
	path, err = absPath(path)
	if err != nil {
		return 0, false, err
	}
	if _, statErr := os.Stat(path); errors.Is(statErr, fs.ErrNotExist) {
		return 0, false, nil
	}
	err = withMigrate(ctx, path, func(m *migrate.Migrate) (err error) {
		version, dirty, err = migrations.Version(m)
		return err
	})
	return version, dirty, err
}

// MigrateForce records version v as applied and clean without running anything (-1: no
// version), after a person has repaired a dirty schema by hand.
func MigrateForce(ctx context.Context, path string, v int) error {
	return withLockedMigrate(ctx, path, func(m *migrate.Migrate) error { return migrations.Force(m, v) })
}

// withLockedMigrate runs fn holding the database's process lock. golang-migrate's own lock
// for SQLite only serializes migrations within one process.
func withLockedMigrate(ctx context.Context, path string, fn func(*migrate.Migrate) error) (err error) {
	path, err = absPath(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating the directory of database %s: %w", path, err)
	}
	lock, err := lockDatabase(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, lock.release()) }()
	return withMigrate(ctx, path, fn)
}

// withMigrate runs fn on a migrator for the database at the absolute path; the caller
// holds the process lock when fn writes.
func withMigrate(ctx context.Context, path string, fn func(*migrate.Migrate) error) error {
	src, err := iofs.New(migrations.SQLite, "sqlite")
	if err != nil {
		return fmt.Errorf("reading embedded migrations: %w", err)
	}
	// Our own *sql.DB rather than a sqlite:// URL for golang-migrate to open: its driver
	// pastes the URL back together as the file name, which mangles paths with spaces, %
	// or ?, and it would open the file without the pragmas every connection needs.
	db, err := sql.Open(driverName, dataSourceName(path, writerPragmas))
	if err != nil {
		return fmt.Errorf("opening database %s for migrations: %w", path, err)
	}
	driver, err := migratesqlite.WithInstance(db, &migratesqlite.Config{MigrationsTable: migrationsTable})
	if err != nil {
		db.Close()
		return fmt.Errorf("opening database %s for migrations: %w", path, err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "sqlite", driver)
	if err != nil {
		driver.Close()
		return fmt.Errorf("opening database %s for migrations: %w", path, err)
	}
	return migrations.Run(ctx, m, fn)
}

// ParseURL returns the path of the database file that a sqlite URL names:
//
//	sqlite:///abs/dir/lmosdir.db  /abs/dir/lmosdir.db
//	sqlite:/abs/dir/lmosdir.db    /abs/dir/lmosdir.db
//	sqlite://rel/lmosdir.db       rel/lmosdir.db, relative to the working directory
//	sqlite:rel/lmosdir.db         rel/lmosdir.db
//
// Whatever follows "sqlite:" and an optional "//" is the path, as golang-migrate reads its
// sqlite:// URLs; so there is no host, and three slashes make the path absolute. Percent
// escapes are decoded (%20 is a space, %25 a percent sign, %3F a question mark). A query
// or a fragment is refused rather than ignored: the store's settings come from Options.
func ParseURL(rawURL string) (string, error) {
	const scheme = "sqlite:"
	if len(rawURL) < len(scheme) || !strings.EqualFold(rawURL[:len(scheme)], scheme) {
		return "", fmt.Errorf("the database URL %q is not a sqlite URL; expected sqlite:///absolute/path.db or sqlite:relative/path.db", rawURL)
	}
	rest := strings.TrimPrefix(rawURL[len(scheme):], "//")
	if strings.ContainsAny(rest, "?#") {
		return "", fmt.Errorf("the database URL %q has a query or fragment, which a sqlite URL does not take; write ? as %%3F and # as %%23 in a file name", rawURL)
	}
	path, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("the database URL %q has an invalid percent escape; write %% as %%25", rawURL)
	}
	if path == "" {
		return "", fmt.Errorf("the database URL %q names no file; expected sqlite:///absolute/path.db or sqlite:relative/path.db", rawURL)
	}
	return path, nil
}

// absPath makes path absolute, so that the lock file and the messages name one file
// whatever the working directory.
func absPath(path string) (string, error) {
	if path == "" {
		return "", errors.New("no database file given")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolving the database path %q: %w", path, err)
	}
	return abs, nil
}

// latestVersion is the highest embedded migration, the version Ready expects.
var latestVersion = migrations.Latest(migrations.SQLite, "sqlite")
