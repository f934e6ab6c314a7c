package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/lmosdir/lmosdir/directory"
)

func events(t *testing.T, s directory.Store, after int64, limit int) []directory.Event {
	t.Helper()
	var got []directory.Event
	if err := s.Events(ctx(t), after, limit, func(e directory.Event) error {
		got = append(got, e)
		return nil
	}); err != nil {
		t.Fatalf("Events(%d, %d): %v", after, limit, err)
	}
	return got
}

func eventLog(t *testing.T, s directory.Store) directory.EventLog {
	t.Helper()
	l, err := s.EventLog(ctx(t))
	if err != nil {
		t.Fatalf("EventLog: %v", err)
	}
	return l
}

// wantEvent is what one recorded event must be: for a creation, its document; for an
// update, a patch that turns before into after.
type wantEvent struct {
	typ                     directory.EventType
	thing                   string
	kind, vendor            string
	at                      time.Time
	document, before, after []byte
}

// eventRecorder checks the events each write of a test adds to the log.
type eventRecorder struct {
	t    *testing.T
	s    directory.Store
	last int64
}

// expect checks that the writes since the last call recorded exactly want, in order.
func (r *eventRecorder) expect(want ...wantEvent) {
	r.t.Helper()
	got := events(r.t, r.s, r.last, 0)
	if len(got) != len(want) {
		r.t.Fatalf("%d new events %+v, want %d", len(got), eventSummary(got), len(want))
	}
	for i, e := range got {
		w := want[i]
		if e.ID <= r.last {
			r.t.Errorf("event %d has id %d, not above the previous %d", i, e.ID, r.last)
		}
		r.last = e.ID
		if e.Type != w.typ || e.ThingID != w.thing || e.Kind != w.kind || e.VendorName != w.vendor || !e.Time.Equal(w.at) {
			r.t.Errorf("event %d = %s %q kind %q vendor %q at %v, want %s %q kind %q vendor %q at %v",
				i, e.Type, e.ThingID, e.Kind, e.VendorName, e.Time, w.typ, w.thing, w.kind, w.vendor, w.at)
		}
		if !bytes.Equal(e.Document, w.document) {
			r.t.Errorf("event %d (%s) Document =\n%s\nwant\n%s", i, e.Type, e.Document, w.document)
		}
		if w.after == nil {
			if e.Patch != nil {
				r.t.Errorf("event %d (%s) has a patch: %s", i, e.Type, e.Patch)
			}
			continue
		}
		if got := applyPatch(r.t, w.before, e.Patch); !sameJSON(r.t, got, w.after) {
			r.t.Errorf("event %d (%s): its patch %s turns the TD before into\n%s\nwant\n%s", i, e.Type, e.Patch, got, w.after)
		}
		if !bytes.HasPrefix(e.Patch, fmt.Appendf(nil, `{"id":%q`, e.ThingID)) {
			r.t.Errorf("event %d (%s): the patch %s does not start with the id", i, e.Type, e.Patch)
		}
	}
}

func applyPatch(t *testing.T, doc, patch []byte) []byte {
	t.Helper()
	out, err := jsonpatch.MergePatch(doc, patch)
	if err != nil {
		t.Fatalf("applying the merge patch %s: %v", patch, err)
	}
	return out
}

// sameJSON compares two JSON texts as values.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

func eventSummary(list []directory.Event) []string {
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = fmt.Sprintf("%d %s %s", e.ID, e.Type, e.ThingID)
	}
	return out
}

// enriched is the Enriched TD of the live Thing id as a store serves it at now.
func enriched(t *testing.T, s directory.Store, id string, now time.Time) []byte {
	t.Helper()
	return get(t, s, id, now).Enriched(now)
}

func testEventsOfWrites(t *testing.T, s directory.Store) {
	r := &eventRecorder{t: t, s: s}
	if got := eventLog(t, s); got != (directory.EventLog{}) {
		t.Fatalf("EventLog of an empty store = %+v, want zero", got)
	}
	agent := directory.Index{Kind: "agent", VendorName: "Acme", VendorURL: "https://acme.example"}
	a := indexed("urn:ev:a", agent)
	put(t, s, a, at(0))
	r.expect(wantEvent{typ: directory.EventCreated, thing: a.ID, kind: "agent", vendor: "Acme", at: at(0), document: enriched(t, s, a.ID, at(0))})

	before := enriched(t, s, a.ID, at(time.Second))
	a2 := a
	a2.Document, a2.Modified = []byte(`{"id":"urn:ev:a","title":"second"}`), at(time.Second)
	a2.Index = &directory.Index{Kind: "tool", VendorName: "Other"}
	put(t, s, a2, at(time.Second))
	r.expect(wantEvent{typ: directory.EventUpdated, thing: a.ID, kind: "tool", vendor: "Other", at: at(time.Second),
		before: before, after: enriched(t, s, a.ID, at(time.Second))})

	b := indexed("urn:ev:b", agent)
	if err := s.Create(ctx(t), b, at(2*time.Second)); err != nil {
		t.Fatalf("Create: %v", err)
	}
	r.expect(wantEvent{typ: directory.EventCreated, thing: b.ID, kind: "agent", vendor: "Acme", at: at(2 * time.Second),
		document: enriched(t, s, b.ID, at(2*time.Second))})
	if err := s.Create(ctx(t), b, at(3*time.Second)); !errors.Is(err, directory.ErrExists) {
		t.Fatalf("Create over a live Thing: %v, want ErrExists", err)
	}
	r.expect()

	// An Update that modifies records an event with the stored kind when it brings no
	// index; a renewal, which keeps Modified, and a failed change record none.
	before = enriched(t, s, b.ID, at(4*time.Second))
	update(t, s, b.ID, at(4*time.Second), func(th directory.Thing) directory.Thing {
		th.Document, th.Modified = []byte(`{"id":"urn:ev:b","title":"patched"}`), at(4*time.Second)
		return th
	})
	r.expect(wantEvent{typ: directory.EventUpdated, thing: b.ID, kind: "agent", vendor: "Acme", at: at(4 * time.Second),
		before: before, after: enriched(t, s, b.ID, at(4*time.Second))})
	update(t, s, b.ID, at(5*time.Second), func(th directory.Thing) directory.Thing {
		th.Expires, th.TTL = at(time.Hour), 3600
		return th
	})
	failed := errors.New("refused")
	if err := s.Update(ctx(t), b.ID, at(6*time.Second), func(directory.Thing) (directory.Thing, error) { return directory.Thing{}, failed }); !errors.Is(err, failed) {
		t.Fatalf("Update with a failing change: %v", err)
	}
	r.expect()

	if err := s.Delete(ctx(t), a.ID, at(7*time.Second)); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	r.expect(wantEvent{typ: directory.EventDeleted, thing: a.ID, kind: "tool", vendor: "Other", at: at(7 * time.Second)})
	if err := s.Delete(ctx(t), a.ID, at(8*time.Second)); !errors.Is(err, directory.ErrNotFound) {
		t.Fatalf("second Delete: %v, want ErrNotFound", err)
	}
	r.expect()

	// A Put over an expired registration that was not purged ends it and starts another.
	c := expiring(indexed("urn:ev:c", agent), at(10*time.Second))
	put(t, s, c, at(9*time.Second))
	r.expect(wantEvent{typ: directory.EventCreated, thing: c.ID, kind: "agent", vendor: "Acme", at: at(9 * time.Second),
		document: enriched(t, s, c.ID, at(9*time.Second))})
	c2 := indexed("urn:ev:c", directory.Index{Kind: "tool"})
	c2.Created, c2.Modified = at(11*time.Second), at(11*time.Second)
	if !put(t, s, c2, at(11*time.Second)) {
		t.Fatal("Put over an expired Thing reported a replace")
	}
	r.expect(
		wantEvent{typ: directory.EventDeleted, thing: c.ID, kind: "agent", vendor: "Acme", at: at(11 * time.Second)},
		wantEvent{typ: directory.EventCreated, thing: c.ID, kind: "tool", at: at(11 * time.Second), document: enriched(t, s, c.ID, at(11*time.Second))},
	)
	// And so does a Create.
	d := expiring(indexed("urn:ev:d", agent), at(12*time.Second))
	put(t, s, d, at(11*time.Second))
	r.expect(wantEvent{typ: directory.EventCreated, thing: d.ID, kind: "agent", vendor: "Acme", at: at(11 * time.Second),
		document: enriched(t, s, d.ID, at(11*time.Second))})
	d2 := indexed("urn:ev:d", agent)
	d2.Created, d2.Modified = at(13*time.Second), at(13*time.Second)
	if err := s.Create(ctx(t), d2, at(13*time.Second)); err != nil {
		t.Fatalf("Create over an expired Thing: %v", err)
	}
	r.expect(
		wantEvent{typ: directory.EventDeleted, thing: d.ID, kind: "agent", vendor: "Acme", at: at(13 * time.Second)},
		wantEvent{typ: directory.EventCreated, thing: d.ID, kind: "agent", vendor: "Acme", at: at(13 * time.Second), document: enriched(t, s, d.ID, at(13*time.Second))},
	)

	// Purging records what each Thing was.
	e := expiring(indexed("urn:ev:e", directory.Index{Kind: "tool", VendorName: "Tools Inc"}), at(15*time.Second))
	put(t, s, e, at(14*time.Second))
	r.expect(wantEvent{typ: directory.EventCreated, thing: e.ID, kind: "tool", vendor: "Tools Inc", at: at(14 * time.Second),
		document: enriched(t, s, e.ID, at(14*time.Second))})
	if n, err := s.PurgeExpired(ctx(t), at(16*time.Second)); err != nil || n != 1 {
		t.Fatalf("PurgeExpired = %d, %v; want 1", n, err)
	}
	r.expect(wantEvent{typ: directory.EventDeleted, thing: e.ID, kind: "tool", vendor: "Tools Inc", at: at(16 * time.Second)})

	if got := eventLog(t, s); got.Purged != 0 || got.Newest != r.last {
		t.Fatalf("EventLog = %+v, want Purged 0 and Newest %d", got, r.last)
	}
}

func update(t *testing.T, s directory.Store, id string, now time.Time, change func(directory.Thing) directory.Thing) {
	t.Helper()
	if err := s.Update(ctx(t), id, now, func(th directory.Thing) (directory.Thing, error) { return change(th), nil }); err != nil {
		t.Fatalf("Update(%q): %v", id, err)
	}
}

func testEventsWindow(t *testing.T, s directory.Store) {
	for i := range 5 {
		put(t, s, newThing(fmt.Sprintf("urn:ev:%d", i), at(0)), at(time.Duration(i)*time.Second))
	}
	all := events(t, s, 0, 0)
	if len(all) != 5 {
		t.Fatalf("%d events, want 5", len(all))
	}
	if got := events(t, s, all[1].ID, 2); len(got) != 2 || got[0].ID != all[2].ID || got[1].ID != all[3].ID {
		t.Fatalf("Events(after the 2nd, 2) = %v, want the 3rd and 4th", eventSummary(got))
	}
	if got := events(t, s, all[4].ID, 0); len(got) != 0 {
		t.Fatalf("Events after the newest = %v, want none", eventSummary(got))
	}
	stop := errors.New("stop")
	n := 0
	err := s.Events(ctx(t), 0, 0, func(directory.Event) error {
		n++
		return stop
	})
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("Events with a failing fn: %v after %d calls, want stop after 1", err, n)
	}
}

func testPurgeEvents(t *testing.T, s directory.Store) {
	for i := range 4 {
		put(t, s, newThing(fmt.Sprintf("urn:ev:%d", i), at(0)), at(time.Duration(i)*time.Minute))
	}
	all := events(t, s, 0, 0)
	n, err := s.PurgeEvents(ctx(t), at(2*time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("PurgeEvents = %d, %v; want 2", n, err)
	}
	if got := events(t, s, 0, 0); len(got) != 2 || got[0].ID != all[2].ID {
		t.Fatalf("events after the purge = %v, want the last two of %v", eventSummary(got), eventSummary(all))
	}
	if got, want := eventLog(t, s), (directory.EventLog{Purged: all[1].ID, Newest: all[3].ID}); got != want {
		t.Fatalf("EventLog = %+v, want %+v", got, want)
	}
	if n, err := s.PurgeEvents(ctx(t), at(time.Hour)); err != nil || n != 2 {
		t.Fatalf("PurgeEvents of the rest = %d, %v; want 2", n, err)
	}
	if got, want := eventLog(t, s), (directory.EventLog{Purged: all[3].ID, Newest: all[3].ID}); got != want {
		t.Fatalf("EventLog with no event held = %+v, want %+v", got, want)
	}
	// Ids go on from where they were, never back.
	put(t, s, newThing("urn:ev:later", at(0)), at(2*time.Hour))
	later := events(t, s, 0, 0)
	if len(later) != 1 || later[0].ID <= all[3].ID {
		t.Fatalf("event after purging all = %v, want one with an id above %d", eventSummary(later), all[3].ID)
	}
	if got := eventLog(t, s); got.Newest != later[0].ID || got.Purged != all[3].ID {
		t.Fatalf("EventLog = %+v", got)
	}
}

// testEventsInCommitOrder writes from many goroutines while a reader follows the log with
// Events(after its last): a store whose ids are not in commit order lets the reader step
// over an event that commits after a greater id was read, and the two lists differ.
func testEventsInCommitOrder(t *testing.T, s directory.Store) {
	const writers, writes = 8, 40
	done := make(chan struct{})
	var followed []directory.Event
	var followErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var last int64
		follow := func() {
			followErr = s.Events(ctx(t), last, 0, func(e directory.Event) error {
				followed = append(followed, e)
				last = e.ID
				return nil
			})
		}
		for {
			select {
			case <-done:
				follow()
				return
			default:
				follow()
			}
			if followErr != nil {
				return
			}
		}
	}()
	var writeWG sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		writeWG.Add(1)
		go func() {
			defer writeWG.Done()
			for i := range writes {
				th := newThing(fmt.Sprintf("urn:ev:%d", i%5), at(0))
				th.Document = fmt.Appendf(nil, `{"id":%q,"writer":%d,"write":%d}`, th.ID, w, i)
				if _, err := s.Put(ctx(t), th, at(time.Duration(i)*time.Millisecond)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	writeWG.Wait()
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Put: %v", err)
	}
	if followErr != nil {
		t.Fatalf("following the events: %v", followErr)
	}
	all := events(t, s, 0, 0)
	if len(all) != writers*writes {
		t.Fatalf("%d events for %d writes", len(all), writers*writes)
	}
	if !slices.EqualFunc(followed, all, func(a, b directory.Event) bool { return a.ID == b.ID }) {
		t.Fatalf("a reader following the log saw %d events, the log holds %d: ids are not in commit order", len(followed), len(all))
	}
	// Each Thing's events chain: its creation's TD with every update's patch applied in
	// order is the TD stored in the end. A patch made from a stale old TD (a write that
	// read the Thing before another one changed it) leaves a member of that other write.
	documents := map[string][]byte{}
	retrieved := map[string]time.Time{}
	for _, e := range all {
		switch e.Type {
		case directory.EventCreated:
			documents[e.ThingID], retrieved[e.ThingID] = e.Document, e.Time
		case directory.EventUpdated:
			documents[e.ThingID] = applyPatch(t, documents[e.ThingID], e.Patch)
		}
	}
	for id, doc := range documents {
		if want := get(t, s, id, at(time.Hour)).Enriched(retrieved[id]); !sameJSON(t, doc, want) {
			t.Fatalf("the events of %s make\n%s\nthe store holds\n%s", id, doc, want)
		}
	}
}

// testWatchEvents: the watcher wakes once it watches, and again for a write made after
// that. Without waiting for the first wake, the test could not tell a wake for the write
// from that first one.
func testWatchEvents(t *testing.T, s directory.Store) {
	c := ctx(t)
	woken := make(chan struct{}, 1)
	watchErr := make(chan error, 1)
	go func() {
		watchErr <- s.WatchEvents(c, func() {
			select {
			case woken <- struct{}{}:
			default:
			}
		})
	}()
	wait := func(what string) {
		t.Helper()
		select {
		case <-woken:
		case err := <-watchErr:
			t.Fatalf("WatchEvents returned early: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatalf("no wake within 30 s %s", what)
		}
	}
	wait("of starting to watch")
	put(t, s, newThing("urn:ev:watched", at(0)), at(0))
	wait("of a write")
	if len(events(t, s, 0, 0)) != 1 {
		t.Fatal("woken, but the write's event is not held")
	}
}
