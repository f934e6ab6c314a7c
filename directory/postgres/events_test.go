package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lmosdir/lmosdir/directory"
)

// watch runs WatchEvents on s until the test ends and returns a channel that receives (at
// most one pending) wake. It waits for the first wake, which tells that LISTEN is in place.
func watch(t *testing.T, s *Store) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(testContext(t))
	woken := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- s.WatchEvents(ctx, func() {
			select {
			case woken <- struct{}{}:
			default:
			}
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("WatchEvents = %v, want context.Canceled", err)
		}
	})
	waitWake(t, woken, "the first wake, once listening")
	return woken
}

func waitWake(t *testing.T, woken <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-woken:
	case <-time.After(30 * time.Second):
		t.Fatalf("no wake within 30 s: %s", what)
	}
}

// eventThings lists the type and Thing of each event after after.
func eventThings(t *testing.T, s *Store, after int64) []string {
	t.Helper()
	var things []string
	if err := s.Events(testContext(t), after, 0, func(e directory.Event) error {
		things = append(things, string(e.Type)+" "+e.ThingID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return things
}

func putThing(t *testing.T, s *Store, id string, now time.Time) {
	t.Helper()
	th := directory.Thing{ID: id, Document: []byte(`{"id":"` + id + `"}`), Created: now, Modified: now}
	if _, err := s.Put(testContext(t), th, now); err != nil {
		t.Fatalf("Put(%q): %v", id, err)
	}
}

// TestWatchEventsAcrossStores: a write through one replica wakes the watcher of another on
// the same database, which then reads the event.
func TestWatchEventsAcrossStores(t *testing.T) {
	writer, dbURL := open(t)
	reader, err := Open(testContext(t), dbURL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reader.Close() })
	woken := watch(t, reader)

	putThing(t, writer, "urn:x:a", time.Now())
	waitWake(t, woken, "a write through the other store")
	if got := eventThings(t, reader, 0); len(got) != 1 || got[0] != "thing_created urn:x:a" {
		t.Fatalf("events read by the other store = %q, want the creation of urn:x:a", got)
	}
}

// TestWatchEventsReconnects kills the listening connection and keeps the watcher from
// connecting again for a while: once it is back, it wakes, and the events written while it
// was away are there to read.
func TestWatchEventsReconnects(t *testing.T) {
	ctx := testContext(t)
	s, dbURL := open(t)
	woken := watch(t, s)
	putThing(t, s, "urn:x:before", time.Now())
	waitWake(t, woken, "a write")

	// From another database, since the test's will refuse connections for a while.
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	database := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	admin := connect(t, u.String())
	listener := func() (pid int32) {
		t.Helper()
		err := admin.QueryRow(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'`, database).Scan(&pid)
		if err != nil {
			t.Fatalf("finding the listening connection: %v", err)
		}
		return pid
	}
	first := listener()
	// The pool keeps its connections; new ones, the watcher's, are refused.
	allowConnections := func(allow bool) {
		t.Helper()
		sql := fmt.Sprintf(`ALTER DATABASE %s WITH ALLOW_CONNECTIONS %t`, pgx.Identifier{database}.Sanitize(), allow)
		if _, err := admin.Exec(context.Background(), sql); err != nil {
			t.Fatal(err)
		}
	}
	allowConnections(false)
	t.Cleanup(func() { allowConnections(true) })
	var terminated bool
	if err := admin.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, first).Scan(&terminated); err != nil || !terminated {
		t.Fatalf("pg_terminate_backend = %v, %v", terminated, err)
	}
	select {
	case <-woken: // the notification of the first write may still have been pending
	case <-time.After(100 * time.Millisecond):
	}

	putThing(t, s, "urn:x:while-away", time.Now())
	select {
	case <-woken:
		t.Fatal("woken while the watcher cannot connect")
	case <-time.After(time.Second):
	}
	allowConnections(true)
	waitWake(t, woken, "the watcher being back")
	if got := eventThings(t, s, 0); len(got) != 2 || got[1] != "thing_created urn:x:while-away" {
		t.Fatalf("events = %q, want the write made while the watcher was away", got)
	}
	if again := listener(); again == first {
		t.Fatalf("the listening connection is still backend %d", first)
	}
	putThing(t, s, "urn:x:after", time.Now())
	waitWake(t, woken, "a write after reconnecting")
}

// TestFailedWriteRecordsNoEvent: a write that PostgreSQL rejects leaves no event behind,
// although its events were sent in the same round trip as the write.
func TestFailedWriteRecordsNoEvent(t *testing.T) {
	ctx := testContext(t)
	s, _ := open(t)
	now := time.Now()
	putThing(t, s, "urn:x:a", now)
	before, err := s.EventLog(ctx)
	if err != nil {
		t.Fatal(err)
	}

	huge := []byte(`{"n":1e200000}`)
	var reqErr *directory.RequestError
	if _, err := s.Put(ctx, directory.Thing{ID: "urn:x:huge", Document: huge, Created: now, Modified: now}, now); !errors.As(err, &reqErr) {
		t.Fatalf("Put of a number beyond jsonb = %v, want a RequestError", err)
	}
	if err := s.Create(ctx, directory.Thing{ID: "urn:x:huge", Document: huge, Created: now, Modified: now}, now); !errors.As(err, &reqErr) {
		t.Fatalf("Create of a number beyond jsonb = %v, want a RequestError", err)
	}
	err = s.Update(ctx, "urn:x:a", now, func(th directory.Thing) (directory.Thing, error) {
		th.Document, th.Modified = huge, now.Add(time.Second)
		return th, nil
	})
	if !errors.As(err, &reqErr) {
		t.Fatalf("Update to a number beyond jsonb = %v, want a RequestError", err)
	}

	if got := eventThings(t, s, before.Newest); len(got) != 0 {
		t.Fatalf("failed writes recorded %q", got)
	}
	if after, err := s.EventLog(ctx); err != nil || after != before {
		t.Fatalf("EventLog after failed writes = %+v, %v; want %+v", after, err, before)
	}
}

// TestPurgeExpiredPassesOverLockedIDs: the purge holds the events lock, so it must not wait
// for the lock of an id that a write holds (the write would wait for the events lock in
// turn); it purges the others and leaves that one for later.
func TestPurgeExpiredPassesOverLockedIDs(t *testing.T) {
	ctx := testContext(t)
	s, dbURL := open(t)
	now := time.Now()
	for _, id := range []string{"urn:x:locked", "urn:x:free"} {
		th := directory.Thing{ID: id, Document: []byte(`{}`), Created: now, Modified: now, Expires: now.Add(time.Second)}
		if _, err := s.Put(ctx, th, now); err != nil {
			t.Fatal(err)
		}
	}
	writer, err := connect(t, dbURL).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = writer.Rollback(ctx) }()
	if _, err := writer.Exec(ctx, lockIDSQL, "urn:x:locked"); err != nil {
		t.Fatal(err)
	}

	later := now.Add(time.Minute)
	quick, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if n, err := s.PurgeExpired(quick, later); err != nil || n != 1 {
		t.Fatalf("PurgeExpired while a write holds one id = %d, %v; want 1", n, err)
	}
	if err := writer.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PurgeExpired(ctx, later); err != nil || n != 1 {
		t.Fatalf("PurgeExpired once the write is over = %d, %v; want 1", n, err)
	}
	got := eventThings(t, s, 0)
	want := []string{"thing_created urn:x:locked", "thing_created urn:x:free", "thing_deleted urn:x:free", "thing_deleted urn:x:locked"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events = %q, want %q", got, want)
	}
	// No document or patch is an empty one: only a creation has a document, only an
	// update a patch.
	var misfits int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM events
WHERE (document IS NULL) <> (type <> 'thing_created') OR (patch IS NULL) <> (type <> 'thing_updated')`).Scan(&misfits); err != nil || misfits != 0 {
		t.Fatalf("%d events with a NULL document or patch where it should not be, or none where it should (%v)", misfits, err)
	}
}

// TestSubscriptionsEndWhenTheLogLostEvents: the database comes back without events it had
// recorded, as after a restore. A subscription that follows the hub, and one that resumed
// from a lost id and has not read yet, both end with ErrEventsGone instead of waiting for
// ids the database will give to other events.
func TestSubscriptionsEndWhenTheLogLostEvents(t *testing.T) {
	ctx := testContext(t)
	s, dbURL := open(t)
	dir := directory.NewService(s, nil, directory.Options{})
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- dir.RunEvents(runCtx, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		stop()
		<-ran
	})
	var live *directory.Subscription
	for deadline := time.Now().Add(10 * time.Second); live == nil; time.Sleep(10 * time.Millisecond) {
		var err error
		if live, err = dir.Subscribe(ctx, nil, directory.EventFilter{}); err != nil && !errors.Is(err, directory.ErrEventsStopped) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the hub did not start within 10 s")
		}
	}
	defer live.Close()
	for _, id := range []string{"urn:x:kept", "urn:x:lost-1", "urn:x:lost-2"} {
		putThing(t, s, id, time.Now())
	}
	var ids []int64
	for range 3 {
		e, err := live.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	lastSeen := ids[2]
	resumed, err := dir.Subscribe(ctx, &lastSeen, directory.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()

	conn := connect(t, dbURL)
	if _, err := conn.Exec(ctx, `DELETE FROM events WHERE id > $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SELECT setval('events_id_seq', $1)`, ids[0]); err != nil {
		t.Fatal(err)
	}
	putThing(t, s, "urn:x:after", time.Now())

	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if e, err := live.Next(wait); !errors.Is(err, directory.ErrEventsGone) {
		t.Fatalf("the live subscription got %v, %v; want ErrEventsGone", e, err)
	}
	if e, err := resumed.Next(wait); !errors.Is(err, directory.ErrEventsGone) {
		t.Fatalf("the resumed subscription got %v, %v; want ErrEventsGone", e, err)
	}
	if _, err := dir.Subscribe(ctx, &lastSeen, directory.EventFilter{}); !errors.Is(err, directory.ErrEventsGone) {
		t.Fatalf("resuming after a lost event: %v, want ErrEventsGone", err)
	}
}
