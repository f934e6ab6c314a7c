// Package postgres is the directory.Store on PostgreSQL, for production and for several
// replicas sharing one database.
package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/migrations"
)

// Options tune a Store.
type Options struct {
	// MaxConns is the size of the connection pool; 0 keeps pgxpool's default (the greater
	// of 4 and the number of CPUs) or the pool_max_conns of the URL.
	MaxConns int32
	// MigrateOnOpen applies the embedded migrations before the store opens.
	MigrateOnOpen bool
}

// Store is a directory.Store on a pgx connection pool.
type Store struct {
	pool *pgxpool.Pool
}

var _ directory.Store = (*Store)(nil)

// Open connects to the database at databaseURL (postgres://...). It fails when the schema
// is dirty; a schema that is merely behind opens, and Ready reports it until migrated.
func Open(ctx context.Context, databaseURL string, opts Options) (*Store, error) {
	if opts.MigrateOnOpen {
		if err := MigrateUp(ctx, databaseURL); err != nil {
			return nil, err
		}
	}
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("parsing the database URL: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("opening the database pool: %w", err)
	}
	s := &Store{pool: pool}
	// Reading the schema version is also the ping.
	if _, err := s.schemaVersion(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the pool, waiting for connections in use to be released.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// A row is live when it has no expiry or expires after $now; every read repeats this.
const (
	thingColumns = `id, document, created, modified, expires, ttl, retrieved, origin, expansion_problem`

	// indexColumns are the columns of directory.Index, in the order of indexValues.
	indexColumns = `kind, types, type_iris, vendor_name, vendor_url, title, description, actions, properties, events, capabilities, protocols, search`

	// A Put or Create stores the index of the row it tried to insert.
	excludedIndex = `(` + indexColumns + `) = (EXCLUDED.kind, EXCLUDED.types, EXCLUDED.type_iris,
	EXCLUDED.vendor_name, EXCLUDED.vendor_url, EXCLUDED.title, EXCLUDED.description, EXCLUDED.actions,
	EXCLUDED.properties, EXCLUDED.events, EXCLUDED.capabilities, EXCLUDED.protocols, EXCLUDED.search)`

	// An expansion is of one document; any write of another makes it not done.
	resetExpansion = `expanded = NULL, expansion_problem = NULL, expanded_at = NULL`
)

var (
	insertThing = `INSERT INTO things AS t (id, document, doc, created, modified, expires, ttl, retrieved, origin, member_seq, ` + indexColumns + `)
VALUES ($1, $2, ` + docExpr("$2", "$3") + `, $4, $5, $6, $7, $8, $9, nextval('things_member_seq'), ` + indexValues(11) + `)`

	// An expired row counts as absent: the new Thing takes its place as a newcomer, with
	// its own created time and a new member_seq. Create writes with it too, once it has
	// found no live row under the id's lock. A replace takes retrieved and origin from the
	// new Thing too: a client's PUT over a fetched TD makes it the client's.
	putSQL = insertThing + `
ON CONFLICT (id) DO UPDATE SET
	document = EXCLUDED.document,
	doc = EXCLUDED.doc,
	created = CASE WHEN t.expires IS NULL OR t.expires > $10 THEN t.created ELSE EXCLUDED.created END,
	modified = EXCLUDED.modified,
	expires = EXCLUDED.expires,
	ttl = EXCLUDED.ttl,
	retrieved = EXCLUDED.retrieved,
	origin = EXCLUDED.origin,
	member_seq = CASE WHEN t.expires IS NULL OR t.expires > $10 THEN t.member_seq ELSE EXCLUDED.member_seq END,
	` + excludedIndex + `,
	` + resetExpansion
)

const (
	getSQL = `SELECT ` + thingColumns + ` FROM things
WHERE id = $1 AND (expires IS NULL OR expires > $2)`

	// subjectColumns are the Index fields an event carries, '' for a Thing without an index.
	subjectColumns = `COALESCE(kind, ''), COALESCE(vendor_name, ''), COALESCE(vendor_url, '')`

	// Every write to a Thing first takes the lock of its id, held until it commits, so that
	// the row it reads next is the state it replaces, also when there is no row yet to lock
	// (two Puts of a new id). It is in the one-bigint keyspace of advisory locks, apart from
	// the events lock.
	lockIDSQL = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`

	// The row a write replaces, whatever its expiry, which the write's events describe. FOR
	// UPDATE because SaveDerived does without the id's lock: a derivation committing after
	// this read would change the index and the expansion problem the events show.
	replacedSQL = `SELECT ` + thingColumns + `, ` + subjectColumns + ` FROM things WHERE id = $1 FOR UPDATE`

	deleteSQL = `DELETE FROM things WHERE id = $1 AND (expires IS NULL OR expires > $2)
RETURNING ` + subjectColumns

	listSQL = `SELECT ` + thingColumns + ` FROM things
WHERE expires IS NULL OR expires > $1
ORDER BY id OFFSET $2 LIMIT $3`

	// The JSONPath pre-filter: things_doc_path_idx finds the candidates, and the directory
	// evaluates the exact query on them. doc holds no registration member, which the
	// conditions never name.
	listWhereSQL = `SELECT ` + thingColumns + ` FROM things
WHERE (expires IS NULL OR expires > $1) AND doc @? $2::jsonpath
ORDER BY id`

	// A member_seq is never reused, so the set of live member_seqs changes exactly when
	// the set of live ids does. count and max(member_seq) alone would miss a swap: Puts
	// may commit out of sequence order, so a newcomer can have a smaller number than a
	// member that left at the same time. An XOR of hashes changes with any single swap
	// and, short of a 64-bit collision, with any larger one.
	membershipSQL = `SELECT count(*), COALESCE(bit_xor(hashint8extended(member_seq, 0)), 0)
FROM things WHERE expires IS NULL OR expires > $1`

	// The expiry test is repeated outside the subquery so that PostgreSQL checks it again
	// on the row version it deletes: a Thing that a concurrent Put renewed after this
	// statement's snapshot survives. SKIP LOCKED lets replicas purge side by side instead
	// of queueing on the same rows, and passes over the rows a write has read to replace.
	// Like every write, the purge deletes only under the id's lock; but it holds the events
	// lock, which writers take after theirs, so it only tries it and leaves the ids it does
	// not get to a later purge. The try is outside the innermost query so that it is made
	// only for the rows that query returns.
	purgeSQL = `DELETE FROM things
WHERE id IN (
		SELECT id FROM (SELECT id FROM things WHERE expires <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED) AS candidate
		WHERE pg_try_advisory_xact_lock(hashtextextended(id, 0)))
	AND expires <= $1
RETURNING id, ` + subjectColumns

	// The partial index on expanded_at IS NULL holds exactly the candidates.
	unexpandedSQL = `SELECT id, document FROM things
WHERE expanded_at IS NULL AND (expires IS NULL OR expires > $1)
LIMIT $2`

	expansionSQL = `SELECT expanded_at IS NOT NULL, expanded, expansion_problem FROM things
WHERE id = $1 AND (expires IS NULL OR expires > $2)`

	versionSQL = `SELECT version, dirty FROM ` + migrationsTable + ` LIMIT 1`
)

// Comparing the document makes a derivation that a write overtook change nothing: the
// write reset the expansion, and the new document is derived in turn.
var saveDerivedSQL = `UPDATE things SET expanded = $3, expansion_problem = $4, expanded_at = now(),
	(` + indexColumns + `) = (` + indexValues(5) + `)
WHERE id = $1 AND document = $2`

// docExpr is the value of the doc column for the document and jsonbCopy parameters. doc is
// jsonb, which cannot hold every JSON text (see jsonbCopy): the copy is a readable one in
// the rare case the registered bytes are not, else NULL, which saves sending the document
// twice.
func docExpr(document, copied string) string {
	return `COALESCE(` + copied + `::jsonb, convert_from(` + document + `, 'UTF8')::jsonb)`
}

// indexValues are the values of indexColumns from the parameters indexArgs gives, the first
// of them numbered first. The tsvector is computed here, from the text fields, because
// stemming must match what plainto_tsquery('english', ...) does to the words searched for.
func indexValues(first int) string {
	var n [indexArgCount]string
	for i := range n {
		n[i] = "$" + strconv.Itoa(first+i)
	}
	return strings.Join(n[:12], ", ") + `,
	setweight(to_tsvector('english', ` + n[12] + `), 'A') || setweight(to_tsvector('english', ` + n[13] + `), 'B') ||
	setweight(to_tsvector('english', ` + n[14] + `), 'B') || setweight(to_tsvector('english', ` + n[15] + `), 'C')`
}

// indexArgCount is the number of parameters of indexValues.
const indexArgCount = 16

// indexArgs are the parameters of indexValues: all NULL for a nil index, which leaves the
// Thing unindexed, since every write of the index writes all its columns.
func indexArgs(ix *directory.Index) []any {
	if ix == nil {
		return make([]any, indexArgCount)
	}
	return []any{
		storable(ix.Kind), storableAll(ix.Types), storableAll(ix.TypeIRIs), storable(ix.VendorName),
		storable(ix.VendorURL), storable(ix.Title), storable(ix.Description),
		storableAll(ix.Actions), storableAll(ix.Properties), storableAll(ix.Events),
		storableAll(ix.Capabilities), storableAll(ix.Protocols),
		storable(ix.Text.Titles), storable(ix.Text.Names), storable(ix.Text.Vendor), storable(ix.Text.Descriptions),
	}
}

// storable returns s as PostgreSQL's text can hold it: NUL characters and bytes that are not
// UTF-8 become U+FFFD, as jsonbCopy does for the document. JSON strings may hold "\u0000",
// and a TD must not fail to register because of one. Search values pass through it too, so
// that they still equal what was stored.
func storable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// storableAll is storable for each string of list, copying list only when one changes.
func storableAll(list []string) []string {
	for i, s := range list {
		if t := storable(s); t != s {
			out := slices.Clone(list)
			for j := i; j < len(out); j++ {
				out[j] = storable(out[j])
			}
			return out
		}
	}
	return list
}

// purgeBatch bounds each purge statement so that a huge purge is many short transactions
// rather than one long one holding locks on everything it deletes.
const purgeBatch = 1000

// Put creates or replaces t.
func (s *Store) Put(ctx context.Context, t directory.Thing, now time.Time) (created bool, err error) {
	if !directory.StorableID(t.ID) {
		return false, directory.UnstorableIDError(t.ID)
	}
	created, err = s.put(ctx, t, now, true)
	if err != nil {
		return false, writeError("putting", t.ID, err)
	}
	return created, nil
}

// Create inserts t unless a live Thing has its ID.
func (s *Store) Create(ctx context.Context, t directory.Thing, now time.Time) error {
	if !directory.StorableID(t.ID) {
		return directory.UnstorableIDError(t.ID)
	}
	_, err := s.put(ctx, t, now, false)
	if err != nil && !errors.Is(err, directory.ErrExists) {
		return writeError("creating", t.ID, err)
	}
	return err
}

// put writes t over the row with its id, if any, and records the events: ErrExists when
// that row is live and replaceLive is false. Two round trips: the id's lock with the read
// of the row it replaces, then the write with its events.
func (s *Store) put(ctx context.Context, t directory.Thing, now time.Time, replaceLive bool) (created bool, err error) {
	var old *directory.Thing
	read := &pgx.Batch{}
	queueLockThing(read, t.ID, &old)
	err = s.transact(ctx, read, func() (*pgx.Batch, error) {
		created = old == nil || !old.LiveAt(now)
		if !created && !replaceLive {
			return nil, directory.ErrExists
		}
		// The events show t as stored: a replace keeps the Created of the live Thing, and
		// the expansion starts over, with no problem yet.
		stored := t
		stored.ExpansionProblem = ""
		if !created {
			stored.Created = old.Created
		}
		events, err := directory.RecordedEvents(old, stored, now)
		if err != nil {
			return nil, err
		}
		b := &pgx.Batch{}
		b.Queue(putSQL, writeArgs(t, now)...)
		queueEvents(b, events)
		return b, nil
	})
	return created, err
}

// queueLockThing queues taking the lock of id and reading the row it guards, whatever its
// expiry, with the Index fields events carry, into *old; nil when there is none.
func queueLockThing(b *pgx.Batch, id string, old **directory.Thing) {
	b.Queue(lockIDSQL, id)
	b.Queue(replacedSQL, id).QueryRow(func(row pgx.Row) error {
		var r thingRow
		var ix directory.Index
		err := row.Scan(append(r.dest(), &ix.Kind, &ix.VendorName, &ix.VendorURL)...)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		t := r.thing()
		t.Index = &ix
		*old = &t
		return nil
	})
}

// transact runs a write in one transaction and two round trips: BEGIN with the statements
// of read, then what write queues after looking at what they read, with COMMIT. Sending
// BEGIN and COMMIT on their own, as pgx.BeginFunc does, would double the round trips, and
// with them the time the connection and the id's lock are held.
func (s *Store) transact(ctx context.Context, read *pgx.Batch, write func() (*pgx.Batch, error)) (err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	defer func() {
		if err != nil {
			rollback(ctx, conn.Conn())
		}
	}()
	first := &pgx.Batch{}
	first.Queue("BEGIN")
	first.QueuedQueries = append(first.QueuedQueries, read.QueuedQueries...)
	if err := conn.SendBatch(ctx, first).Close(); err != nil {
		return err
	}
	second, err := write()
	if err != nil {
		return err
	}
	second.Queue("COMMIT")
	return conn.SendBatch(ctx, second).Close()
}

// rollback ends the transaction a failed write left open, so that the connection goes
// back to the pool clean; one that cannot be cleaned is closed, and the pool drops it.
func rollback(ctx context.Context, conn *pgx.Conn) {
	if conn.IsClosed() || conn.PgConn().TxStatus() == 'I' {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
		_ = conn.Close(ctx)
	}
}

// Get returns the live Thing with id.
func (s *Store) Get(ctx context.Context, id string, now time.Time) (directory.Thing, error) {
	if !directory.StorableID(id) {
		return directory.Thing{}, directory.ErrNotFound
	}
	t, err := scanThing(s.pool.QueryRow(ctx, getSQL, id, now))
	if errors.Is(err, pgx.ErrNoRows) {
		return directory.Thing{}, directory.ErrNotFound
	}
	if err != nil {
		return directory.Thing{}, fmt.Errorf("getting thing %q: %w", id, err)
	}
	return t, nil
}

// Update replaces the live Thing with id by what change makes of it, holding the id's lock
// and the row lock in between so that no other write to id can interleave.
func (s *Store) Update(ctx context.Context, id string, now time.Time, change func(directory.Thing) (directory.Thing, error)) error {
	if !directory.StorableID(id) {
		return directory.ErrNotFound
	}
	var current *directory.Thing
	var refused error // from change, returned as it is
	read := &pgx.Batch{}
	queueLockThing(read, id, &current)
	err := s.transact(ctx, read, func() (*pgx.Batch, error) {
		if current == nil || !current.LiveAt(now) {
			return nil, directory.ErrNotFound
		}
		given := *current
		given.Index = nil
		next, err := change(given)
		if err != nil {
			refused = err
			return nil, err
		}
		if next.ID != id {
			return nil, fmt.Errorf("updating thing %q: the change returned a Thing with id %q; an update cannot rename", id, next.ID)
		}
		// The events show the expansion problem that is stored, which is the current one
		// only while the document stays the same.
		stored := next
		stored.ExpansionProblem = ""
		if bytes.Equal(current.Document, next.Document) {
			stored.ExpansionProblem = current.ExpansionProblem
		}
		events, err := directory.UpdateEvents(*current, stored, now)
		if err != nil {
			return nil, err
		}
		sql, args := updateStatement(*current, next)
		b := &pgx.Batch{}
		b.Queue(sql, args...)
		queueEvents(b, events)
		return b, nil
	})
	if err == nil || refused != nil || errors.Is(err, directory.ErrNotFound) {
		return err
	}
	return writeError("updating", id, err)
}

// Delete removes the live Thing with id.
func (s *Store) Delete(ctx context.Context, id string, now time.Time) error {
	if !directory.StorableID(id) {
		return directory.ErrNotFound
	}
	var gone *directory.Thing
	read := &pgx.Batch{}
	read.Queue(lockIDSQL, id)
	read.Queue(deleteSQL, id, now).QueryRow(func(row pgx.Row) error {
		t := directory.Thing{ID: id, Index: &directory.Index{}}
		err := row.Scan(&t.Index.Kind, &t.Index.VendorName, &t.Index.VendorURL)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		gone = &t
		return nil
	})
	err := s.transact(ctx, read, func() (*pgx.Batch, error) {
		if gone == nil {
			return nil, directory.ErrNotFound
		}
		b := &pgx.Batch{}
		queueEvents(b, []directory.Event{directory.DeletedEvent(*gone, now)})
		return b, nil
	})
	if err != nil && !errors.Is(err, directory.ErrNotFound) {
		return fmt.Errorf("deleting thing %q: %w", id, err)
	}
	return err
}

// List streams the live Things of page to fn in id order.
func (s *Store) List(ctx context.Context, page directory.Page, now time.Time, fn func(directory.Thing) error) error {
	var limit any // NULL: LIMIT ALL
	if page.Limit > 0 {
		limit = page.Limit
	}
	sql, args := listSQL, []any{now, page.Offset, limit}
	if page.Where != nil {
		sql, args = listWhereSQL, []any{now, page.Where.SQLJSONPath()}
	}
	return streamRows(ctx, s.pool, "listing things", sql, args, scanThing, fn)
}

// streamRows calls fn with each row of the query as scan reads it, without holding the
// result in memory; its own errors say what it was doing. An error from fn is returned as
// it is, and gives up the rest of the result: closing the rows would read it all, as long
// as finishing, where canceling the query drops the connection instead.
func streamRows[T any](ctx context.Context, pool *pgxpool.Pool, what, sql string, args []any, scan func(pgx.Row) (T, error), fn func(T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows, err := pool.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := fn(v); err != nil {
			cancel()
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// Membership counts the live Things and tags their set.
func (s *Store) Membership(ctx context.Context, now time.Time) (directory.Membership, error) {
	var m directory.Membership
	var hash int64
	if err := s.pool.QueryRow(ctx, membershipSQL, now).Scan(&m.Total, &hash); err != nil {
		return directory.Membership{}, fmt.Errorf("reading the membership: %w", err)
	}
	m.Tag = fmt.Sprintf("%d-%016x", m.Total, uint64(hash))
	return m, nil
}

// PurgeExpired deletes the Things that expired at or before now, in batches.
func (s *Store) PurgeExpired(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		n, err := s.purgeExpired(ctx, now)
		if err != nil {
			return total, fmt.Errorf("purging expired things: %w", err)
		}
		total += n
		if n < purgeBatch {
			return total, nil
		}
	}
}

// purgeExpired deletes one batch of expired Things and records their deletions, in one
// transaction that holds the events lock from the start (see purgeSQL).
func (s *Store) purgeExpired(ctx context.Context, now time.Time) (n int, err error) {
	var events []directory.Event
	read := &pgx.Batch{}
	read.Queue(eventsLockSQL)
	read.Queue(purgeSQL, now, purgeBatch).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			t := directory.Thing{Index: &directory.Index{}}
			if err := rows.Scan(&t.ID, &t.Index.Kind, &t.Index.VendorName, &t.Index.VendorURL); err != nil {
				return err
			}
			events = append(events, directory.DeletedEvent(t, now))
		}
		return rows.Err()
	})
	err = s.transact(ctx, read, func() (*pgx.Batch, error) {
		b := &pgx.Batch{}
		if len(events) > 0 {
			queueRecord(b, events)
		}
		return b, nil
	})
	n = len(events)
	if err != nil {
		return 0, err
	}
	return n, nil
}

// Unexpanded returns up to limit live Things whose expansion is not done.
func (s *Store) Unexpanded(ctx context.Context, now time.Time, limit int) ([]directory.Thing, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, unexpandedSQL, now, limit)
	if err != nil {
		return nil, fmt.Errorf("listing things to expand: %w", err)
	}
	things, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (directory.Thing, error) {
		var t directory.Thing
		err := row.Scan(&t.ID, &t.Document)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("listing things to expand: %w", err)
	}
	return things, nil
}

// SaveDerived stores the index and expansion derived from document, unless the Thing id no
// longer has that document.
func (s *Store) SaveDerived(ctx context.Context, id string, document []byte, ix directory.Index, x directory.Expansion) error {
	if !directory.StorableID(id) {
		return nil
	}
	var problem any // NULL when there is none
	if x.Problem != "" {
		problem = storable(x.Problem)
	}
	args := append([]any{id, document, x.Expanded, problem}, indexArgs(&ix)...)
	if _, err := s.pool.Exec(ctx, saveDerivedSQL, args...); err != nil {
		return writeError("saving the derived index of", id, err)
	}
	return nil
}

// Expansion returns the stored expansion of the live Thing id.
func (s *Store) Expansion(ctx context.Context, id string, now time.Time) (directory.Expansion, error) {
	if !directory.StorableID(id) {
		return directory.Expansion{}, directory.ErrNotFound
	}
	var x directory.Expansion
	var problem *string
	err := s.pool.QueryRow(ctx, expansionSQL, id, now).Scan(&x.Done, &x.Expanded, &problem)
	if errors.Is(err, pgx.ErrNoRows) {
		return directory.Expansion{}, directory.ErrNotFound
	}
	if err != nil {
		return directory.Expansion{}, fmt.Errorf("reading the expansion of thing %q: %w", id, err)
	}
	if problem != nil {
		x.Problem = *problem
	}
	return x, nil
}

// Ready checks that the database answers and its schema is the one this binary expects.
func (s *Store) Ready(ctx context.Context) error {
	version, err := s.schemaVersion(ctx)
	if err != nil {
		return err
	}
	return migrations.CheckVersion(version, latestVersion)
}

// schemaVersion reads the applied migration version, 0 when none is. A dirty schema is an
// error because no request should run on a half-migrated schema.
func (s *Store) schemaVersion(ctx context.Context) (uint, error) {
	var version int64
	var dirty bool
	err := s.pool.QueryRow(ctx, versionSQL).Scan(&version, &dirty)
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows), errors.As(err, &pgErr) && pgErr.Code == "42P01": // undefined_table
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("reaching the database: %w", err)
	case dirty:
		return 0, &migrations.DirtyError{Version: int(version)}
	}
	return uint(version), nil
}

// writeArgs are the parameters of putSQL.
func writeArgs(t directory.Thing, now time.Time) []any {
	expires, ttl, retrieved := registrationArgs(t)
	args := []any{t.ID, t.Document, jsonbCopy(t.Document), t.Created, t.Modified, expires, ttl, retrieved, t.Origin, now}
	return append(args, indexArgs(t.Index)...)
}

// registrationArgs are the expires, ttl and retrieved parameters of t, NULL when absent.
// Origin needs none: pgx sends a nil []byte as NULL.
func registrationArgs(t directory.Thing) (expires, ttl, retrieved any) {
	if !t.Expires.IsZero() {
		expires = t.Expires
	}
	if t.TTL != 0 {
		ttl = t.TTL
	}
	if !t.Retrieved.IsZero() {
		retrieved = t.Retrieved
	}
	return expires, ttl, retrieved
}

// updateStatement writes next over current. An unchanged document is not written again,
// which spares renewals re-parsing the jsonb copy and rewriting both out of line, and it
// keeps the expansion, which is of the document.
func updateStatement(current, next directory.Thing) (string, []any) {
	var p params
	expires, ttl, retrieved := registrationArgs(next)
	var b strings.Builder
	b.WriteString(`UPDATE things SET created = ` + p.add(next.Created) + `, modified = ` + p.add(next.Modified) +
		`, expires = ` + p.add(expires) + `, ttl = ` + p.add(ttl) +
		`, retrieved = ` + p.add(retrieved) + `, origin = ` + p.add(next.Origin))
	if !bytes.Equal(current.Document, next.Document) {
		document := p.add(next.Document)
		b.WriteString(`, document = ` + document + `, doc = ` + docExpr(document, p.add(jsonbCopy(next.Document))) +
			`, ` + resetExpansion)
	}
	if next.Index != nil {
		b.WriteString(`, (` + indexColumns + `) = (` + indexValues(len(p)+1) + `)`)
		p = append(p, indexArgs(next.Index)...)
	}
	b.WriteString(` WHERE id = ` + p.add(next.ID))
	return b.String(), p
}

// params collects the arguments of a statement assembled from fixed fragments: each value
// gets a placeholder, so no value is ever part of the SQL text.
type params []any

// add appends v and returns its placeholder.
func (p *params) add(v any) string {
	*p = append(*p, v)
	return "$" + strconv.Itoa(len(*p))
}

func scanThing(row pgx.Row) (directory.Thing, error) {
	var r thingRow
	if err := row.Scan(r.dest()...); err != nil {
		return directory.Thing{}, err
	}
	return r.thing(), nil
}

// thingRow receives the thingColumns of a row.
type thingRow struct {
	t         directory.Thing
	expires   *time.Time
	ttl       *float64
	retrieved *time.Time
	problem   *string
}

func (r *thingRow) dest() []any {
	return []any{&r.t.ID, &r.t.Document, &r.t.Created, &r.t.Modified, &r.expires, &r.ttl, &r.retrieved, &r.t.Origin, &r.problem}
}

func (r *thingRow) thing() directory.Thing {
	t := r.t
	t.Created = t.Created.UTC()
	t.Modified = t.Modified.UTC()
	if r.expires != nil {
		t.Expires = r.expires.UTC()
	}
	if r.ttl != nil {
		t.TTL = *r.ttl
	}
	if r.retrieved != nil {
		t.Retrieved = r.retrieved.UTC()
	}
	if r.problem != nil {
		t.ExpansionProblem = *r.problem
	}
	return t
}

// writeError explains the ways a valid TD can fail to be stored. PostgreSQL's numeric type,
// which jsonb uses for numbers, has a bounded range (131072 digits before the decimal point
// and 16383 after), unlike JSON's. And an index entry must fit in a third of a page, about
// 2700 bytes after compression: a value the search index keeps whole (an affordance name,
// the vendor name, the @type values together) can be too long for it.
func writeError(action, id string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "22003": // numeric_value_out_of_range
			return &directory.RequestError{Field: "$", Detail: "the TD contains a number beyond the range this directory can index: " + pgErr.Message}
		case "54000": // program_limit_exceeded
			return &directory.RequestError{Field: "$", Detail: "the TD contains a value too long for this directory to index: " + pgErr.Message}
		}
	}
	return fmt.Errorf("%s thing %q: %w", action, id, err)
}

// replacementEscape stands for what jsonb cannot hold; it is as long as any \uXXXX escape,
// so replacing one keeps the offsets of everything else.
const replacementEscape = `\ufffd`

// jsonbCopy returns nil when PostgreSQL reads document as jsonb as it is, and otherwise a
// copy it can read, for the query column only (the registered bytes are still served).
// JSON allows what jsonb rejects: the escape \u0000 (text cannot hold NUL), escaped
// surrogates that do not pair up, and bytes that are not UTF-8. Each becomes U+FFFD,
// which is also what Go's encoding/json reads for the last two.
func jsonbCopy(document []byte) []byte {
	buf, copied := document, false
	if !utf8.Valid(buf) {
		buf, copied = bytes.ToValidUTF8(buf, []byte("\uFFFD")), true
	}
	// A backslash can only occur inside a JSON string, so there is no need to track
	// where strings start and end.
	for i := bytes.IndexByte(buf, '\\'); i >= 0 && i+1 < len(buf); {
		escape := 2
		if r, ok := escapedRune(buf[i:]); ok {
			escape = 6
			bad := r == 0
			switch {
			case r >= 0xD800 && r < 0xDC00: // high surrogate: needs a low one next
				if low, ok := escapedRune(buf[i+6:]); ok && low >= 0xDC00 && low < 0xE000 {
					escape = 12
				} else {
					bad = true
				}
			case utf16.IsSurrogate(r): // a low surrogate on its own
				bad = true
			}
			if bad {
				if !copied {
					buf, copied = bytes.Clone(buf), true
				}
				copy(buf[i:], replacementEscape)
			}
		}
		next := bytes.IndexByte(buf[i+escape:], '\\')
		if next < 0 {
			break
		}
		i += escape + next
	}
	if !copied {
		return nil
	}
	return buf
}

// escapedRune decodes the \uXXXX escape at the start of b.
func escapedRune(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	r, err := strconv.ParseUint(string(b[2:6]), 16, 16)
	return rune(r), err == nil
}
