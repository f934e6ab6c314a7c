package directory

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// The events reach subscribers in two ways. A hub goroutine follows the store's event log
// (woken by the store: in-process writes, or NOTIFY from any process on PostgreSQL), reads
// each new event once and hands a pointer to every subscriber that is caught up, without
// ever blocking: a subscriber whose buffer is full is dropped (ErrTooSlow) and comes back
// with the last id it received. A subscriber that starts behind (Last-Event-ID) reads the
// log itself until it reaches the hub, then joins it; the ids tell it what it has already
// seen, so there is no gap and no duplicate at the seam.

// Event subscription defaults.
const (
	DefaultEventBuffer    = 256
	DefaultMaxSubscribers = 10000
	DefaultEventRetention = 24 * time.Hour
)

// hubBatch is how many events one read of the log takes, by the hub or by a subscriber
// catching up.
const hubBatch = 256

type eventHub struct {
	store   Store
	buffer  int
	maxSubs int

	wake chan struct{} // one signal: the log may have grown

	mu      sync.Mutex
	running bool
	last    int64 // the greatest id handed to the subscribers
	rewinds int   // how often the log was found to have lost events it had delivered
	subs    map[*Subscription]struct{}
	count   int // subscriptions open, joined or catching up
}

func newEventHub(store Store, buffer, maxSubs int) *eventHub {
	if buffer <= 0 {
		buffer = DefaultEventBuffer
	}
	if maxSubs <= 0 {
		maxSubs = DefaultMaxSubscribers
	}
	return &eventHub{store: store, buffer: buffer, maxSubs: maxSubs, wake: make(chan struct{}, 1), subs: map[*Subscription]struct{}{}}
}

// poke tells the hub to read the log, without ever blocking a writer.
func (h *eventHub) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// RunEvents delivers the events to subscribers until ctx ends; then it ends every
// subscription with ErrEventsStopped. Subscribe fails with ErrEventsStopped until it has
// read where the event log stands, which it retries every second while the store fails.
func (s *Service) RunEvents(ctx context.Context, log *slog.Logger) error {
	h := s.events
	var start EventLog
	for {
		var err error
		if start, err = s.store.EventLog(ctx); err == nil {
			break
		}
		log.Error("reading the event log", "error", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	h.mu.Lock()
	h.last, h.running = start.Newest, true
	h.mu.Unlock()
	defer h.stop()

	watchDone := make(chan error, 1)
	go func() { watchDone <- s.store.WatchEvents(ctx, h.poke) }()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	for {
		select {
		case err := <-watchDone: // the watch ends with ctx
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("watching the event log: %w", err)
		case <-h.wake:
		case <-retry.C:
		}
		if err := h.deliver(ctx, log); err != nil && ctx.Err() == nil {
			log.Error("reading the event log", "error", err)
			retry.Reset(time.Second)
		}
	}
}

// deliver hands every event after the last delivered one to the subscribers. When there
// are none it checks that the log has not lost any of those it delivered.
func (h *eventHub) deliver(ctx context.Context, log *slog.Logger) error {
	for {
		h.mu.Lock()
		after := h.last
		h.mu.Unlock()
		n := 0
		err := h.store.Events(ctx, after, hubBatch, func(e Event) error {
			n++
			e.idData = appendIDObject(nil, e.ThingID)
			h.publish(&e)
			return nil
		})
		switch {
		case err != nil:
			return err
		case n == 0:
			return h.checkRewound(ctx, log)
		case n < hubBatch:
			return nil
		}
	}
}

// checkRewound ends every subscription when the event log's newest id is below the last
// one delivered. The database has then lost events it had recorded (restored from a
// backup, or failed over to a replica that was behind) and will give their ids to new
// events: a subscriber would skip those as already seen. Ended with ErrEventsGone, it
// comes back with its Last-Event-ID, is told that those events are gone, and starts over.
func (h *eventHub) checkRewound(ctx context.Context, log *slog.Logger) error {
	l, err := h.store.EventLog(ctx)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if l.Newest >= h.last {
		return nil
	}
	log.Error("the event log lost events it had delivered; every subscription ends", "delivered", h.last, "newest", l.Newest)
	h.last = l.Newest
	h.rewinds++
	for sub := range h.subs {
		delete(h.subs, sub)
		sub.end(ErrEventsGone)
	}
	return nil
}

func (h *eventHub) publish(e *Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e.ID <= h.last {
		return
	}
	h.last = e.ID
	for sub := range h.subs {
		if e.ID <= sub.joinedAt || !sub.filter.matches(e) {
			continue
		}
		select {
		case sub.live <- e:
		default:
			delete(h.subs, sub)
			sub.end(ErrTooSlow)
		}
	}
}

func (h *eventHub) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.running = false
	for sub := range h.subs {
		delete(h.subs, sub)
		sub.end(ErrEventsStopped)
	}
}

// Subscription delivers the events that match its filter, in id order.
type Subscription struct {
	hub    *eventHub
	filter EventFilter
	// pos is the id of the last event Next considered; only Next's goroutine uses it.
	pos     int64
	pending []Event // read from the log while catching up
	joined  bool

	// Set by the hub under its lock.
	rewinds  int         // the hub's count when the subscription opened
	joinedAt int64       // the hub's last id when the subscription joined
	live     chan *Event // from the hub once joined
	ended    chan struct{}
	endErr   error
	closed   bool
}

// Subscribe opens a subscription to the events after lastEventID, or, when it is nil, to
// the events recorded from now on. ErrEventsGone when the events right after lastEventID
// are no longer held or the id is newer than any this directory gave out.
func (s *Service) Subscribe(ctx context.Context, lastEventID *int64, filter EventFilter) (*Subscription, error) {
	if err := filter.check(); err != nil {
		return nil, err
	}
	log, err := s.store.EventLog(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the event log: %w", err)
	}
	pos := log.Newest
	if lastEventID != nil {
		if *lastEventID < log.Purged || *lastEventID > log.Newest {
			return nil, ErrEventsGone
		}
		pos = *lastEventID
	}
	h := s.events
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case !h.running:
		return nil, ErrEventsStopped
	case h.count >= h.maxSubs:
		return nil, ErrTooManySubscribers
	}
	h.count++
	return &Subscription{hub: h, filter: filter, pos: pos, rewinds: h.rewinds, live: make(chan *Event, h.buffer), ended: make(chan struct{})}, nil
}

// Ended is closed when the subscription can deliver no more: its consumer was too slow,
// or the directory stopped delivering events. A consumer blocked writing to a stalled
// client uses it to give up.
func (sub *Subscription) Ended() <-chan struct{} { return sub.ended }

// end closes the subscription for err; the hub's lock is held.
func (sub *Subscription) end(err error) {
	sub.endErr = err
	close(sub.ended)
}

// Next returns the next matching event, waiting for it until ctx ends. After an error the
// subscription delivers nothing more.
func (sub *Subscription) Next(ctx context.Context) (*Event, error) {
	for {
		for len(sub.pending) > 0 {
			e := &sub.pending[0]
			sub.pending = sub.pending[1:]
			sub.pos = e.ID
			if sub.filter.matches(e) {
				return e, nil
			}
		}
		if !sub.joined {
			if err := sub.catchUp(ctx); err != nil {
				return nil, err
			}
			continue
		}
		select {
		case e := <-sub.live:
			if e.ID > sub.pos {
				sub.pos = e.ID
				return e, nil
			}
		case <-sub.ended:
			// What the hub handed over before it ended the subscription still counts.
			select {
			case e := <-sub.live:
				if e.ID > sub.pos {
					sub.pos = e.ID
					return e, nil
				}
			default:
				return nil, sub.endErr
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// catchUp reads the log after pos, and joins the hub once it has read as far as the hub
// has delivered: from then on the hub has every later event for it.
func (sub *Subscription) catchUp(ctx context.Context) error {
	err := sub.hub.store.Events(ctx, sub.pos, hubBatch, func(e Event) error {
		sub.pending = append(sub.pending, e)
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the event log: %w", err)
	}
	if len(sub.pending) > 0 {
		return nil
	}
	h := sub.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-sub.ended:
		return sub.endErr
	default:
	}
	switch {
	case !h.running:
		sub.end(ErrEventsStopped)
		return ErrEventsStopped
	case sub.rewinds != h.rewinds: // its position may name an event the log lost
		sub.end(ErrEventsGone)
		return ErrEventsGone
	}
	if sub.pos < h.last {
		return nil // the hub went ahead meanwhile: read what it delivered
	}
	sub.joinedAt, sub.joined = sub.pos, true
	h.subs[sub] = struct{}{}
	return nil
}

// Close releases the subscription.
func (sub *Subscription) Close() {
	h := sub.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if sub.closed {
		return
	}
	sub.closed = true
	h.count--
	delete(h.subs, sub)
}

// eventsRunning reports whether RunEvents accepts subscribers.
func (s *Service) eventsRunning() bool {
	h := s.events
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running
}
