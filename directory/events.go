package directory

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// EventType is what happened to a registration (WoT Discovery's notification types).
type EventType string

// The event types, in the spelling of WoT Discovery's /events/{type} paths.
const (
	EventCreated EventType = "thing_created"
	EventUpdated EventType = "thing_updated"
	EventDeleted EventType = "thing_deleted"
)

// EventTypes are all the event types.
var EventTypes = []EventType{EventCreated, EventUpdated, EventDeleted}

// Event is one change to the registrations, as the store records it in the transaction
// of the change.
type Event struct {
	// ID orders the events: a later commit has a greater id. Ids may skip numbers and are
	// never used twice, not even after the events are purged.
	ID      int64
	Type    EventType
	ThingID string
	// Kind and Vendor describe the Thing after the change, or, when it was deleted, before.
	Kind       string
	VendorName string
	VendorURL  string
	Time       time.Time
	// Document is the Enriched TD of a created Thing, retrieved at Time.
	Document []byte
	// Patch is the RFC 7396 merge patch from the Enriched TD before an update to the one
	// after it, both retrieved at Time (so that it shows what changed, not when each was
	// read), with the Thing's id. It is made when the update is recorded: a patch is
	// mostly far smaller than the TDs, which the log would otherwise keep twice for every
	// update, and no subscriber has to wait for it.
	Patch []byte

	// idData is {"id": ThingID}, set when the event delivery shares the Event among its
	// subscribers, so that it is encoded once.
	idData []byte
}

// EventLog bounds the events a store holds.
type EventLog struct {
	// Purged is the greatest id of the events purged so far, 0 when none was: every event
	// after it is held.
	Purged int64
	// Newest is the id of the newest event, or Purged when no event is held.
	Newest int64
}

// RecordedEvents are the events a store records when t replaces old (nil when no row has
// the id, live or expired) in a Put or Create at now. A Put over a registration that
// expired but was not yet purged is the end of one Thing and the start of another. The
// error is that of a stored document that is not a JSON object.
func RecordedEvents(old *Thing, t Thing, now time.Time) ([]Event, error) {
	switch {
	case old == nil:
		return []Event{createdEvent(t, now)}, nil
	case !old.LiveAt(now):
		return []Event{DeletedEvent(*old, now), createdEvent(t, now)}, nil
	default:
		e, err := updatedEvent(*old, t, now)
		return []Event{e}, err
	}
}

// UpdateEvents are the events a store records when an Update stores next over current. A
// renewal (the keep-alive) leaves the document and Modified as they are and is not an
// event: it changes no more than when the registration expires, and heartbeats would
// drown the changes.
func UpdateEvents(current, next Thing, now time.Time) ([]Event, error) {
	if next.Modified.Equal(current.Modified) && bytes.Equal(next.Document, current.Document) {
		return nil, nil
	}
	if next.Index == nil {
		next.Index = current.Index
	}
	e, err := updatedEvent(current, next, now)
	return []Event{e}, err
}

// DeletedEvent is the event of deleting t (or purging it); its Index, when set, says what
// kind of Thing it was.
func DeletedEvent(t Thing, now time.Time) Event {
	return withSubject(Event{Type: EventDeleted, ThingID: t.ID, Time: now}, t.Index)
}

func createdEvent(t Thing, now time.Time) Event {
	return withSubject(Event{Type: EventCreated, ThingID: t.ID, Time: now, Document: t.Enriched(now)}, t.Index)
}

func updatedEvent(before, after Thing, now time.Time) (Event, error) {
	ix := after.Index
	if ix == nil {
		ix = before.Index
	}
	patch, err := updatePatch(before, after, now)
	if err != nil {
		return Event{}, fmt.Errorf("the update of thing %q: %w", after.ID, err)
	}
	return withSubject(Event{Type: EventUpdated, ThingID: after.ID, Time: now, Patch: patch}, ix), nil
}

func withSubject(e Event, ix *Index) Event {
	if ix != nil {
		e.Kind, e.VendorName, e.VendorURL = ix.Kind, ix.VendorName, ix.VendorURL
	}
	return e
}

// EventFilter selects the events a subscriber receives.
type EventFilter struct {
	Type EventType // "": every type
	Kind string    // "": every kind
	// Vendor matches the vendor name ignoring case, or the vendor URL exactly, as the
	// search's vendor filter does.
	Vendor string
}

func (f EventFilter) check() error {
	if f.Type != "" && !slices.Contains(EventTypes, f.Type) {
		return ErrUnknownEventType
	}
	if f.Kind != "" && !slices.Contains(Kinds, f.Kind) {
		return invalidf("kind", "unknown kind %q: use one of %s", f.Kind, strings.Join(Kinds, ", "))
	}
	return nil
}

func (f EventFilter) matches(e *Event) bool {
	return (f.Type == "" || f.Type == e.Type) &&
		(f.Kind == "" || f.Kind == e.Kind) &&
		(f.Vendor == "" || strings.EqualFold(f.Vendor, e.VendorName) || f.Vendor == e.VendorURL)
}

var (
	// ErrUnknownEventType names an event type WoT Discovery does not define.
	ErrUnknownEventType = errors.New("unknown event type: use thing_created, thing_updated or thing_deleted")
	// ErrEventsGone means the events after the one a subscriber saw last are no longer
	// held (they were purged), or that id was never given out by this directory.
	ErrEventsGone = errors.New("the events after this id are not held")
	// ErrTooSlow ends a subscription whose consumer fell too far behind: it may subscribe
	// again from the last event it received and lose nothing.
	ErrTooSlow = errors.New("the subscriber fell too far behind the events")
	// ErrEventsStopped means the directory is not delivering events (shutting down, or not
	// started).
	ErrEventsStopped = errors.New("the directory is not delivering events")
	// ErrTooManySubscribers refuses a subscription beyond the configured maximum.
	ErrTooManySubscribers = errors.New("too many event subscribers")
)
