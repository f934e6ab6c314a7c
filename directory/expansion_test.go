package directory_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/directory/sqlite"
	"github.com/lmosdir/lmosdir/td"
)

// countingStore counts how often the expansion asks the store for work.
type countingStore struct {
	directory.Store
	lookups atomic.Int64
}

func (s *countingStore) Unexpanded(ctx context.Context, now time.Time, limit int) ([]directory.Thing, error) {
	s.lookups.Add(1)
	return s.Store.Unexpanded(ctx, now, limit)
}

// TestExpansionWakesOnDocumentChangesOnly registers a TD, waits for its expansion, and
// checks that heartbeats do not send the expansion looking for work while a real change
// does.
func TestExpansionWakesOnDocumentChangesOnly(t *testing.T) {
	ctx := context.Background()
	inner, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "lmosdir.db"), sqlite.Options{MigrateOnOpen: true})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	store := &countingStore{Store: inner}
	v, err := td.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	dir := directory.NewService(store, v, directory.Options{})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// An interval of an hour: only writes wake it during the test.
		dir.RunExpansion(runCtx, 1, time.Hour, slog.New(slog.DiscardHandler))
	}()
	defer func() { cancel(); <-done }()

	waitExpanded := func() {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			pending, err := inner.Unexpanded(ctx, dir.Now(), 1)
			if err == nil && len(pending) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the expansion did not catch up")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if _, err := dir.Put(ctx, "urn:x:cached", cachedTD("v1")); err != nil {
		t.Fatal(err)
	}
	waitExpanded()
	// Let the loop settle into waiting, then count.
	time.Sleep(100 * time.Millisecond)
	before := store.lookups.Load()
	for range 20 {
		if err := dir.Patch(ctx, "urn:x:cached", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if got := store.lookups.Load(); got != before {
		t.Fatalf("20 heartbeats made the expansion look for work %d times", got-before)
	}
	if err := dir.Patch(ctx, "urn:x:cached", []byte(`{"title":"v2"}`)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for store.lookups.Load() == before {
		if time.Now().After(deadline) {
			t.Fatal("a patch that changed the TD did not wake the expansion")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
