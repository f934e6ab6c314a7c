package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/lmosdir/lmosdir/directory"
)

// The event log (see migration 000004). Every write records its events with the same
// writer operation, so under the same savepoint, as its change: both commit or neither
// does. Their ids come from write_seq through the batch, and the single writer hands
// those out in commit order: a reader that follows the log with Events(after its last id)
// cannot step over an event that commits later with a smaller id.
const (
	// A nil Document or Patch is bound as NULL.
	insertEventSQL = `INSERT INTO events (id, type, thing_id, kind, vendor_name, vendor_url, time, document, patch)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)`

	// LIMIT -1 is no limit.
	eventsSQL = `SELECT id, type, thing_id, kind, vendor_name, vendor_url, time, document, patch FROM events
WHERE id > ?1
ORDER BY id LIMIT ?2`

	// One statement, so that both come from one snapshot. max(id) is the last row of the
	// table's b-tree, not a scan.
	eventLogSQL = `SELECT purged_through, max(purged_through, coalesce((SELECT max(id) FROM events), 0)) FROM event_log`

	// Through the index on time.
	purgeEventsSQL = `DELETE FROM events WHERE id IN (SELECT id FROM events WHERE time < ?1 LIMIT ?2) RETURNING id`

	// max: times need not follow ids (callers pass their own now), so a later batch may
	// delete only smaller ids than an earlier one did.
	raisePurgedSQL = `UPDATE event_log SET purged_through = max(purged_through, ?1)`
)

// eventPurgeBatch bounds each operation of PurgeEvents, as purgeBatch does PurgeExpired's.
// An event has no index entries but the one on time: on a small machine, deleting 1000
// events of a 4 KB TD took 20 ms (2500, 40 ms).
const eventPurgeBatch = 1000

// subject scans subjectColumns: what the events say of a Thing besides its document.
type subject struct {
	kind, vendorName, vendorURL sql.NullString
}

func (s *subject) dest() []any {
	return []any{&s.kind, &s.vendorName, &s.vendorURL}
}

// index is the subject as the Index the events are made from, nil when the Thing has no
// index row (its columns are NOT NULL there).
func (s *subject) index() *directory.Index {
	if !s.kind.Valid {
		return nil
	}
	return &directory.Index{Kind: s.kind.String, VendorName: s.vendorName.String, VendorURL: s.vendorURL.String}
}

// record inserts events, numbered in order.
func (b *batch) record(events ...directory.Event) error {
	for _, e := range events {
		_, err := b.stmts.insertEvent.ExecContext(b.ctx,
			b.next(), string(e.Type), e.ThingID, e.Kind, e.VendorName, e.VendorURL, micros(e.Time), e.Document, e.Patch)
		if err != nil {
			return err
		}
		b.recorded = true
	}
	return nil
}

// Events calls fn with the events after the id after, in id order, up to limit when it is
// positive. The rows stream from one snapshot, holding a read connection until fn is done
// with the last.
func (s *Store) Events(ctx context.Context, after int64, limit int, fn func(directory.Event) error) error {
	if s.notReady != nil {
		return s.notReady
	}
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.events.QueryContext(ctx, after, limit)
	if err != nil {
		return fmt.Errorf("reading events: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e directory.Event
		var typ string
		var at int64
		if err := rows.Scan(&e.ID, &typ, &e.ThingID, &e.Kind, &e.VendorName, &e.VendorURL, &at, &e.Document, &e.Patch); err != nil {
			return fmt.Errorf("reading events: %w", err)
		}
		e.Type, e.Time = directory.EventType(typ), fromMicros(at)
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading events: %w", err)
	}
	return nil
}

// EventLog reads which events the store holds.
func (s *Store) EventLog(ctx context.Context) (directory.EventLog, error) {
	if s.notReady != nil {
		return directory.EventLog{}, s.notReady
	}
	var l directory.EventLog
	if err := s.eventLog.QueryRowContext(ctx).Scan(&l.Purged, &l.Newest); err != nil {
		return directory.EventLog{}, fmt.Errorf("reading the event log: %w", err)
	}
	return l, nil
}

// PurgeEvents deletes the events that happened before before, in batches, each raising
// the log's purged id in its own transaction.
func (s *Store) PurgeEvents(ctx context.Context, before time.Time) (int, error) {
	if s.notReady != nil {
		return 0, s.notReady
	}
	n, err := s.inBatches(ctx, eventPurgeBatch, func(b *batch) (int, error) {
		ids, err := queryNums(b.stmts.purgeEvents.QueryContext(b.ctx, micros(before), eventPurgeBatch))
		if err != nil || len(ids) == 0 {
			return 0, err
		}
		_, err = b.stmts.raisePurged.ExecContext(b.ctx, slices.Max(ids))
		return len(ids), err
	})
	if err != nil {
		return n, fmt.Errorf("purging events: %w", err)
	}
	return n, nil
}

// WatchEvents calls wake at once, then after every commit that recorded events, until ctx
// ends. Only this process writes the file (see lockDatabase), so its writer sees every
// event recorded.
func (s *Store) WatchEvents(ctx context.Context, wake func()) error {
	if s.notReady != nil {
		return s.notReady
	}
	for {
		// Taken before wake reads, so that a commit the read misses closes this very
		// channel.
		recorded := s.w.eventsRecorded()
		wake()
		select {
		case <-recorded:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
