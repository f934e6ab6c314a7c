package main

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"path/filepath"
	"strings"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/directory/postgres"
	"github.com/lmosdir/lmosdir/directory/sqlite"
	"github.com/lmosdir/lmosdir/jsonld"
	"github.com/lmosdir/lmosdir/td"
)

// backend is where the directory keeps its data: PostgreSQL for production and replicas,
// or the embedded single-file store, the default.
type backend struct {
	kind string // "postgres" or "sqlite"
	// location is the PostgreSQL URL or the SQLite file path.
	location string
}

// chooseBackend reads --database-url: postgres:// and postgresql:// select PostgreSQL,
// sqlite: selects the embedded store at that path, and no URL selects the embedded store
// in the data directory.
func chooseBackend(cfg config) (backend, error) {
	url := cfg.DatabaseURL
	switch {
	case url == "":
		return backend{kind: "sqlite", location: filepath.Join(cfg.DataDir, "lmosdir.db")}, nil
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return backend{kind: "postgres", location: url}, nil
	case strings.HasPrefix(url, "sqlite:"):
		path, err := sqlite.ParseURL(url)
		if err != nil {
			return backend{}, err
		}
		return backend{kind: "sqlite", location: path}, nil
	default:
		return backend{}, fmt.Errorf("database URL %q: use postgres://… for PostgreSQL or sqlite:///path/file.db for the embedded store", url)
	}
}

func (b backend) open(ctx context.Context, cfg config) (directory.Store, error) {
	if b.kind == "postgres" {
		return postgres.Open(ctx, b.location, postgres.Options{MaxConns: int32(cfg.DBMaxConns), MigrateOnOpen: cfg.MigrateOnStart})
	}
	return sqlite.Open(ctx, b.location, sqlite.Options{MigrateOnOpen: cfg.MigrateOnStart})
}

// migrations are the four migrate operations of a backend, so `lmosdir migrate` works
// the same on both.
type migrations struct {
	up      func(ctx context.Context, location string) error
	down    func(ctx context.Context, location string, n int) error
	version func(ctx context.Context, location string) (uint, bool, error)
	force   func(ctx context.Context, location string, version int) error
}

func (b backend) migrations() migrations {
	if b.kind == "postgres" {
		return migrations{postgres.MigrateUp, postgres.MigrateDown, postgres.MigrateVersion, postgres.MigrateForce}
	}
	return migrations{sqlite.MigrateUp, sqlite.MigrateDown, sqlite.MigrateVersion, sqlite.MigrateForce}
}

// describe names where the data lives, without the password of a database URL.
func (b backend) describe() string {
	if b.kind == "sqlite" {
		if abs, err := filepath.Abs(b.location); err == nil {
			return abs
		}
		return b.location
	}
	if u, err := neturl.Parse(b.location); err == nil {
		return u.Redacted()
	}
	return "postgres"
}

// readCacheBytes is the read cache the Service may keep: only the embedded store, which one
// process owns, sees every write pass through this process.
func (b backend) readCacheBytes(cfg config) int {
	if b.kind != "sqlite" {
		return 0
	}
	return cfg.ReadCacheMiB << 20
}

// openDirectory opens the configured store and the directory on it; the caller closes the
// store.
func openDirectory(ctx context.Context, cfg config) (*directory.Service, backend, directory.Store, error) {
	b, err := chooseBackend(cfg)
	if err != nil {
		return nil, b, nil, err
	}
	store, err := b.open(ctx, cfg)
	if err != nil {
		return nil, b, nil, err
	}
	validator, err := td.NewValidator()
	if err != nil {
		return nil, b, nil, errors.Join(err, store.Close())
	}
	loader, err := jsonld.NewLoader(jsonld.LoaderOptions{Dir: cfg.ContextDir, AllowRemote: commaList(cfg.ContextAllow)})
	if err != nil {
		return nil, b, nil, errors.Join(err, store.Close())
	}
	dir := directory.NewService(store, validator, directory.Options{
		MaxTTL:         cfg.MaxTTL,
		ReadCacheBytes: b.readCacheBytes(cfg),
		Expander:       jsonld.NewExpander(loader),
		Search:         directory.SearchLimits{Timeout: cfg.QueryTimeout, MaxResultBytes: cfg.MaxResultBytes},
		EventBuffer:    cfg.EventsBuffer,
		MaxSubscribers: cfg.EventsMaxSubs,
	})
	return dir, b, store, nil
}
