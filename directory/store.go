package directory

import (
	"context"
	"time"
)

// Store keeps registrations. Implementations must pass the storetest contract suite.
//
// Every method that takes now treats a Thing whose Expires is not after now as absent, so
// expired registrations are never served even before PurgeExpired removes them.
type Store interface {
	// Put creates the Thing, or replaces the live one with the same ID, atomically: two
	// concurrent Puts of one new ID give one create and one replace. A replace keeps the
	// stored Created time. created reports which happened.
	Put(ctx context.Context, t Thing, now time.Time) (created bool, err error)
	// Create inserts a Thing whose ID must not be live; otherwise ErrExists.
	Create(ctx context.Context, t Thing, now time.Time) error
	// Get returns the live Thing, or ErrNotFound.
	Get(ctx context.Context, id string, now time.Time) (Thing, error)
	// Update calls change with the live Thing and stores what it returns, with no other
	// write to that ID in between. An error from change is returned as is and nothing is
	// stored. ErrNotFound when there is no live Thing.
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
	// Ready reports whether the store can serve requests (reachable, schema up to date).
	Ready(ctx context.Context) error
	Close() error
}

// Page selects a window of the listing.
type Page struct {
	Offset int
	Limit  int // 0: no limit
}

// Membership describes the set of live Things.
type Membership struct {
	Total int
	Tag   string
}
