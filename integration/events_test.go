package integration

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lmosdir/lmosdir/client"
	"github.com/lmosdir/lmosdir/internal/pgtest"
)

// follower collects the events of one client.Events loop.
type follower struct {
	t      *testing.T
	events chan client.Event
	errs   chan error
}

func follow(t *testing.T, url string, q client.EventsQuery) *follower {
	t.Helper()
	c, err := client.New(url)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &follower{t: t, events: make(chan client.Event, 10000), errs: make(chan error, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e, err := range c.Events(ctx, q) {
			if err != nil {
				f.errs <- err
				return
			}
			f.events <- e
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

func (f *follower) next() client.Event {
	f.t.Helper()
	select {
	case e := <-f.events:
		return e
	case err := <-f.errs:
		f.t.Fatalf("events: %v", err)
	case <-time.After(60 * time.Second):
		f.t.Fatal("no event within 60 s")
	}
	return client.Event{}
}

// expectCreated reads events until it has the creation of each id, in any order, and
// returns them in the order they came. Every id must come exactly once.
func (f *follower) expectCreated(ids ...string) []client.Event {
	f.t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var got []client.Event
	for len(want) > 0 {
		e := f.next()
		if e.Type != client.ThingCreated || !want[e.ThingID] {
			f.t.Fatalf("event %s %s %s, want the creation of one of %d Things still expected", e.ID, e.Type, e.ThingID, len(want))
		}
		delete(want, e.ThingID)
		got = append(got, e)
	}
	return got
}

// subscribed waits until a follower's stream is open: a Thing written and deleted shows in it.
func (f *follower) subscribed(t *testing.T, url string) {
	t.Helper()
	id := fmt.Sprintf("urn:sync:%d", time.Now().UnixNano())
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		put(t, url, id)
		select {
		case e := <-f.events:
			if e.ThingID == id {
				drain(f)
				return
			}
			t.Fatalf("unexpected event %s %s before the stream was known to be open", e.Type, e.ThingID)
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Fatal("the event stream did not open within 30 s")
}

// drain reads the events that subscribed's probing writes left behind.
func drain(f *follower) {
	for {
		select {
		case e := <-f.events:
			if !strings.HasPrefix(e.ThingID, "urn:sync:") {
				f.t.Fatalf("unexpected event %s %s", e.Type, e.ThingID)
			}
		case <-time.After(300 * time.Millisecond):
			return
		}
	}
}

func put(t *testing.T, url, id string) {
	t.Helper()
	res, body := request(t, "PUT", url+"/things/"+id, "application/td+json", tdWithID(id))
	if res.StatusCode != 201 && res.StatusCode != 204 {
		t.Fatalf("PUT %s: %d %s", id, res.StatusCode, body)
	}
}

func ascending(t *testing.T, events []client.Event) {
	t.Helper()
	var last int64
	for _, e := range events {
		n, err := strconv.ParseInt(e.ID, 10, 64)
		if err != nil || n <= last {
			t.Fatalf("event id %q after %d: not increasing", e.ID, last)
		}
		last = n
	}
}

// TestEventsAcrossReplicas: two lmosdir processes share one database; a subscriber of
// either receives every change made through both, in the same order.
func TestEventsAcrossReplicas(t *testing.T) {
	db := pgtest.NewDatabase(t)
	a, b := serve(t, db), serve(t, db)
	a.waitHealthy(t)
	b.waitHealthy(t)
	onA := follow(t, a.url, client.EventsQuery{})
	onA.subscribed(t, a.url)
	onB := follow(t, b.url, client.EventsQuery{})
	onB.subscribed(t, a.url)
	drain(onA)

	const perReplica = 40
	var ids []string
	var wg sync.WaitGroup
	for r, p := range []*process{a, b} {
		for i := range perReplica {
			id := fmt.Sprintf("urn:replica:%d:%d", r, i)
			ids = append(ids, id)
			wg.Add(1)
			go func() {
				defer wg.Done()
				put(t, p.url, id)
			}()
		}
	}
	wg.Wait()
	fromA := onA.expectCreated(ids...)
	fromB := onB.expectCreated(ids...)
	ascending(t, fromA)
	for i := range fromA {
		if fromA[i].ID != fromB[i].ID || fromA[i].ThingID != fromB[i].ThingID {
			t.Fatalf("event %d: %s %s on one replica, %s %s on the other", i, fromA[i].ID, fromA[i].ThingID, fromB[i].ID, fromB[i].ThingID)
		}
	}
}

// TestEventsSurviveDatabaseRestart: the database restarts under a live stream; changes
// made afterwards, through this process or another, still reach the subscriber.
func TestEventsSurviveDatabaseRestart(t *testing.T) {
	cluster := pgtest.NewCluster(t)
	a, b := serve(t, cluster.URL), serve(t, cluster.URL)
	a.waitHealthy(t)
	b.waitHealthy(t)
	onA := follow(t, a.url, client.EventsQuery{})
	onA.subscribed(t, a.url)
	put(t, b.url, "urn:restart:before")
	onA.expectCreated("urn:restart:before")

	cluster.Restart(t)
	// Through the other process first: only the database can tell this one about it.
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, _ := request(t, "PUT", b.url+"/things/urn:restart:after", "application/td+json", tdWithID("urn:restart:after"))
		if res.StatusCode == 201 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write succeeded within 60 s of the restart: %d", res.StatusCode)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if res, body := request(t, "GET", b.url+"/things/urn:restart:before", "", nil); res.StatusCode != 200 {
		t.Fatalf("the Thing registered before the crash: %d %s", res.StatusCode, body)
	}
	onA.expectCreated("urn:restart:after")
	put(t, a.url, "urn:restart:local")
	onA.expectCreated("urn:restart:local")
}

// TestEventsReplayAfterRestart: a subscriber that comes back with Last-Event-ID after the
// directory restarted gets what happened meanwhile, from the embedded store's event log.
func TestEventsReplayAfterRestart(t *testing.T) {
	data := t.TempDir()
	dbURL := "sqlite://" + filepath.Join(data, "lmosdir.db")
	first := serve(t, dbURL)
	first.waitHealthy(t)
	sub := follow(t, first.url, client.EventsQuery{})
	sub.subscribed(t, first.url)
	put(t, first.url, "urn:replay:0")
	seen := sub.expectCreated("urn:replay:0")
	put(t, first.url, "urn:replay:1")
	put(t, first.url, "urn:replay:2")
	if err := first.stop(t); err != nil {
		t.Fatalf("stopping: %v", err)
	}

	second := serve(t, dbURL)
	second.waitHealthy(t)
	resumed := follow(t, second.url, client.EventsQuery{LastEventID: seen[0].ID})
	replayed := resumed.expectCreated("urn:replay:1", "urn:replay:2")
	if replayed[0].ThingID != "urn:replay:1" {
		t.Fatalf("replay out of order: %s first", replayed[0].ThingID)
	}
	ascending(t, append(seen, replayed...))
	put(t, second.url, "urn:replay:3")
	resumed.expectCreated("urn:replay:3")
}

// TestEventsAfterTheDatabaseLostEvents: the database comes back without the last events it
// recorded, as after a restore from a backup, and gives their ids to new events. A
// subscriber that saw the lost events is told they are gone rather than skipping the new
// ones; a new subscription receives the new events.
func TestEventsAfterTheDatabaseLostEvents(t *testing.T) {
	db := pgtest.NewDatabase(t)
	p := serve(t, db)
	p.waitHealthy(t)
	old := follow(t, p.url, client.EventsQuery{})
	old.subscribed(t, p.url)
	put(t, p.url, "urn:lost:kept")
	kept := old.expectCreated("urn:lost:kept")[0]
	put(t, p.url, "urn:lost:0")
	put(t, p.url, "urn:lost:1")
	old.expectCreated("urn:lost:0", "urn:lost:1")

	keptID, err := strconv.ParseInt(kept.ID, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, `DELETE FROM events WHERE id > $1`, keptID); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SELECT setval('events_id_seq', $1)`, keptID); err != nil {
		t.Fatal(err)
	}

	put(t, p.url, "urn:lost:after")
	select {
	case e := <-old.events:
		t.Fatalf("event %s %s %s for a subscriber whose last events were lost", e.ID, e.Type, e.ThingID)
	case err := <-old.errs:
		if !errors.Is(err, client.ErrEventsExpired) {
			t.Fatalf("the subscriber's stream ended with %v, want client.ErrEventsExpired", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the subscriber was not told within 60 s")
	}
	fresh := follow(t, p.url, client.EventsQuery{})
	fresh.subscribed(t, p.url)
	put(t, p.url, "urn:lost:later")
	fresh.expectCreated("urn:lost:later")
}
