// Package sqlite is the directory.Store in a single SQLite file, on modernc.org/sqlite
// (pure Go, no cgo): the zero-setup default for a directory run as one process.
//
// One process owns the file (see lockDatabase). Within it, reads go through a pool of
// read-only connections and every write through one writer goroutine that commits in
// groups (see writer). The file is in WAL mode, so readers never wait for the writer, and
// synchronous=FULL, so an acknowledged write survives a crash of the process or of the
// machine.
//
// Search has tables of its own, keyed by things.num: the writes keep them in step with
// things in the same transaction (see search.go and migration 000002). So does the event
// log (see events.go and migration 000004).
//
// The document column holds the registered bytes as a BLOB. SQLite's JSON functions take
// it as it is: a BLOB that is not well-formed JSONB is parsed as JSON text (checked with
// SQLite 3.53, see TestJSONQueries). A query should still write CAST(document AS TEXT),
// which costs little and rules out the one ambiguity left, a text that happens to be
// well-formed JSONB too.
package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/migrations"
)

const driverName = "sqlite"

// Options tune a Store.
type Options struct {
	// MigrateOnOpen applies the embedded migrations before the store opens.
	MigrateOnOpen bool
	// Readers is the number of read connections; 0 means twice GOMAXPROCS. A read holds
	// its connection while it runs, a listing until it ends.
	Readers int
}

// Store is a directory.Store on one SQLite file.
type Store struct {
	lock    *fileLock
	readers *sql.DB
	w       *writer // nil when notReady
	// notReady is why the store cannot serve (a schema that is behind or ahead), or nil.
	// It cannot change while the store is open: migrations take the process lock, which
	// the store holds until Close.
	notReady error
	// idLocks serializes the writes to each id within the process (see keyedMutex).
	idLocks keyedMutex

	get, getForUpdate, list, membership, unexpanded, expansion *sql.Stmt
	events, eventLog                                           *sql.Stmt

	closeOnce sync.Once
	closeErr  error
}

var _ directory.Store = (*Store)(nil)

// The pragmas every connection gets through its data source name, so that a connection
// database/sql opens later has them too.
var (
	writerPragmas = []string{
		// The writer never competes with another writer in this process; the timeout
		// covers the sqlite3 shell or a backup tool touching the file.
		"busy_timeout(10000)",
		"journal_mode(WAL)",
		// In WAL mode, FULL syncs the log at every commit: NORMAL would lose the last
		// acknowledged writes on power loss.
		"synchronous(FULL)",
	}
	readerPragmas = []string{
		"busy_timeout(10000)",
		"query_only(1)",
		// Reading pages through a memory map spares a copy per page; 256 MiB of
		// address space per connection, not memory.
		"mmap_size(268435456)",
	}
)

// dataSourceName is a file: URI, so that no character of path (?, #, %) is taken for
// part of the URI, followed by the pragmas modernc.org/sqlite runs on every connection.
func dataSourceName(path string, pragmas []string) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + url.Values{"_pragma": pragmas}.Encode()
}

// Open opens the database file at path, creating it and its directory if needed, and
// takes the file's process lock: a second Open, in this process or another, fails at once
// until Close. It fails when the schema is dirty; a schema that is merely behind opens,
// and Ready, like every other method, reports it.
func Open(ctx context.Context, path string, opts Options) (_ *Store, err error) {
	path, err = absPath(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating the directory of database %s: %w", path, err)
	}
	lock, err := lockDatabase(path)
	if err != nil {
		return nil, err
	}
	s := &Store{lock: lock}
	defer func() {
		if err == nil {
			return
		}
		if closeErr := s.Close(); closeErr != nil {
			err = errors.Join(err, closeErr)
		}
	}()
	if opts.MigrateOnOpen {
		if err := withMigrate(ctx, path, migrations.Up); err != nil {
			return nil, err
		}
	}
	if s.readers, err = sql.Open(driverName, dataSourceName(path, readerPragmas)); err != nil {
		return nil, fmt.Errorf("opening database %s: %w", path, err)
	}
	readers := opts.Readers
	if readers <= 0 {
		readers = 2 * runtime.GOMAXPROCS(0)
	}
	s.readers.SetMaxOpenConns(readers)
	// Idle connections stay open: a new one reads the schema again before its first
	// statement and prepares every statement again.
	s.readers.SetMaxIdleConns(readers)

	version, err := schemaVersion(ctx, s.readers)
	if err != nil {
		return nil, err
	}
	if s.notReady = versionError(version); s.notReady != nil {
		return s, nil
	}
	if s.w, err = startWriter(ctx, path); err != nil {
		return nil, err
	}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&s.get, getSQL},
		{&s.getForUpdate, getForUpdateSQL},
		{&s.list, listSQL},
		{&s.membership, membershipSQL},
		{&s.unexpanded, unexpandedSQL},
		{&s.expansion, expansionSQL},
		{&s.events, eventsSQL},
		{&s.eventLog, eventLogSQL},
	} {
		if *p.stmt, err = s.readers.PrepareContext(ctx, p.sql); err != nil {
			return nil, fmt.Errorf("preparing %s: %w", p.sql, err)
		}
	}
	return s, nil
}

// Close finishes the writes already submitted, closes the database and releases the
// process lock. Later calls return what the first returned.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		if s.w != nil {
			s.w.stop()
		}
		if s.readers != nil {
			// Closing the pool also closes the statements prepared on it.
			errs = append(errs, s.readers.Close())
		}
		// The writer's connection goes last: the last connection to close copies the
		// WAL into the database and removes it, and read-only ones cannot.
		if s.w != nil {
			errs = append(errs, s.w.closeConn())
		}
		// The next process must not get the file while this one still has it open.
		errs = append(errs, s.lock.release())
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// A row is live when it has no expiry or expires after now; every read repeats this.
const (
	// The expansion's problem comes with every Thing read, and never its expanded bytes.
	thingColumns = `t.id, t.document, t.created, t.modified, t.expires, t.ttl, t.retrieved, t.origin, e.problem`
	thingTables  = `things AS t LEFT JOIN thing_expansions AS e ON e.thing = t.num`
	// What the events say of a Thing besides its document (see subject), all NULL when
	// it has no index.
	subjectColumns = `i.kind, i.vendor_name, i.vendor_url`
	subjectJoin    = `LEFT JOIN thing_index AS i ON i.thing = t.num`

	// ?9 is a number from write_seq: the revision of the written row and, when the Thing
	// arrives, its member_seq. An expired row counts as absent, so the new Thing takes
	// its place as a newcomer, with its own created time and member_seq; comparing the
	// member_seq with ?9 tells which happened. The writes return num, which the search
	// tables are keyed by: a replaced row keeps its num.
	insertThing = `INSERT INTO things AS t (id, document, created, modified, expires, ttl, retrieved, origin, member_seq, revision)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)`

	// A replace takes retrieved and origin from the new Thing too: a client's PUT over a
	// fetched TD makes it the client's.
	putSQL = insertThing + `
ON CONFLICT (id) DO UPDATE SET
	document = excluded.document,
	created = iif(t.expires IS NULL OR t.expires > ?10, t.created, excluded.created),
	modified = excluded.modified,
	expires = excluded.expires,
	ttl = excluded.ttl,
	retrieved = excluded.retrieved,
	origin = excluded.origin,
	member_seq = iif(t.expires IS NULL OR t.expires > ?10, t.member_seq, excluded.member_seq),
	revision = excluded.revision
RETURNING num, member_seq = ?9`

	// A live row makes the WHERE false, so nothing is written and no row is returned.
	createSQL = insertThing + `
ON CONFLICT (id) DO UPDATE SET
	document = excluded.document,
	created = excluded.created,
	modified = excluded.modified,
	expires = excluded.expires,
	ttl = excluded.ttl,
	retrieved = excluded.retrieved,
	origin = excluded.origin,
	member_seq = excluded.member_seq,
	revision = excluded.revision
WHERE t.expires IS NOT NULL AND t.expires <= ?10
RETURNING num`

	// Applies only if nobody wrote the row since it was read at revision ?10: revisions
	// are never reused, so an equal revision is the same version of the same row, even
	// if the Thing was deleted and registered again in between.
	updateSQL = `UPDATE things SET document = ?2, created = ?3, modified = ?4, expires = ?5, ttl = ?6,
	retrieved = ?7, origin = ?8, revision = ?9
WHERE id = ?1 AND revision = ?10
RETURNING num`

	deleteSQL = `DELETE FROM things WHERE id = ?1 AND (expires IS NULL OR expires > ?2) RETURNING num`

	// Through the index on expires.
	purgeSQL = `DELETE FROM things WHERE num IN (SELECT num FROM things WHERE expires <= ?1 LIMIT ?2) RETURNING num, id`

	// The row a Put or Create is about to replace, live or expired, for its events.
	findThingSQL = `SELECT ` + thingColumns + `, ` + subjectColumns + ` FROM ` + thingTables + ` ` + subjectJoin + `
WHERE t.id = ?1`

	readSeqSQL  = `SELECT last FROM write_seq`
	writeSeqSQL = `UPDATE write_seq SET last = ?1`

	getSQL = `SELECT ` + thingColumns + ` FROM ` + thingTables + `
WHERE t.id = ?1 AND (t.expires IS NULL OR t.expires > ?2)`

	getForUpdateSQL = `SELECT ` + thingColumns + `, t.revision, ` + subjectColumns + ` FROM ` + thingTables + ` ` + subjectJoin + `
WHERE t.id = ?1 AND (t.expires IS NULL OR t.expires > ?2)`

	// The index on id gives the order, so rows stream without a sort. LIMIT -1 is no
	// limit.
	listSQL = `SELECT ` + thingColumns + ` FROM ` + thingTables + `
WHERE t.expires IS NULL OR t.expires > ?1
ORDER BY t.id LIMIT ?3 OFFSET ?2`

	// The JSONPath pre-filter's listing; whereSQL adds the condition.
	listWhereSQL = `SELECT ` + thingColumns + ` FROM ` + thingTables + `
WHERE (t.expires IS NULL OR t.expires > ?1) AND `

	// With one writer, numbers are handed out in commit order: a member that arrived
	// after a reader's snapshot has a member_seq above every member in that snapshot. So
	// when the live set changes but its size does not, some member arrived, and the
	// highest member_seq grew: count and max together tell sets apart. (On PostgreSQL,
	// where writes commit out of sequence order, this is not so; see its store.)
	membershipSQL = `SELECT count(*), coalesce(max(member_seq), 0) FROM things
WHERE expires IS NULL OR expires > ?1`
)

// purgeBatch bounds each purge operation, so that a huge purge is many short operations
// that other writes can be committed between. A Thing takes its search index with it, a few
// dozen index entries: on a small machine, 250 indexed Things took 40 ms (1000, 120 ms).
const purgeBatch = 250

// maxUpdateAttempts bounds the optimistic retries of an Update. The writes to one id wait
// for each other (see keyedMutex), so within the process only a purge can change the row
// between the Update's read and its write; the revision check is what keeps that, and any
// write that does not take the id's lock, from being overwritten.
const maxUpdateAttempts = 10

// Put creates or replaces t, with its index, and leaves its expansion pending.
func (s *Store) Put(ctx context.Context, t directory.Thing, now time.Time) (created bool, err error) {
	if s.notReady != nil {
		return false, s.notReady
	}
	if !directory.StorableID(t.ID) {
		return false, directory.UnstorableIDError(t.ID)
	}
	unlock, err := s.idLocks.lock(ctx, t.ID)
	if err != nil {
		return false, err
	}
	defer unlock()
	w := newThingWrite(t)
	err = s.w.submit(ctx, func(b *batch) (err error) {
		created, err = b.put(w, now)
		return err
	})
	if err != nil {
		return false, writeError("putting", t.ID, err)
	}
	return created, nil
}

// Create inserts t, with its index, unless a live Thing has its ID.
func (s *Store) Create(ctx context.Context, t directory.Thing, now time.Time) error {
	if s.notReady != nil {
		return s.notReady
	}
	if !directory.StorableID(t.ID) {
		return directory.UnstorableIDError(t.ID)
	}
	unlock, err := s.idLocks.lock(ctx, t.ID)
	if err != nil {
		return err
	}
	defer unlock()
	w := newThingWrite(t)
	err = s.w.submit(ctx, func(b *batch) error { return b.create(w, now) })
	if err != nil {
		return writeError("creating", t.ID, err)
	}
	return nil
}

// thingWrite is a Thing that a Put or Create stores, with the parameters that write it,
// made on the caller's goroutine.
type thingWrite struct {
	thing directory.Thing // as stored (but for the Created a replace keeps), for the events
	args  []any           // thingArgs
	index *indexArgs
}

func newThingWrite(t directory.Thing) *thingWrite {
	t.ExpansionProblem = "" // the expansion is left pending, with no problem yet
	return &thingWrite{thing: t, args: thingArgs(t), index: newIndexArgs(t.Index)}
}

// put is the write of Put.
func (b *batch) put(w *thingWrite, now time.Time) (created bool, err error) {
	old, err := b.findThing(w.thing.ID)
	if err != nil {
		return false, err
	}
	var num int64
	if err := b.stmts.put.QueryRowContext(b.ctx, append(w.args, b.next(), micros(now))...).Scan(&num, &created); err != nil {
		return false, err
	}
	if err := b.writeDerived(num, w.args[argExpires], w.index); err != nil {
		return false, err
	}
	stored := w.thing
	if !created {
		stored.Created = old.Created
	}
	events, err := directory.RecordedEvents(old, stored, now)
	if err != nil {
		return false, err
	}
	return created, b.record(events...)
}

// create is the write of Create.
func (b *batch) create(w *thingWrite, now time.Time) error {
	old, err := b.findThing(w.thing.ID)
	if err != nil {
		return err
	}
	var num int64
	err = b.stmts.create.QueryRowContext(b.ctx, append(w.args, b.next(), micros(now))...).Scan(&num)
	if errors.Is(err, sql.ErrNoRows) {
		return directory.ErrExists
	}
	if err != nil {
		return err
	}
	if err := b.writeDerived(num, w.args[argExpires], w.index); err != nil {
		return err
	}
	events, err := directory.RecordedEvents(old, w.thing, now)
	if err != nil {
		return err
	}
	return b.record(events...)
}

// findThing reads the row with id whatever its expiry, with its index's subject; nil when
// there is none.
func (b *batch) findThing(id string) (*directory.Thing, error) {
	var sub subject
	t, err := scanThing(b.stmts.findThing.QueryRowContext(b.ctx, id), sub.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t.Index = sub.index()
	return &t, nil
}

// delete is the write of Delete.
func (b *batch) delete(id string, now time.Time) error {
	var num int64
	err := b.stmts.delete.QueryRowContext(b.ctx, id, micros(now)).Scan(&num)
	if errors.Is(err, sql.ErrNoRows) {
		return directory.ErrNotFound
	}
	if err != nil {
		return err
	}
	ix, err := b.deleteDerived(num)
	if err != nil {
		return err
	}
	return b.record(directory.DeletedEvent(directory.Thing{ID: id, Index: ix}, now))
}

// Get returns the live Thing with id, and the problem of its expansion.
func (s *Store) Get(ctx context.Context, id string, now time.Time) (directory.Thing, error) {
	if s.notReady != nil {
		return directory.Thing{}, s.notReady
	}
	if !directory.StorableID(id) {
		return directory.Thing{}, directory.ErrNotFound
	}
	t, err := scanThing(s.get.QueryRowContext(ctx, id, micros(now)))
	if errors.Is(err, sql.ErrNoRows) {
		return directory.Thing{}, directory.ErrNotFound
	}
	if err != nil {
		return directory.Thing{}, fmt.Errorf("getting thing %q: %w", id, err)
	}
	return t, nil
}

// Update replaces the live Thing with id by what change makes of it. change runs on the
// caller's goroutine, never on the writer's, where it would hold up every write. The
// id's lock keeps the other writes to id out meanwhile (so change must not write to id
// itself, as with PostgreSQL's row lock), and the write applies only if the row is still
// the version change saw; if a purge got in between, the Update starts over. That version
// is also the document the stored expansion may be of: the expansion stays only when the
// document is the same, since SaveDerived never writes one for another document.
func (s *Store) Update(ctx context.Context, id string, now time.Time, change func(directory.Thing) (directory.Thing, error)) error {
	if s.notReady != nil {
		return s.notReady
	}
	if !directory.StorableID(id) {
		return directory.ErrNotFound
	}
	unlock, err := s.idLocks.lock(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	for range maxUpdateAttempts {
		var revision int64
		var sub subject
		current, err := scanThing(s.getForUpdate.QueryRowContext(ctx, id, micros(now)), append([]any{&revision}, sub.dest()...)...)
		if errors.Is(err, sql.ErrNoRows) {
			return directory.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("reading thing %q for update: %w", id, err)
		}
		next, err := change(current)
		if err != nil {
			return err
		}
		if next.ID != id {
			return fmt.Errorf("updating thing %q: the change returned a Thing with id %q; an update cannot rename", id, next.ID)
		}
		args, ix := thingArgs(next), newIndexArgs(next.Index)
		sameDocument := bytes.Equal(next.Document, current.Document)
		events, err := updateEvents(current, sub.index(), next, sameDocument, now)
		if err != nil {
			return err
		}
		applied := false
		err = s.w.submit(ctx, func(b *batch) error {
			var num int64
			err := b.stmts.update.QueryRowContext(b.ctx, append(args, b.next(), revision)...).Scan(&num)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			applied = true
			if ix != nil {
				err = b.writeIndex(num, args[argExpires], ix)
			} else {
				_, err = b.stmts.setIndexExpires.ExecContext(b.ctx, num, args[argExpires])
			}
			if err != nil {
				return err
			}
			if !sameDocument {
				if err := b.setExpansion(num, false, directory.Expansion{}); err != nil {
					return err
				}
			}
			return b.record(events...)
		})
		if err != nil {
			return writeError("updating", id, err)
		}
		if applied {
			return nil
		}
	}
	return fmt.Errorf("updating thing %q: other writes to it won the race %d times in a row", id, maxUpdateAttempts)
}

// updateEvents are the events of an Update that stores next over current, indexed as ix,
// made on the caller's goroutine: the write applies only to the version read, so they
// hold if it does. They show the expansion problem that is stored, which is the current
// one only while the document stays the same.
func updateEvents(current directory.Thing, ix *directory.Index, next directory.Thing, sameDocument bool, now time.Time) ([]directory.Event, error) {
	current.Index = ix
	next.ExpansionProblem = ""
	if sameDocument {
		next.ExpansionProblem = current.ExpansionProblem
	}
	return directory.UpdateEvents(current, next, now)
}

// Delete removes the live Thing with id.
func (s *Store) Delete(ctx context.Context, id string, now time.Time) error {
	if s.notReady != nil {
		return s.notReady
	}
	if !directory.StorableID(id) {
		return directory.ErrNotFound
	}
	unlock, err := s.idLocks.lock(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	err = s.w.submit(ctx, func(b *batch) error { return b.delete(id, now) })
	if err != nil {
		return writeError("deleting", id, err)
	}
	return nil
}

// List streams the live Things of page to fn in id order.
func (s *Store) List(ctx context.Context, page directory.Page, now time.Time, fn func(directory.Thing) error) error {
	if s.notReady != nil {
		return s.notReady
	}
	limit := -1
	if page.Limit > 0 {
		limit = page.Limit
	}
	var rows *sql.Rows
	var err error
	if page.Where != nil {
		cond, args := whereSQL(page.Where, 2)
		rows, err = s.readers.QueryContext(ctx, listWhereSQL+cond+` ORDER BY t.id`, append([]any{micros(now)}, args...)...)
	} else {
		rows, err = s.list.QueryContext(ctx, micros(now), max(page.Offset, 0), limit)
	}
	if err != nil {
		return fmt.Errorf("listing things: %w", err)
	}
	defer rows.Close() // resets the statement: no need to read the rows fn did not want
	for rows.Next() {
		t, err := scanThing(rows)
		if err != nil {
			return fmt.Errorf("listing things: %w", err)
		}
		if err := fn(t); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("listing things: %w", err)
	}
	return nil
}

// Membership counts the live Things and tags their set.
func (s *Store) Membership(ctx context.Context, now time.Time) (directory.Membership, error) {
	if s.notReady != nil {
		return directory.Membership{}, s.notReady
	}
	var m directory.Membership
	var maxSeq int64
	if err := s.membership.QueryRowContext(ctx, micros(now)).Scan(&m.Total, &maxSeq); err != nil {
		return directory.Membership{}, fmt.Errorf("reading the membership: %w", err)
	}
	m.Tag = strconv.Itoa(m.Total) + "-" + strconv.FormatInt(maxSeq, 10)
	return m, nil
}

// PurgeExpired deletes the Things that expired at or before now, in batches.
func (s *Store) PurgeExpired(ctx context.Context, now time.Time) (int, error) {
	if s.notReady != nil {
		return 0, s.notReady
	}
	n, err := s.inBatches(ctx, purgeBatch, func(b *batch) (int, error) {
		purged, err := queryPurged(b.stmts.purge.QueryContext(b.ctx, micros(now), purgeBatch))
		if err != nil {
			return 0, err
		}
		events := make([]directory.Event, len(purged))
		for i, p := range purged {
			ix, err := b.deleteDerived(p.num)
			if err != nil {
				return 0, err
			}
			events[i] = directory.DeletedEvent(directory.Thing{ID: p.id, Index: ix}, now)
		}
		return len(purged), b.record(events...)
	})
	if err != nil {
		return n, fmt.Errorf("purging expired things: %w", err)
	}
	return n, nil
}

// inBatches runs deleteBatch, each time in a transaction of its own, until it deletes
// fewer than size rows, and returns how many it deleted in all. Small transactions keep
// the single writer from stalling the writes queued behind a large purge.
func (s *Store) inBatches(ctx context.Context, size int, deleteBatch func(*batch) (int, error)) (int, error) {
	total := 0
	for {
		var n int
		err := s.w.submit(ctx, func(b *batch) error {
			var err error
			n, err = deleteBatch(b)
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < size {
			return total, nil
		}
	}
}

// Ready checks that the database answers and its schema is the one this binary expects.
func (s *Store) Ready(ctx context.Context) error {
	version, err := schemaVersion(ctx, s.readers)
	if err != nil {
		return err
	}
	return versionError(version)
}

func versionError(version uint) error {
	return migrations.CheckVersion(version, latestVersion)
}

// schemaVersion reads the applied migration version, 0 when none is. A dirty schema is an
// error because no request should run on a half-migrated schema.
func schemaVersion(ctx context.Context, db *sql.DB) (uint, error) {
	var exists bool
	err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1)`, migrationsTable).Scan(&exists)
	if err != nil {
		return 0, fmt.Errorf("reading the database: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var version int64
	var dirty bool
	err = db.QueryRowContext(ctx, `SELECT version, dirty FROM `+migrationsTable+` LIMIT 1`).Scan(&version, &dirty)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("reading the schema version: %w", err)
	case dirty:
		return 0, &migrations.DirtyError{Version: int(version)}
	}
	return uint(version), nil
}

// argExpires is where thingArgs has expires, which thing_index repeats.
const argExpires = 4

// thingArgs are the parameters ?1..?8 of insertThing and updateSQL, with room for the
// two that follow. A nil Origin is bound as NULL.
func thingArgs(t directory.Thing) []any {
	var expires, ttl, retrieved any // NULL when absent
	if !t.Expires.IsZero() {
		expires = micros(t.Expires)
	}
	if t.TTL != 0 {
		ttl = t.TTL
	}
	if !t.Retrieved.IsZero() {
		retrieved = micros(t.Retrieved)
	}
	args := make([]any, 8, 10)
	args[0], args[1], args[2], args[3], args[argExpires], args[5] = t.ID, t.Document, micros(t.Created), micros(t.Modified), expires, ttl
	args[6], args[7] = retrieved, t.Origin
	return args
}

// micros is how times are stored: microseconds since the Unix epoch, rounded down like
// PostgreSQL's timestamps, so that a Thing's times and now compare as they do there.
func micros(t time.Time) int64 {
	return t.UnixMicro()
}

func fromMicros(us int64) time.Time {
	return time.UnixMicro(us).UTC()
}

// scanThing reads thingColumns, then extra.
func scanThing(row interface{ Scan(...any) error }, extra ...any) (directory.Thing, error) {
	var t directory.Thing
	var created, modified int64
	var expires, retrieved sql.NullInt64
	var ttl sql.NullFloat64
	var problem sql.NullString
	if err := row.Scan(append([]any{&t.ID, &t.Document, &created, &modified, &expires, &ttl, &retrieved, &t.Origin, &problem}, extra...)...); err != nil {
		return directory.Thing{}, err
	}
	t.Created, t.Modified = fromMicros(created), fromMicros(modified)
	if expires.Valid {
		t.Expires = fromMicros(expires.Int64)
	}
	if retrieved.Valid {
		t.Retrieved = fromMicros(retrieved.Int64)
	}
	t.TTL = ttl.Float64
	t.ExpansionProblem = problem.String
	return t, nil
}

// purgedThing is a row purgeSQL deleted.
type purgedThing struct {
	num int64
	id  string
}

// queryPurged reads what purgeSQL returns, to its end: the statement must be done before
// the next one on the writer's connection.
func queryPurged(rows *sql.Rows, err error) ([]purgedThing, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var purged []purgedThing
	for rows.Next() {
		var p purgedThing
		if err := rows.Scan(&p.num, &p.id); err != nil {
			return nil, err
		}
		purged = append(purged, p)
	}
	return purged, rows.Err()
}

// queryNums reads a column of integers, to its end, as queryPurged does.
func queryNums(rows *sql.Rows, err error) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var nums []int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		nums = append(nums, n)
	}
	return nums, rows.Err()
}

// writeError passes the directory's own errors through as they are and says which write
// failed otherwise.
func writeError(action, id string, err error) error {
	if errors.Is(err, directory.ErrExists) || errors.Is(err, directory.ErrNotFound) {
		return err
	}
	return fmt.Errorf("%s thing %q: %w", action, id, err)
}
