package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// maxBatch bounds a group commit, so that one transaction, and the wait of the callers at
// its end, stays short however many writes queue up.
const maxBatch = 256

// errClosed answers writes submitted after Close.
var errClosed = errors.New("the sqlite store is closed")

// writer owns the only connection that writes, and runs on one goroutine: SQLite allows
// one writer at a time per file anyway, and a single writer never meets another, so no
// write can ever fail with "database is locked".
//
// It commits in groups. Callers hand it operations over an unbuffered channel; the writer
// takes the first one and then every other caller already waiting to hand one over (no
// delay is added to wait for more), runs them in one transaction with a savepoint each,
// commits once, and answers them all. With synchronous=FULL a commit costs an fsync,
// which the whole group shares; under load the group grows by itself, because callers
// queue up while the previous commit syncs.
type writer struct {
	conn  *sql.Conn
	db    *sql.DB // the pool holding conn, so that Close closes the file too
	stmts writerStmts
	// prepared lists stmts for closing: statements prepared on a *sql.Conn are the
	// caller's to close, and SQLite does not really close a connection, nor remove the
	// WAL, while one is left.
	prepared []*sql.Stmt
	ops      chan *op
	done     chan struct{} // closed when the goroutine has answered its last operation

	// submitMu and pending let Close wait for callers that are past the closed check but
	// have not handed their operation over yet, before it closes ops.
	submitMu sync.RWMutex
	closed   bool
	pending  sync.WaitGroup

	commits atomic.Int64 // transactions committed, which tests compare with writes

	// recorded is closed, and replaced by a new channel, after every commit that recorded
	// events: every watcher learns of it at once, and the writer never waits for one that
	// does not read (see Store.WatchEvents).
	recorded atomic.Pointer[chan struct{}]
}

// op is one write: apply runs inside the batch's transaction, under a savepoint of its own.
// Results other than the error travel in variables apply captures; the answer on done
// makes them visible to the caller.
type op struct {
	apply func(*batch) error
	state atomic.Int32
	done  chan error
}

// An op is queued until the writer starts its batch or the caller gives up, whichever
// comes first: a caller that gave up knows its write did not happen, and one whose write
// started waits for the outcome instead of guessing.
const (
	opQueued = iota
	opRunning
	opAbandoned
)

// batch is the state of one group commit that operations share.
type batch struct {
	// ctx is no caller's: the writer's statements are short, and canceling one would
	// fail the whole batch for one caller's sake. Callers give up before their operation
	// starts, or not at all.
	ctx   context.Context
	stmts *writerStmts
	seq   int64 // write_seq.last as the batch has advanced it
	// recorded is set by an operation that recorded events, even if it is rolled back
	// afterwards: a watcher woken for nothing reads nothing new.
	recorded bool
}

// next hands out a number never used before, not even by a write that was rolled back
// after getting it (numbers may be skipped, never reused).
func (b *batch) next() int64 {
	b.seq++
	return b.seq
}

// writerStmts are prepared once on the writer's connection: preparing is a large part of
// the cost of a statement as short as these.
type writerStmts struct {
	begin, commit, rollback                 *sql.Stmt
	savepoint, release, rollbackToSavepoint *sql.Stmt
	readSeq, writeSeq                       *sql.Stmt
	put, create, update, delete, purge      *sql.Stmt
	// The search index and the expansion of a Thing (see search.go).
	deleteIndex, deleteTerms, deleteText *sql.Stmt
	insertIndex, insertTerms, insertText *sql.Stmt
	setIndexExpires                      *sql.Stmt
	setExpansion, deleteExpansion        *sql.Stmt
	findDocument                         *sql.Stmt
	// The event log, and what the events of a write say of the Thing it replaces or
	// deletes (see events.go).
	insertEvent, purgeEvents, raisePurged *sql.Stmt
	findThing, dropIndex                  *sql.Stmt
}

func startWriter(ctx context.Context, path string) (_ *writer, err error) {
	db, err := sql.Open(driverName, dataSourceName(path, writerPragmas))
	if err != nil {
		return nil, fmt.Errorf("opening database %s: %w", path, err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening database %s: %w", path, err)
	}
	w := &writer{conn: conn, db: db, ops: make(chan *op), done: make(chan struct{})}
	recorded := make(chan struct{})
	w.recorded.Store(&recorded)
	if err := w.prepare(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("preparing the write statements on %s: %w", path, err), w.closeConn())
	}
	go w.run()
	return w, nil
}

func (w *writer) prepare(ctx context.Context) error {
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		// IMMEDIATE takes the write lock at once. Within this process nobody competes
		// for it, but a deferred transaction that reads first could fail to upgrade
		// without waiting if another connection (the sqlite3 shell, say) wrote meanwhile.
		{&w.stmts.begin, `BEGIN IMMEDIATE`},
		{&w.stmts.commit, `COMMIT`},
		{&w.stmts.rollback, `ROLLBACK`},
		{&w.stmts.savepoint, `SAVEPOINT op`},
		{&w.stmts.release, `RELEASE op`},
		{&w.stmts.rollbackToSavepoint, `ROLLBACK TO op`},
		{&w.stmts.readSeq, readSeqSQL},
		{&w.stmts.writeSeq, writeSeqSQL},
		{&w.stmts.put, putSQL},
		{&w.stmts.create, createSQL},
		{&w.stmts.update, updateSQL},
		{&w.stmts.delete, deleteSQL},
		{&w.stmts.purge, purgeSQL},
		{&w.stmts.findThing, findThingSQL},
		{&w.stmts.deleteIndex, deleteIndexSQL},
		{&w.stmts.dropIndex, dropIndexSQL},
		{&w.stmts.deleteTerms, deleteTermsSQL},
		{&w.stmts.deleteText, deleteTextSQL},
		{&w.stmts.insertIndex, insertIndexSQL},
		{&w.stmts.insertTerms, insertTermsSQL},
		{&w.stmts.insertText, insertTextSQL},
		{&w.stmts.setIndexExpires, setIndexExpiresSQL},
		{&w.stmts.setExpansion, setExpansionSQL},
		{&w.stmts.deleteExpansion, deleteExpansionSQL},
		{&w.stmts.findDocument, findDocumentSQL},
		{&w.stmts.insertEvent, insertEventSQL},
		{&w.stmts.purgeEvents, purgeEventsSQL},
		{&w.stmts.raisePurged, raisePurgedSQL},
	} {
		stmt, err := w.conn.PrepareContext(ctx, p.sql)
		if err != nil {
			return fmt.Errorf("%s: %w", p.sql, err)
		}
		*p.stmt = stmt
		w.prepared = append(w.prepared, stmt)
	}
	return nil
}

// submit hands apply to the writer and waits for its outcome. It gives up when ctx ends
// before the write starts; once it has started, it waits for the commit, which a batch
// bounds.
func (w *writer) submit(ctx context.Context, apply func(*batch) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w.submitMu.RLock()
	if w.closed {
		w.submitMu.RUnlock()
		return errClosed
	}
	w.pending.Add(1)
	w.submitMu.RUnlock()

	o := &op{apply: apply, done: make(chan error, 1)}
	select {
	case w.ops <- o:
		w.pending.Done()
	case <-ctx.Done():
		w.pending.Done()
		return ctx.Err()
	}
	select {
	case err := <-o.done:
		return err
	case <-ctx.Done():
		if o.state.CompareAndSwap(opQueued, opAbandoned) {
			return ctx.Err()
		}
		return <-o.done
	}
}

// stop refuses new writes and returns once the writer has finished every operation
// already handed over or being handed over.
func (w *writer) stop() {
	w.submitMu.Lock()
	w.closed = true
	w.submitMu.Unlock()
	w.pending.Wait()
	close(w.ops)
	<-w.done
}

// closeConn closes the writer's connection, after stop.
func (w *writer) closeConn() error {
	var errs []error
	for _, stmt := range w.prepared {
		errs = append(errs, stmt.Close())
	}
	return errors.Join(append(errs, w.conn.Close(), w.db.Close())...)
}

// run is the writer goroutine. It ends when ops is closed and drained.
func (w *writer) run() {
	defer close(w.done)
	group := make([]*op, 0, maxBatch)
	outcomes := make([]error, maxBatch)
	for first := range w.ops {
		group = append(group[:0], first)
	fill:
		for len(group) < maxBatch {
			select {
			case o, ok := <-w.ops:
				if !ok {
					break fill
				}
				group = append(group, o)
			default:
				break fill
			}
		}
		running := group[:0] // filtered in place
		for _, o := range group {
			if o.state.CompareAndSwap(opQueued, opRunning) {
				running = append(running, o)
			}
		}
		if len(running) > 0 {
			errs := outcomes[:len(running)]
			clear(errs)
			w.commitGroup(running, errs)
			for i, o := range running {
				o.done <- errs[i]
			}
		}
		clear(group) // let answered operations be collected while the writer waits
	}
}

// commitGroup runs ops in one transaction and sets errs[i] to the outcome of ops[i].
func (w *writer) commitGroup(ops []*op, errs []error) {
	if err := w.exec(w.stmts.begin); err != nil {
		failRest(errs, fmt.Errorf("starting a write transaction: %w", err))
		return
	}
	b := batch{ctx: context.Background(), stmts: &w.stmts}
	if err := w.stmts.readSeq.QueryRowContext(b.ctx).Scan(&b.seq); err != nil {
		w.abort(errs, fmt.Errorf("reading the write sequence: %w", err))
		return
	}
	first := b.seq
	for i, o := range ops {
		if err := w.exec(w.stmts.savepoint); err != nil {
			w.abort(errs, fmt.Errorf("starting a savepoint: %w", err))
			return
		}
		if errs[i] = o.apply(&b); errs[i] != nil {
			// A failed statement may have done part of its work; the savepoint undoes
			// exactly this operation's, and the others in the batch stay.
			if err := w.exec(w.stmts.rollbackToSavepoint); err != nil {
				// SQLite rolls the whole transaction back on some errors (a full
				// disk, an I/O error), and the savepoint goes with it.
				w.abort(errs, fmt.Errorf("the batch of writes was rolled back: %w", errors.Join(errs[i], err)))
				return
			}
		}
		if err := w.exec(w.stmts.release); err != nil {
			w.abort(errs, fmt.Errorf("releasing a savepoint: %w", err))
			return
		}
	}
	if b.seq != first {
		if _, err := w.stmts.writeSeq.ExecContext(b.ctx, b.seq); err != nil {
			w.abort(errs, fmt.Errorf("advancing the write sequence: %w", err))
			return
		}
	}
	if err := w.exec(w.stmts.commit); err != nil {
		w.abort(errs, fmt.Errorf("committing writes: %w", err))
		return
	}
	w.commits.Add(1)
	if b.recorded {
		next := make(chan struct{})
		close(*w.recorded.Swap(&next))
	}
}

// eventsRecorded returns a channel that is closed once a commit after this call records
// events.
func (w *writer) eventsRecorded() <-chan struct{} {
	return *w.recorded.Load()
}

// abort rolls the transaction back, if SQLite has not already, and fails every operation
// that has no error of its own: none of their writes is stored.
func (w *writer) abort(errs []error, err error) {
	_ = w.exec(w.stmts.rollback) // fails only when SQLite already rolled back
	failRest(errs, err)
}

func failRest(errs []error, err error) {
	for i := range errs {
		if errs[i] == nil {
			errs[i] = err
		}
	}
}

// exec runs one of the writer's statements that take no arguments, without a caller's
// context, like every statement of a batch.
func (w *writer) exec(stmt *sql.Stmt) error {
	_, err := stmt.ExecContext(context.Background())
	return err
}
