package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
)

func eventIDs(t *testing.T, s *Store, after int64) []int64 {
	t.Helper()
	var ids []int64
	if err := s.Events(testContext(t), after, 0, func(e directory.Event) error {
		ids = append(ids, e.ID)
		return nil
	}); err != nil {
		t.Fatalf("Events(%d): %v", after, err)
	}
	return ids
}

func putThings(t *testing.T, s *Store, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := s.Put(testContext(t), thing(id), t0); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEventsSurviveReopen checks that the log, and where its ids go on from, are in the
// file: a subscriber that resumes after a restart finds the events after its last one,
// and no new event takes the id of one it may have seen, not even after all were purged.
func TestEventsSurviveReopen(t *testing.T) {
	s, path := open(t)
	ctx := testContext(t)
	putThings(t, s, "urn:e:a", "urn:e:b", "urn:e:c")
	before := eventIDs(t, s, 0)
	if len(before) != 3 {
		t.Fatalf("%d events of 3 Puts", len(before))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, path)
	if got := eventIDs(t, s, 0); !slices.Equal(got, before) {
		t.Fatalf("events after reopening = %v, want %v", got, before)
	}
	putThings(t, s, "urn:e:d")
	after := eventIDs(t, s, before[0])
	if len(after) != 3 || !slices.Equal(after[:2], before[1:]) || after[2] <= before[2] {
		t.Fatalf("events after %d = %v, want %v and one new above them", before[0], after, before[1:])
	}
	if n, err := s.PurgeEvents(ctx, t0.Add(time.Hour)); err != nil || n != 4 {
		t.Fatalf("PurgeEvents = %d, %v; want 4", n, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, path)
	defer s.Close()
	newest := after[2]
	if l, err := s.EventLog(ctx); err != nil || l != (directory.EventLog{Purged: newest, Newest: newest}) {
		t.Fatalf("EventLog after purging all and reopening = %+v, %v; want both at %d", l, err, newest)
	}
	putThings(t, s, "urn:e:e")
	if got := eventIDs(t, s, newest); len(got) != 1 || got[0] <= newest {
		t.Fatalf("events after %d = %v, want one new above it", newest, got)
	}
}

// watch runs WatchEvents with wake until the test ends, and checks that it returns the
// context's error then.
func watch(t *testing.T, s *Store, wake func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() { done <- s.WatchEvents(ctx, wake) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != context.Canceled { //nolint:errorlint // the context's own error, as documented
			t.Errorf("WatchEvents after its context ended = %v, want context.Canceled", err)
		}
	})
}

// TestWatchEventsWokenByWriters follows the log the way the directory does, reading after
// its last event on every wake, while writes from many goroutines commit in groups: it
// must end up with every event, and wake must never run twice at once.
func TestWatchEventsWokenByWriters(t *testing.T) {
	s, _ := open(t)
	const writers, writes = 8, 25
	var seen []int64 // only wake touches it until all is closed
	var inWake, seenCount atomic.Int32
	all := make(chan struct{})
	watch(t, s, func() {
		if inWake.Add(1) != 1 {
			t.Error("wake called while it was running")
		}
		defer inWake.Add(-1)
		if len(seen) == writers*writes {
			return
		}
		var last int64
		if len(seen) > 0 {
			last = seen[len(seen)-1]
		}
		if err := s.Events(testContext(t), last, 0, func(e directory.Event) error {
			seen = append(seen, e.ID)
			return nil
		}); err != nil {
			t.Error(err)
		}
		seenCount.Store(int32(len(seen)))
		if len(seen) == writers*writes {
			close(all)
		}
	})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range writes {
				if _, err := s.Put(testContext(t), thing(fmt.Sprintf("urn:w:%d:%d", w, i)), t0); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case <-all:
	case <-time.After(30 * time.Second):
		t.Fatalf("the watcher read %d of %d events", seenCount.Load(), writers*writes)
	}
	if !slices.Equal(seen, eventIDs(t, s, 0)) {
		t.Fatal("the watcher read other events than the log holds")
	}
}

// TestWriterDoesNotWaitForWatchers writes while a watcher is stuck in its first wake, so
// that it takes none of the signals of the commits: they must not wait for it.
func TestWriterDoesNotWaitForWatchers(t *testing.T) {
	s, _ := open(t)
	stuck := make(chan struct{})
	defer close(stuck) // before the watchers' cleanup, which waits for them to return
	first := make(chan struct{})
	watch(t, s, func() {
		select {
		case <-first:
		default:
			close(first)
		}
		<-stuck
	})
	<-first
	ctx, cancel := context.WithTimeout(testContext(t), 30*time.Second)
	defer cancel()
	for i := range 200 {
		if _, err := s.Put(ctx, thing(fmt.Sprintf("urn:n:%d", i)), t0); err != nil {
			t.Fatalf("Put %d with a watcher that does not read: %v", i, err)
		}
	}
	if got := len(eventIDs(t, s, 0)); got != 200 {
		t.Fatalf("%d events of 200 Puts", got)
	}
}

// TestMigrateEvents migrates a database with Things across 000004 and back: the log starts
// empty, with ids above every number handed out before it, and going down leaves the
// Things as they were.
func TestMigrateEvents(t *testing.T) {
	const eventsVersion = 4
	ctx := testContext(t)
	path := filepath.Join(t.TempDir(), "lmosdir.db")
	if err := MigrateUp(ctx, path); err != nil {
		t.Fatal(err)
	}
	migrateBelow(t, path, eventsVersion)
	insertThingBefore(t, path)
	if err := MigrateUp(ctx, path); err != nil {
		t.Fatal(err)
	}

	s := openStore(t, path)
	if l, err := s.EventLog(ctx); err != nil || l != (directory.EventLog{}) {
		t.Fatalf("EventLog after the migration = %+v, %v; want zero", l, err)
	}
	if err := s.Delete(ctx, "urn:m:a", t0); err != nil {
		t.Fatal(err)
	}
	putThings(t, s, "urn:m:b")
	if ids := eventIDs(t, s, 0); len(ids) != 2 || ids[0] <= 1 {
		t.Fatalf("event ids %v, want two above the numbers handed out before the migration", ids)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	migrateBelow(t, path, eventsVersion)
	// Nothing of 000004 is left in the way.
	execSQL(t, path, `CREATE TABLE events (x INTEGER); DROP TABLE events; CREATE TABLE event_log (x INTEGER); DROP TABLE event_log`)
	if err := MigrateUp(ctx, path); err != nil {
		t.Fatalf("MigrateUp after down: %v", err)
	}
	s = openStore(t, path)
	defer s.Close()
	if _, err := s.Get(ctx, "urn:m:b", t0); err != nil {
		t.Fatalf("Get of a Thing registered before going down and up: %v", err)
	}
	if ids := eventIDs(t, s, 0); len(ids) != 0 {
		t.Fatalf("events %v after down and up, want none", ids)
	}
}

// TestEventPlans checks that reading the log after an id and purging it by time are
// lookups, not reads of every event.
func TestEventPlans(t *testing.T) {
	s, _ := open(t)
	putThings(t, s, "urn:p:a", "urn:p:b")
	for query, want := range map[string]string{
		eventsSQL:      "SEARCH events USING INTEGER PRIMARY KEY (rowid>?)",
		purgeEventsSQL: "SEARCH events USING COVERING INDEX events_time_idx (time<?)",
	} {
		if p := plan(t, s, query, 1, 10); !strings.Contains(p, want) || strings.Contains(p, "SCAN") {
			t.Errorf("plan of %s:\n%s\nwant %s", query, p, want)
		}
	}
}
