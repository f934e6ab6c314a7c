package migrations

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/source/iofs"
)

// DirtyError reports a database on which a migration failed halfway. Only a person can
// tell which of its statements took effect, so it is never forced automatically.
type DirtyError struct {
	Version int // -1 when the failed migration was the first one, reverted
}

func (e *DirtyError) Error() string {
	return fmt.Sprintf("database schema is dirty at version %d: a migration failed halfway; repair the schema by hand, then run: lmosdir migrate force %d", e.Version, e.Version)
}

// Run calls fn with m and closes m afterwards. golang-migrate takes no context, so the
// end of ctx asks it to stop between two migrations.
func Run(ctx context.Context, m *migrate.Migrate, fn func(*migrate.Migrate) error) (err error) {
	defer func() {
		srcErr, dbErr := m.Close()
		err = errors.Join(err, srcErr, dbErr)
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { m.GracefulStop <- true })
	defer stop()
	return fn(m)
}

// Up applies every migration not yet applied.
func Up(m *migrate.Migrate) error {
	err := m.Up()
	if err == nil || errors.Is(err, migrate.ErrNoChange) {
		return nil
	}
	return explainDirty(m, fmt.Errorf("migrating up: %w", err))
}

// Down reverts the n most recent migrations.
func Down(m *migrate.Migrate, n int) error {
	if n <= 0 {
		return fmt.Errorf("migrating down: the number of migrations to revert must be positive, got %d", n)
	}
	err := m.Steps(-n)
	if err == nil || errors.Is(err, migrate.ErrNoChange) {
		return nil
	}
	return explainDirty(m, fmt.Errorf("migrating down %d: %w", n, err))
}

// Version returns the applied schema version, 0 when none is.
func Version(m *migrate.Migrate) (uint, bool, error) {
	version, dirty, err := m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		return 0, false, nil
	}
	return version, dirty, err
}

// Force records version v as applied and clean without running anything (-1: no
// version), after a person has repaired a dirty schema by hand.
func Force(m *migrate.Migrate, v int) error {
	if err := m.Force(v); err != nil {
		return fmt.Errorf("forcing version %d: %w", v, err)
	}
	return nil
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

// CheckVersion explains, for a store's readiness check, a schema version that is not the
// one this binary's migrations end at.
func CheckVersion(applied, latest uint) error {
	switch {
	case applied < latest:
		return fmt.Errorf("database schema is at version %d but this lmosdir needs version %d: run lmosdir migrate up", applied, latest)
	case applied > latest:
		return fmt.Errorf("database schema is at version %d, newer than the version %d this lmosdir knows: upgrade lmosdir", applied, latest)
	}
	return nil
}

// Latest returns the highest migration version in the folder dir of fsys. The folders are
// embedded in the binary, so an unreadable one is a build defect: it panics.
func Latest(fsys fs.FS, dir string) uint {
	src, err := iofs.New(fsys, dir)
	if err != nil {
		panic(fmt.Sprintf("migrations %s: %v", dir, err))
	}
	v, err := src.First()
	if err != nil {
		panic(fmt.Sprintf("migrations %s: %v", dir, err))
	}
	for {
		next, err := src.Next(v)
		if errors.Is(err, os.ErrNotExist) {
			return v
		}
		if err != nil {
			panic(fmt.Sprintf("migrations %s: %v", dir, err))
		}
		v = next
	}
}
