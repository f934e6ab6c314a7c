// Package dirtest helps tests run a directory.Service as lmosdir serve does.
package dirtest

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/directory/sqlite"
	"github.com/lmosdir/lmosdir/td"
)

// NewEmbedded is a directory on an embedded store of its own that lives as long as the
// test.
func NewEmbedded(t testing.TB, opts directory.Options) *directory.Service {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "lmosdir.db"), sqlite.Options{MigrateOnOpen: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Error(err)
		}
	})
	validator, err := td.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	return directory.NewService(store, validator, opts)
}

// StartEvents runs the directory's event delivery until the test ends and waits until it
// accepts subscribers. Call it after starting an HTTP server on dir: cleanups run in
// reverse, so the delivery ends first, and with it the event streams that the server's
// Close would wait for.
func StartEvents(t testing.TB, dir *directory.Service) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- dir.RunEvents(ctx, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Error(err)
		}
	})
	for dir.Ready(t.Context()) != nil {
		time.Sleep(time.Millisecond)
	}
}

// Clock is a settable time source for directory.Options.Clock, so that tests of expiry
// move time instead of sleeping.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock standing at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
