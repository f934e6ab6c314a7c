package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
)

var t0 = time.Date(2031, time.March, 4, 5, 6, 7, 123456000, time.UTC)

func thing(id string) directory.Thing {
	return directory.Thing{ID: id, Document: fmt.Appendf(nil, `{"id":%q}`, id), Created: t0, Modified: t0}
}

// holdWriter keeps the writer busy with an operation of its own until release is called,
// so that the writes submitted meanwhile queue up and make the next batch.
func holdWriter(t *testing.T, s *Store) (release func()) {
	t.Helper()
	started, hold := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- s.w.submit(context.Background(), func(*batch) error {
			close(started)
			<-hold
			return nil
		})
	}()
	<-started
	return func() {
		close(hold)
		if err := <-errc; err != nil {
			t.Errorf("the holding operation: %v", err)
		}
	}
}

// waitSubmitters waits until n goroutines are inside writer.submit, that is queued for the
// writer or waiting for its answer; holdWriter's own goroutine counts as one.
func waitSubmitters(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	buf := make([]byte, 1<<20)
	for {
		m := runtime.Stack(buf, true)
		if m == len(buf) {
			buf = make([]byte, 2*len(buf))
			continue
		}
		got := 0
		for g := range strings.SplitSeq(string(buf[:m]), "\n\n") {
			if strings.Contains(g, "sqlite.(*writer).submit(") {
				got++
			}
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines in writer.submit, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestGroupCommit(t *testing.T) {
	s, _ := open(t)
	ctx := testContext(t)
	const writers = 64
	release := holdWriter(t, s)
	var wg sync.WaitGroup
	errs := make([]error, writers)
	created := make([]bool, writers)
	for i := range writers {
		wg.Go(func() { created[i], errs[i] = s.Put(ctx, thing(fmt.Sprintf("urn:g:%02d", i)), t0) })
	}
	waitSubmitters(t, writers+1)
	before := s.w.commits.Load()
	release()
	wg.Wait()
	for i, err := range errs {
		if err != nil || !created[i] {
			t.Fatalf("Put %d = %v, %v; want a create", i, created[i], err)
		}
	}
	// One commit for the holding operation, one for all 64 writes queued behind it.
	if commits := s.w.commits.Load() - before; commits != 2 {
		t.Fatalf("%d queued writes took %d commits, want them in one batch after the holder's", writers, commits-1)
	}
	if m, err := s.Membership(ctx, t0); err != nil || m.Total != writers {
		t.Fatalf("Membership = %+v, %v; want %d Things", m, err, writers)
	}
}

func TestGroupCommitUnderLoad(t *testing.T) {
	s, _ := open(t)
	ctx := testContext(t)
	const writers, each = 32, 20
	before := s.w.commits.Load()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := s.Put(ctx, thing(fmt.Sprintf("urn:l:%02d:%02d", w, i)), t0); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// Without batching every write would be a commit of its own; writers that queue
	// while a commit syncs share the next one.
	commits := s.w.commits.Load() - before
	if commits*2 > writers*each {
		t.Fatalf("%d concurrent writes took %d commits; want fewer than half as many", writers*each, commits)
	}
	t.Logf("%d writes in %d commits", writers*each, commits)
}

func TestBatchFailureIsolated(t *testing.T) {
	s, _ := open(t)
	ctx := testContext(t)
	if _, err := s.Put(ctx, thing("urn:b:existing"), t0); err != nil {
		t.Fatal(err)
	}
	release := holdWriter(t, s)
	var wg sync.WaitGroup
	const puts = 20
	putErrs := make([]error, puts)
	for i := range puts {
		wg.Go(func() { _, putErrs[i] = s.Put(ctx, thing(fmt.Sprintf("urn:b:%02d", i)), t0) })
	}
	var createErr, failedErr error
	wg.Go(func() { createErr = s.Create(ctx, thing("urn:b:existing"), t0) })
	// An operation that writes, then fails: its write must be undone, and only its.
	refused := errors.New("refused halfway")
	undone := indexedThing("urn:b:undone", fullIndex)
	wg.Go(func() {
		failedErr = s.w.submit(ctx, func(b *batch) error {
			if _, err := b.put(newThingWrite(undone), t0); err != nil {
				return err
			}
			return refused
		})
	})
	waitSubmitters(t, puts+2+1)
	before := s.w.commits.Load()
	release()
	wg.Wait()

	if commits := s.w.commits.Load() - before; commits != 2 {
		t.Fatalf("the batch took %d commits besides the holder's, want 1", commits-1)
	}
	for i, err := range putErrs {
		if err != nil {
			t.Errorf("Put %d in the batch: %v", i, err)
		}
	}
	if !errors.Is(createErr, directory.ErrExists) {
		t.Errorf("Create of an existing id = %v, want ErrExists", createErr)
	}
	if failedErr != refused { //nolint:errorlint // the very error the operation returned
		t.Errorf("failing operation = %v, want its own error", failedErr)
	}
	if _, err := s.Get(ctx, "urn:b:undone", t0); !errors.Is(err, directory.ErrNotFound) {
		t.Errorf("Get of the failed operation's write = %v, want ErrNotFound: the savepoint should have undone it", err)
	}
	for table, column := range map[string]string{"thing_index": "thing", "thing_terms": "thing", "thing_text": "rowid"} {
		var n int
		if err := s.readers.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE `+column+` NOT IN (SELECT num FROM things)`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s has %d rows of no Thing (%v): the savepoint should have undone them", table, n, err)
		}
	}
	if m, err := s.Membership(ctx, t0); err != nil || m.Total != puts+1 {
		t.Errorf("Membership = %+v, %v; want %d", m, err, puts+1)
	}
}

func TestCancelWhileQueued(t *testing.T) {
	s, _ := open(t)
	release := holdWriter(t, s)
	ctx, cancel := context.WithCancel(testContext(t))
	errc := make(chan error, 1)
	go func() {
		_, err := s.Put(ctx, thing("urn:c:queued"), t0)
		errc <- err
	}()
	waitSubmitters(t, 2)
	cancel()
	// The writer is still held: the caller must not wait for it.
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Put canceled while queued = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Put canceled while queued did not return while the writer was busy")
	}
	release()
	if _, err := s.Get(testContext(t), "urn:c:queued", t0); !errors.Is(err, directory.ErrNotFound) {
		t.Fatalf("Get of the canceled Put = %v, want ErrNotFound", err)
	}
}

func TestAbandonedOperationSkipped(t *testing.T) {
	s, _ := open(t)
	// What the writer finds when a caller gave up between handing an operation over and
	// the start of its batch.
	o := &op{apply: func(*batch) error {
		t.Error("an abandoned operation ran")
		return nil
	}, done: make(chan error, 1)}
	o.state.Store(opAbandoned)
	s.w.ops <- o
	if _, err := s.Put(testContext(t), thing("urn:a:after"), t0); err != nil {
		t.Fatalf("Put after an abandoned operation: %v", err)
	}
	if len(o.done) != 0 {
		t.Fatal("the writer answered an abandoned operation")
	}
}

func TestCancelWhileRunningWaitsForOutcome(t *testing.T) {
	s, _ := open(t)
	ctx, cancel := context.WithCancel(testContext(t))
	running, finish := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- s.w.submit(ctx, func(b *batch) error {
			close(running)
			<-finish
			_, err := b.put(newThingWrite(thing("urn:c:running")), t0)
			return err
		})
	}()
	<-running
	cancel()
	select {
	case err := <-errc:
		t.Fatalf("submit returned %v while its operation was running; it must wait for the outcome", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(finish)
	if err := <-errc; err != nil {
		t.Fatalf("submit of an operation that ran = %v, want its outcome, nil", err)
	}
	if _, err := s.Get(testContext(t), "urn:c:running", t0); err != nil {
		t.Fatalf("Get of the write that ran: %v", err)
	}
}

func TestCloseDrainsQueuedWrites(t *testing.T) {
	s, path := open(t)
	ctx := testContext(t)
	release := holdWriter(t, s)
	const writers = 20
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() { _, errs[i] = s.Put(ctx, thing(fmt.Sprintf("urn:d:%02d", i)), t0) })
	}
	waitSubmitters(t, writers+1)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	for closing := false; !closing; {
		time.Sleep(time.Millisecond)
		s.w.submitMu.RLock()
		closing = s.w.closed
		s.w.submitMu.RUnlock()
	}
	// Once Close has begun, new writes are refused at once, even while the writer is busy.
	if _, err := s.Put(ctx, thing("urn:d:late"), t0); !errors.Is(err, errClosed) {
		t.Fatalf("Put while closing = %v, want errClosed", err)
	}
	release()
	wg.Wait()
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("queued Put %d: %v", i, err)
		}
	}
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range writers {
		if _, err := s.Get(ctx, fmt.Sprintf("urn:d:%02d", i), t0); err != nil {
			t.Errorf("after reopening, Get of queued write %d: %v", i, err)
		}
	}
}

type logDoc struct {
	ID  string   `json:"id"`
	Log []string `json:"log"`
}

func logThing(id string, entries ...string) directory.Thing {
	th := thing(id)
	th.Document, _ = json.Marshal(logDoc{ID: id, Log: append([]string{}, entries...)})
	return th
}

func appendLog(th directory.Thing, entry string) (directory.Thing, error) {
	var d logDoc
	if err := json.Unmarshal(th.Document, &d); err != nil {
		return directory.Thing{}, err
	}
	d.Log = append(d.Log, entry)
	doc, err := json.Marshal(d)
	th.Document = doc
	return th, err
}

func readLog(t *testing.T, s *Store, id string) []string {
	t.Helper()
	th, err := s.Get(testContext(t), id, t0)
	if err != nil {
		t.Fatal(err)
	}
	var d logDoc
	if err := json.Unmarshal(th.Document, &d); err != nil {
		t.Fatal(err)
	}
	return d.Log
}

// sneakPut writes th without taking its id's lock, as a write that bypassed it would: from
// inside an Update's change, the store's own Put would wait for the Update forever.
func sneakPut(ctx context.Context, s *Store, th directory.Thing) error {
	return s.w.submit(ctx, func(b *batch) error {
		_, err := b.put(newThingWrite(th), t0)
		return err
	})
}

func TestUpdateRetriesAfterConflict(t *testing.T) {
	s, _ := open(t)
	ctx := testContext(t)
	const id = "urn:u:conflict"
	if _, err := s.Put(ctx, logThing(id), t0); err != nil {
		t.Fatal(err)
	}
	calls := 0
	err := s.Update(ctx, id, t0, func(current directory.Thing) (directory.Thing, error) {
		calls++
		if calls == 1 {
			// Another write lands between the Update's read and its write.
			other, err := appendLog(current, "other")
			if err != nil {
				return directory.Thing{}, err
			}
			if err := sneakPut(ctx, s, other); err != nil {
				return directory.Thing{}, err
			}
		}
		return appendLog(current, "update")
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if calls != 2 {
		t.Fatalf("change was called %d times, want 2: once before the conflict, once after", calls)
	}
	if got := readLog(t, s, id); !slices.Equal(got, []string{"other", "update"}) {
		t.Fatalf("log = %q, want both writes", got)
	}

	// A write that always gets in between exhausts the attempts.
	calls = 0
	err = s.Update(ctx, id, t0, func(current directory.Thing) (directory.Thing, error) {
		calls++
		if err := sneakPut(ctx, s, current); err != nil {
			return directory.Thing{}, err
		}
		return appendLog(current, "never")
	})
	if err == nil || !strings.Contains(err.Error(), "won the race") || calls != maxUpdateAttempts {
		t.Fatalf("Update losing every race = %v after %d calls; want an error after %d", err, calls, maxUpdateAttempts)
	}
	if got := readLog(t, s, id); slices.Contains(got, "never") {
		t.Fatalf("log = %q: a losing Update was stored", got)
	}
}

func TestUpdateAfterDeleteAndRecreate(t *testing.T) {
	s, _ := open(t)
	ctx := testContext(t)
	const id = "urn:u:aba"
	if _, err := s.Put(ctx, logThing(id, "first"), t0); err != nil {
		t.Fatal(err)
	}
	calls := 0
	err := s.Update(ctx, id, t0, func(current directory.Thing) (directory.Thing, error) {
		calls++
		if calls == 1 {
			// The Thing is deleted and registered anew: a revision counted per row
			// would be back at the value the Update read.
			err := s.w.submit(ctx, func(b *batch) error { return b.delete(id, t0) })
			if err == nil {
				err = sneakPut(ctx, s, logThing(id, "second"))
			}
			if err != nil {
				return directory.Thing{}, err
			}
		}
		return appendLog(current, "update")
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if got := readLog(t, s, id); !slices.Equal(got, []string{"second", "update"}) {
		t.Fatalf("log = %q, want the update applied to the second registration", got)
	}
}

// TestUpdatesAmidPuts runs Updates of an id while it is registered again and again, as
// fast as the writer commits: no Update may run out of attempts.
func TestUpdatesAmidPuts(t *testing.T) {
	s, _ := open(t)
	ctx := testContext(t)
	const id = "urn:u:busy"
	if _, err := s.Put(ctx, logThing(id), t0); err != nil {
		t.Fatal(err)
	}
	const updaters = 16
	stop := make(chan struct{})
	var puts sync.WaitGroup
	puts.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.Put(ctx, logThing(id, "put"), t0); err != nil {
				t.Error(err)
				return
			}
		}
	})
	var updates sync.WaitGroup
	for u := range updaters {
		updates.Go(func() {
			err := s.Update(ctx, id, t0, func(current directory.Thing) (directory.Thing, error) {
				return appendLog(current, fmt.Sprint(u))
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	updates.Wait()
	close(stop)
	puts.Wait()
}

// TestConcurrentReadersAndWriters runs every operation at once; with one writer and WAL,
// nothing may fail, least of all with "database is locked".
func TestConcurrentReadersAndWriters(t *testing.T) {
	s, _ := open(t)
	ctx := testContext(t)
	const ids, workers = 40, 8
	id := func(r *rand.Rand) string { return fmt.Sprintf("urn:r:%02d", r.IntN(ids)) }
	check := func(what string, err error) bool {
		if err != nil && !errors.Is(err, directory.ErrNotFound) && !errors.Is(err, directory.ErrExists) {
			t.Errorf("%s: %v", what, err)
			return false
		}
		return true
	}
	deadline := time.Now().Add(time.Second)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for time.Now().Before(deadline) {
				th := thing(id(r))
				if r.IntN(3) == 0 {
					th.Expires = t0.Add(time.Duration(r.IntN(3)-1) * time.Second)
				}
				var err error
				switch r.IntN(6) {
				case 0, 1:
					_, err = s.Put(ctx, th, t0)
				case 2:
					err = s.Create(ctx, th, t0)
				case 3:
					err = s.Update(ctx, th.ID, t0, func(current directory.Thing) (directory.Thing, error) {
						current.Modified = current.Modified.Add(time.Second)
						return current, nil
					})
				case 4:
					err = s.Delete(ctx, th.ID, t0)
				case 5:
					_, err = s.PurgeExpired(ctx, t0)
				}
				if !check("write", err) {
					return
				}
			}
		})
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 2))
			for time.Now().Before(deadline) {
				var err error
				switch r.IntN(3) {
				case 0:
					_, err = s.Get(ctx, id(r), t0)
				case 1:
					err = s.List(ctx, directory.Page{Limit: 10}, t0, func(directory.Thing) error { return nil })
				case 2:
					_, err = s.Membership(ctx, t0)
				}
				if !check("read", err) {
					return
				}
			}
		})
	}
	wg.Wait()
}
