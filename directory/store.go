package directory

import (
	"context"
	"time"

	"github.com/lmosdir/lmosdir/pathquery"
)

// Store keeps registrations. Implementations must pass the storetest contract suite.
//
// Every method that takes now treats a Thing whose Expires is not after now as absent, so
// expired registrations are never served even before PurgeExpired removes them.
//
// Every write records its events (see Event) in its own transaction: no change without its
// events, no event without its change. Put and Create record RecordedEvents, Update
// UpdateEvents, Delete and PurgeExpired a DeletedEvent each; a write that changes nothing
// records nothing. The old Thing given to those functions carries an Index with the Kind,
// VendorName and VendorURL the store indexed.
type Store interface {
	// Put creates the Thing, or replaces the live one with the same ID, atomically: two
	// concurrent Puts of one new ID give one create and one replace. A replace keeps the
	// stored Created time. created reports which happened. Put and Create store t.Index
	// (none when nil) and leave the expansion not Done.
	Put(ctx context.Context, t Thing, now time.Time) (created bool, err error)
	// Create inserts a Thing whose ID must not be live; otherwise ErrExists.
	Create(ctx context.Context, t Thing, now time.Time) error
	// Get returns the live Thing, or ErrNotFound.
	Get(ctx context.Context, id string, now time.Time) (Thing, error)
	// Update calls change with the live Thing and stores what it returns, with no other
	// write to that ID in between. An error from change is returned as is and nothing is
	// stored. ErrNotFound when there is no live Thing. The Thing given to change has no
	// Index; a nil Index in the result keeps the stored one. The expansion stays Done only
	// if the Document is unchanged.
	Update(ctx context.Context, id string, now time.Time, change func(Thing) (Thing, error)) error
	// Delete removes the live Thing, or returns ErrNotFound.
	Delete(ctx context.Context, id string, now time.Time) error
	// List calls fn for each live Thing in ID order (Unicode code points), skipping
	// page.Offset and stopping after page.Limit when it is positive. Rows are streamed:
	// memory does not grow with the size of the directory. An error from fn stops the
	// listing and is returned.
	List(ctx context.Context, page Page, now time.Time, fn func(Thing) error) error
	// Membership returns the number of live Things and a tag that changes whenever the set
	// of live IDs changes (not when a Thing is only replaced or patched).
	Membership(ctx context.Context, now time.Time) (Membership, error)
	// PurgeExpired deletes the Things that expired at or before now and returns how many.
	PurgeExpired(ctx context.Context, now time.Time) (int, error)
	// Search returns the live, indexed Things that match q, best first (see SearchCursor),
	// and facets over all of them. Things stored with a nil Index are not found until
	// SaveDerived gives them one.
	Search(ctx context.Context, q SearchQuery, now time.Time) (SearchResult, error)
	// Unexpanded returns up to limit live Things whose Expansion is not Done, in any order.
	// Only ID and Document are filled.
	Unexpanded(ctx context.Context, now time.Time, limit int) ([]Thing, error)
	// SaveDerived stores the index and expansion the directory derived from document for
	// the Thing id, and marks its expansion Done. Nothing changes, and no error is returned,
	// when the Thing is gone or its document is no longer document: a write raced the
	// derivation, and the new document will be derived in turn.
	SaveDerived(ctx context.Context, id string, document []byte, ix Index, x Expansion) error
	// Expansion returns the stored expansion of the live Thing id, or ErrNotFound.
	Expansion(ctx context.Context, id string, now time.Time) (Expansion, error)
	// Events calls fn with the events whose id is greater than after, in id order, at most
	// limit of them when limit is positive. An error from fn stops and is returned.
	Events(ctx context.Context, after int64, limit int, fn func(Event) error) error
	// EventLog says which events the store holds.
	EventLog(ctx context.Context) (EventLog, error)
	// PurgeEvents deletes the events that happened before before and returns how many.
	PurgeEvents(ctx context.Context, before time.Time) (int, error)
	// WatchEvents calls wake, from one goroutine, once it watches and then whenever events
	// may have been recorded, by this process or, for a shared store, by another, until
	// ctx ends. A store that lost its way to learn of them (a broken database connection)
	// reconnects and calls wake once it is back, so that a caller reading after its last
	// event misses none.
	WatchEvents(ctx context.Context, wake func()) error
	// Ready reports whether the store can serve requests (reachable, schema up to date).
	Ready(ctx context.Context) error
	Close() error
}

// Page selects a window of the listing.
type Page struct {
	Offset int
	Limit  int // 0: no limit
	// Where, when set, lets the store leave out Things for which the condition cannot hold
	// on their Document (a store may also ignore it); Offset and Limit are then zero.
	Where *pathquery.Condition
}

// Membership describes the set of live Things.
type Membership struct {
	Total int
	Tag   string
}
