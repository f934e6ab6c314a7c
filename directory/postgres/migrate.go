package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers the pgx5:// driver
	"github.com/golang-migrate/migrate/v4/source/iofs"

	"github.com/lmosdir/lmosdir/migrations"
)

// migrationsTable is golang-migrate's default, read directly by Ready and Open.
const migrationsTable = "schema_migrations"

// defaultLockTimeout bounds the wait for another replica's migration when ctx has no
// deadline. golang-migrate's own default (15 s) would fail replicas that start while a
// long migration runs elsewhere, which is exactly when they should wait.
const defaultLockTimeout = 5 * time.Minute

// MigrateUp applies every embedded migration not yet applied. Concurrent callers on one
// database are serialized by golang-migrate's advisory lock, so replicas may all call it
// at startup.
func MigrateUp(ctx context.Context, databaseURL string) error {
	return withMigrate(ctx, databaseURL, migrations.Up)
}

// MigrateDown reverts the n most recent migrations.
func MigrateDown(ctx context.Context, databaseURL string, n int) error {
	return withMigrate(ctx, databaseURL, func(m *migrate.Migrate) error { return migrations.Down(m, n) })
}

// MigrateVersion returns the applied schema version, 0 when none is.
func MigrateVersion(ctx context.Context, databaseURL string) (version uint, dirty bool, err error) {
	err = withMigrate(ctx, databaseURL, func(m *migrate.Migrate) (err error) {
		version, dirty, err = migrations.Version(m)
		return err
	})
	return version, dirty, err
}

// MigrateForce records version v as applied and clean, after a person has repaired a dirty
// schema by hand.
func MigrateForce(ctx context.Context, databaseURL string, v int) error {
	return withMigrate(ctx, databaseURL, func(m *migrate.Migrate) error { return migrations.Force(m, v) })
}

func withMigrate(ctx context.Context, databaseURL string, fn func(*migrate.Migrate) error) error {
	target, err := migrateURL(databaseURL)
	if err != nil {
		return err
	}
	src, err := iofs.New(migrations.Postgres, "postgres")
	if err != nil {
		return fmt.Errorf("reading embedded migrations: %w", err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, target)
	if err != nil {
		return fmt.Errorf("connecting to the database for migrations: %w", err)
	}
	m.LockTimeout = defaultLockTimeout
	if deadline, ok := ctx.Deadline(); ok {
		m.LockTimeout = time.Until(deadline)
	}
	return migrations.Run(ctx, m, fn)
}

// migrateURL turns the URL users give (postgres:// or postgresql://) into one for
// golang-migrate's pgx v5 driver.
func migrateURL(databaseURL string) (string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "", errors.New("the database URL is not a valid URL (expected postgres://user:password@host:port/dbname)")
	}
	switch u.Scheme {
	case "postgres", "postgresql", "pgx5":
	default:
		return "", fmt.Errorf("the database URL scheme is %q; expected postgres://user:password@host:port/dbname", u.Scheme)
	}
	u.Scheme = "pgx5"
	// The driver hands the remaining parameters to a plain connection, whose server would
	// reject the pool's settings as unknown run-time parameters.
	q := u.Query()
	for key := range q {
		if strings.HasPrefix(key, "pool_") {
			q.Del(key)
		}
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// latestVersion is the highest embedded migration, the version Ready expects.
var latestVersion = migrations.Latest(migrations.Postgres, "postgres")
