package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lmosdir/lmosdir/directory"
)

const (
	// The events lock serializes the transactions that record events from the moment they
	// draw ids to their commit, so that ids follow commit order across every process on the
	// database: a reader of Events after its last id never steps over an event that
	// commits later with a smaller one. Writers take it last, just before they record, to
	// hold it as briefly as possible; their lock order is the id's lock, then this one. The
	// two-int form keeps it apart from the id locks and golang-migrate's lock, which are in
	// the one-bigint keyspace; 1819111283 is "lmos" in ASCII.
	eventsLockSQL = `SELECT pg_advisory_xact_lock(1819111283, 1)`

	// PostgreSQL evaluates nextval after ORDER BY, so the ids follow the order of the events
	// (a deletion before the creation that replaces it).
	insertEventsSQL = `INSERT INTO events (id, type, thing_id, kind, vendor_name, vendor_url, time, document, patch)
SELECT nextval('events_id_seq'), type, thing_id, kind, vendor_name, vendor_url, time, document, patch
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::bytea[], $8::bytea[])
	WITH ORDINALITY AS e (type, thing_id, kind, vendor_name, vendor_url, time, document, patch, n)
ORDER BY n`

	// The notification is sent when the transaction commits, and only then. currval is the
	// last id the transaction drew, its greatest.
	notifySQL = `SELECT pg_notify('lmosdir_events', currval('events_id_seq')::text)`

	listenSQL = `LISTEN lmosdir_events`

	eventsSQL = `SELECT id, type, thing_id, kind, vendor_name, vendor_url, time, document, patch
FROM events WHERE id > $1 ORDER BY id LIMIT $2`

	// GREATEST ignores the NULL max of an empty table.
	eventLogSQL = `SELECT purged_through, GREATEST(purged_through, (SELECT max(id) FROM events)) FROM event_log`

	// Raising purged_through in the statement that deletes keeps the two in one transaction:
	// no reader sees events gone without being told. GREATEST because ids and times need
	// not be in the same order, and a concurrent purge may have raised it further.
	purgeEventsSQL = `WITH purged AS (
	DELETE FROM events WHERE id IN (SELECT id FROM events WHERE time < $1 LIMIT $2) RETURNING id)
UPDATE event_log SET purged_through = GREATEST(purged_through, (SELECT max(id) FROM purged))
RETURNING (SELECT count(*) FROM purged)`
)

// The listening connection is opened again after a failure with this backoff, and checked
// with a ping after this much silence: a connection whose server vanished without closing
// it (a failover, a network partition) would otherwise keep the watcher deaf until TCP
// gives up on it, which takes the better part of an hour with pgx's keep-alive settings.
const (
	minReconnectDelay = 100 * time.Millisecond
	maxReconnectDelay = 5 * time.Second
	listenHeartbeat   = 30 * time.Second
)

// queueEvents queues, after the statements of a write, what records its events: the events
// lock, their rows and the notification. A write without events (a renewal) takes no lock.
func queueEvents(b *pgx.Batch, events []directory.Event) {
	if len(events) == 0 {
		return
	}
	b.Queue(eventsLockSQL)
	queueRecord(b, events)
}

// queueRecord queues the rows of events and the notification, for a transaction that holds
// the events lock.
func queueRecord(b *pgx.Batch, events []directory.Event) {
	b.Queue(insertEventsSQL, eventArgs(events)...)
	b.Queue(notifySQL)
}

// eventArgs are the parameters of insertEventsSQL, one array per column.
func eventArgs(events []directory.Event) []any {
	n := len(events)
	types, things, kinds, names, urls := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	times := make([]time.Time, n)
	documents, patches := make([][]byte, n), make([][]byte, n)
	for i, e := range events {
		types[i], things[i] = string(e.Type), e.ThingID
		// As the index stores them, which is where a deletion takes them from.
		kinds[i], names[i], urls[i] = storable(e.Kind), storable(e.VendorName), storable(e.VendorURL)
		times[i], documents[i], patches[i] = e.Time, e.Document, e.Patch
	}
	return []any{types, things, kinds, names, urls, times, documents, patches}
}

// Events streams the events after the id after to fn, in id order.
func (s *Store) Events(ctx context.Context, after int64, limit int, fn func(directory.Event) error) error {
	var bound any // NULL: LIMIT ALL
	if limit > 0 {
		bound = limit
	}
	return streamRows(ctx, s.pool, "reading events", eventsSQL, []any{after, bound}, scanEvent, fn)
}

func scanEvent(row pgx.Row) (directory.Event, error) {
	var e directory.Event
	err := row.Scan(&e.ID, &e.Type, &e.ThingID, &e.Kind, &e.VendorName, &e.VendorURL, &e.Time, &e.Document, &e.Patch)
	e.Time = e.Time.UTC()
	return e, err
}

// EventLog reads which events are held.
func (s *Store) EventLog(ctx context.Context) (directory.EventLog, error) {
	var l directory.EventLog
	if err := s.pool.QueryRow(ctx, eventLogSQL).Scan(&l.Purged, &l.Newest); err != nil {
		return directory.EventLog{}, fmt.Errorf("reading the event log: %w", err)
	}
	return l, nil
}

// PurgeEvents deletes the events older than before, in batches.
func (s *Store) PurgeEvents(ctx context.Context, before time.Time) (int, error) {
	total := 0
	for {
		var n int
		if err := s.pool.QueryRow(ctx, purgeEventsSQL, before, purgeBatch).Scan(&n); err != nil {
			return total, fmt.Errorf("purging events: %w", err)
		}
		total += n
		if n < purgeBatch {
			return total, nil
		}
	}
}

// WatchEvents wakes the caller on every notification of recorded events, from this process
// or another on the database. It listens on a connection of its own rather than one of the
// pool's, which it would hold for good and which would go back to the pool listening.
func (s *Store) WatchEvents(ctx context.Context, wake func()) error {
	delay := minReconnectDelay
	for {
		if s.listen(ctx, wake) {
			delay = minReconnectDelay
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, maxReconnectDelay)
	}
}

// listen connects, listens and wakes the caller until the connection fails or ctx ends. It
// reports whether it got as far as listening.
func (s *Store) listen(ctx context.Context, wake func()) bool {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		return false
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, listenSQL); err != nil {
		return false
	}
	// The events committed before LISTEN notified no one listening here.
	wake()
	for {
		quiet, cancel := context.WithTimeout(ctx, listenHeartbeat)
		_, err := conn.WaitForNotification(quiet)
		silent := quiet.Err() != nil
		cancel()
		switch {
		case err == nil:
			wake()
		case ctx.Err() != nil || !silent:
			return true
		default:
			// A timed-out wait leaves the connection usable; a ping that times out does not,
			// and then the connection is opened again.
			check, cancel := context.WithTimeout(ctx, listenHeartbeat)
			err := conn.Ping(check)
			cancel()
			if err != nil {
				return true
			}
		}
	}
}
