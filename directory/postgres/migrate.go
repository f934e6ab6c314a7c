package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
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

// DirtyError reports a database on which a migration failed halfway. Only a person can
// tell which of its statements took effect, so it is never forced automatically.
type DirtyError struct {
	Version int // -1 when the failed migration was the first one, reverted
}

func (e *DirtyError) Error() string {
	return fmt.Sprintf("database schema is dirty at version %d: a migration failed halfway; repair the schema by hand, then run: lmosdir migrate force %d", e.Version, e.Version)
}

// MigrateUp applies every embedded migration not yet applied. Concurrent callers on one
// database are serialized by golang-migrate's advisory lock, so replicas may all call it
// at startup.
func MigrateUp(ctx context.Context, databaseURL string) error {
	return withMigrate(ctx, databaseURL, func(m *migrate.Migrate) error {
		err := m.Up()
		if err == nil || errors.Is(err, migrate.ErrNoChange) {
			return nil
		}
		return explainDirty(m, fmt.Errorf("migrating up: %w", err))
	})
}

// MigrateDown reverts the n most recent migrations.
func MigrateDown(ctx context.Context, databaseURL string, n int) error {
	if n <= 0 {
		return fmt.Errorf("migrating down: the number of migrations to revert must be positive, got %d", n)
	}
	return withMigrate(ctx, databaseURL, func(m *migrate.Migrate) error {
		err := m.Steps(-n)
		if err == nil || errors.Is(err, migrate.ErrNoChange) {
			return nil
		}
		return explainDirty(m, fmt.Errorf("migrating down %d: %w", n, err))
	})
}

// MigrateVersion returns the applied schema version, 0 when none is.
func MigrateVersion(ctx context.Context, databaseURL string) (version uint, dirty bool, err error) {
	err = withMigrate(ctx, databaseURL, func(m *migrate.Migrate) error {
		version, dirty, err = m.Version()
		if errors.Is(err, migrate.ErrNilVersion) {
			return nil
		}
		return err
	})
	return version, dirty, err
}

// MigrateForce records version v as applied and clean without running anything (-1: no
// version), after a person has repaired a dirty schema by hand.
func MigrateForce(ctx context.Context, databaseURL string, v int) error {
	return withMigrate(ctx, databaseURL, func(m *migrate.Migrate) error {
		if err := m.Force(v); err != nil {
			return fmt.Errorf("forcing version %d: %w", v, err)
		}
		return nil
	})
}

// explainDirty turns golang-migrate's dirty errors, and failures that just left the schema
// dirty, into a DirtyError the operator can act on.
func explainDirty(m *migrate.Migrate, err error) error {
	var dirty migrate.ErrDirty
	if errors.As(err, &dirty) {
		return &DirtyError{Version: dirty.Version}
	}
	if version, isDirty, verr := m.Version(); verr == nil && isDirty {
		return errors.Join(err, &DirtyError{Version: int(version)})
	}
	return err
}

func withMigrate(ctx context.Context, databaseURL string, fn func(*migrate.Migrate) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
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
	defer func() {
		srcErr, dbErr := m.Close()
		err = errors.Join(err, srcErr, dbErr)
	}()
	m.LockTimeout = defaultLockTimeout
	if deadline, ok := ctx.Deadline(); ok {
		m.LockTimeout = time.Until(deadline)
	}
	// golang-migrate takes no context; GracefulStop ends a run between two migrations.
	stop := context.AfterFunc(ctx, func() { m.GracefulStop <- true })
	defer stop()
	return fn(m)
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
var latestVersion = func() uint {
	src, err := iofs.New(migrations.Postgres, "postgres")
	if err != nil {
		panic(fmt.Sprintf("postgres: embedded migrations: %v", err))
	}
	v, err := src.First()
	if err != nil {
		panic(fmt.Sprintf("postgres: embedded migrations: %v", err))
	}
	for {
		next, err := src.Next(v)
		if errors.Is(err, os.ErrNotExist) {
			return v
		}
		if err != nil {
			panic(fmt.Sprintf("postgres: embedded migrations: %v", err))
		}
		v = next
	}
}()
