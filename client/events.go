package client

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// EventType is what happened to a registration, as the directory names its event streams.
type EventType string

// The event types of the W3C WoT Discovery notification API.
const (
	ThingCreated EventType = "thing_created"
	ThingUpdated EventType = "thing_updated"
	ThingDeleted EventType = "thing_deleted"
)

// Event is one change to the directory's registrations.
type Event struct {
	// ID orders the events of a directory; it is "" for an event the server gave no id.
	ID string
	// Type is "" for an event the server sent without an event field.
	Type EventType
	// ThingID is the id of the Thing Description that changed: the "id" member of Data.
	ThingID string
	// Data is the event's JSON object: {"id":…} alone, or with EventsQuery.Diff the whole TD
	// of a created Thing and the RFC 7396 merge patch of an updated one.
	Data json.RawMessage
}

// EventsQuery selects the events of Client.Events.
type EventsQuery struct {
	// Types is empty for events of all types, or holds one: the directory streams each type
	// on its own or all together, no other combination.
	Types []EventType
	// Diff asks for the TDs and merge patches in Event.Data instead of ids alone.
	Diff bool
	// Kind and Vendor keep to the Things of one kind (agent, tool, …) or one vendor.
	Kind, Vendor string
	// LastEventID resumes after the event of this id, typically the ID of the last Event an
	// earlier subscription yielded; "" starts with the events that happen from now on.
	LastEventID string
}

// ErrEventsExpired ends Client.Events when the directory no longer holds the events after
// the last one seen: some were lost, so a caller that mirrors the directory has to read it
// again (Search) before it subscribes anew.
var ErrEventsExpired = errors.New("the directory no longer holds the events after the last one seen")

const (
	// maxEventBytes bounds one event, so that a broken stream cannot exhaust the caller's
	// memory; an event may hold a whole TD, which the directory stores up to a few MiB.
	maxEventBytes = 16 << 20
	// defaultRetry is the reconnection delay until the server sends its own, as browsers do.
	defaultRetry = time.Second
	// maxRetry bounds the growing delay while the directory stays unreachable, so that a
	// subscriber notices soon once it is back.
	maxRetry = 30 * time.Second
)

// errStopped ends a subscription whose consumer broke out of its loop.
var errStopped = errors.New("the consumer stopped reading events")

// Events streams the events q selects from the directory's Server-Sent Events API until ctx
// ends, the loop over it breaks, or an error that reconnecting cannot mend: a 4xx answer
// (a *ProblemError, wrapped with ErrEventsExpired for 410 Gone), a malformed event, an event
// larger than 16 MiB, or a certificate the client does not trust. That error comes last, with
// a zero Event; the end of ctx is no error.
//
// After a network error, the end of the stream or a 5xx answer, Events reconnects with the
// id of the last event it yielded as Last-Event-ID, so the directory sends what was missed.
// It waits the reconnection time the server set (1s until it does) before reconnecting,
// doubled after every failed attempt up to 30s. Each event comes once and in order: events
// the directory sends again are left out.
//
// The stream is sent by a copy of the client's http.Client without its Timeout, which limits
// a whole exchange and would cut every stream after that long; the Timeout bounds the wait
// for the header of each answer instead.
func (c *Client) Events(ctx context.Context, q EventsQuery) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		s, err := c.subscribe(q)
		if err != nil {
			yield(Event{}, err)
			return
		}
		if err := s.run(ctx, yield); err != nil && ctx.Err() == nil {
			yield(Event{}, err)
		}
	}
}

// subscription is the state of one loop over Client.Events, carried across connections.
type subscription struct {
	http          *http.Client
	headerTimeout time.Duration
	target        string
	// last is the id of the last event yielded, or EventsQuery.LastEventID before the first:
	// it is sent as Last-Event-ID, and events up to it are not yielded again.
	last  string
	retry time.Duration
	// maxProblemBytes bounds the body of an error answer, as for the client's other requests.
	maxProblemBytes int
}

func (c *Client) subscribe(q EventsQuery) (*subscription, error) {
	target := c.base + "/events"
	switch len(q.Types) {
	case 0:
	case 1:
		if q.Types[0] == "" {
			return nil, errors.New("events: an empty event type; leave EventsQuery.Types empty for all types")
		}
		target += "/" + url.PathEscape(string(q.Types[0]))
	default:
		return nil, fmt.Errorf("events: %d types asked for, but the directory streams one type or all; subscribe to all and filter by Event.Type", len(q.Types))
	}
	v := url.Values{}
	if q.Diff {
		v.Set("diff", "true")
	}
	if q.Kind != "" {
		v.Set("kind", q.Kind)
	}
	if q.Vendor != "" {
		v.Set("vendor", q.Vendor)
	}
	if len(v) > 0 {
		target += "?" + v.Encode()
	}
	if !sendable(q.LastEventID) {
		return nil, fmt.Errorf("events: LastEventID %q holds control characters, which a header cannot carry", q.LastEventID)
	}
	hc := *c.http
	hc.Timeout = 0
	return &subscription{
		http: &hc, headerTimeout: c.http.Timeout, target: target, last: q.LastEventID,
		retry: cmp.Or(c.eventsRetry, defaultRetry), maxProblemBytes: c.maxResponseBytes,
	}, nil
}

// run connects again and again until an error that reconnecting cannot mend.
func (s *subscription) run(ctx context.Context, yield func(Event, error) bool) error {
	failures := 0
	for {
		accepted, err := s.stream(ctx, yield)
		if errors.Is(err, errStopped) {
			return nil
		}
		if err != nil {
			return err
		}
		if accepted {
			failures = 0
		}
		timer := time.NewTimer(backoff(s.retry, failures))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		failures++
	}
}

// backoff is the wait before connecting again after failures attempts in a row that the
// directory did not accept: the reconnection time, doubled per failure up to maxRetry, or up
// to the reconnection time itself when the server asked for more.
func backoff(retry time.Duration, failures int) time.Duration {
	limit := max(retry, maxRetry)
	// A server's "retry: 0" must not make a subscriber hammer a directory that is down.
	d := max(retry, time.Millisecond)
	for range failures {
		if d >= limit {
			break
		}
		d *= 2
	}
	return min(d, limit)
}

// stream makes one connection and yields its events. It reports whether the directory
// accepted the connection, and returns nil when the subscription should connect again: the
// causes (a network error, the end of the stream, a 5xx answer) are all passing, and the
// caller of Events cannot act on them.
func (s *subscription) stream(ctx context.Context, yield func(Event, error) bool) (accepted bool, err error) {
	// Canceling ends the connection even when the transport is blocked reading the stream.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.target, http.NoBody)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	if s.last != "" {
		req.Header.Set("Last-Event-ID", s.last)
	}
	var timer *time.Timer
	if s.headerTimeout > 0 {
		timer = time.AfterFunc(s.headerTimeout, cancel)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		// No retry makes an untrusted certificate trusted; waiting would only hide the cause.
		if errors.As(err, new(*tls.CertificateVerificationError)) {
			return false, err
		}
		return false, nil
	}
	defer resp.Body.Close()
	if timer != nil && !timer.Stop() {
		// The answer came as the timer canceled the request; its body is unreadable.
		return false, nil
	}

	switch {
	case resp.StatusCode >= 500:
		return false, nil
	case resp.StatusCode != http.StatusOK:
		// A cut or broken error body still tells what went wrong; readProblem copes with it.
		body, _ := readLimited(resp.Body, s.maxProblemBytes)
		problem := readProblem(resp, body)
		if resp.StatusCode == http.StatusGone {
			return false, fmt.Errorf("%w (Last-Event-ID %s): %w", ErrEventsExpired, s.last, problem)
		}
		return false, problem
	}
	if media, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || media != "text/event-stream" {
		return false, fmt.Errorf("GET %s: the answer is %q, not an event stream", req.URL.Redacted(), resp.Header.Get("Content-Type"))
	}

	events := &eventReader{r: bufio.NewReader(resp.Body), retry: &s.retry, limit: maxEventBytes}
	for {
		ev, err := events.next()
		var bad *badEventError
		if errors.As(err, &bad) {
			return true, err
		}
		if err != nil {
			// An event the stream broke off in is lost here; the directory sends it again.
			return true, nil
		}
		if ev.ID != "" && !after(ev.ID, s.last) {
			continue
		}
		if !yield(ev, nil) {
			return true, errStopped
		}
		if ev.ID != "" {
			s.last = ev.ID
		}
	}
}

// after reports whether event id comes after last. The directory's ids are decimal numbers,
// which string order gets wrong ("10" < "9"); other ids have no known order, so only the same
// id counts as seen.
func after(id, last string) bool {
	if last == "" {
		return true
	}
	n, errID := strconv.ParseUint(id, 10, 64)
	m, errLast := strconv.ParseUint(last, 10, 64)
	if errID == nil && errLast == nil {
		return n > m
	}
	return id != last
}

// sendable reports whether an event id can go back as Last-Event-ID: HTTP header values
// cannot hold control characters, and a request the transport refuses would be retried
// forever.
func sendable(id string) bool {
	return !strings.ContainsFunc(id, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f })
}

// badEventError is a malformed event; the directory would send it again on reconnection.
type badEventError struct{ msg string }

func (e *badEventError) Error() string { return "events: " + e.msg }

// eventReader parses a text/event-stream as the HTML standard's "Server-sent events"
// section describes it.
type eventReader struct {
	r *bufio.Reader
	// retry receives the reconnection time of a "retry" field; nil ignores it.
	retry *time.Duration
	// limit is maxEventBytes but in tests, which need not send megabytes to reach it.
	limit int
	// size counts the bytes since the last blank line, against limit.
	size int
	// afterCR is set when the last line ended in CR, whose LF may follow in the next read: a
	// CRLF ends one line, not two.
	afterCR bool
}

// next returns the next change event of the directory. Its errors are those of reading,
// or *badEventError.
func (r *eventReader) next() (Event, error) {
	raw, err := r.nextRaw()
	if err != nil {
		return Event{}, err
	}
	return decodeEvent(raw.event, raw.data)
}

// rawEvent is an event as the stream wrote it: its type and id, and its data lines joined.
type rawEvent struct {
	event Event // Type and ID only
	data  []byte
}

// nextRaw returns the next event with data.
func (r *eventReader) nextRaw() (rawEvent, error) {
	var (
		ev      Event
		data    []byte
		hasData bool
	)
	for {
		line, err := r.line()
		if err != nil {
			return rawEvent{}, err
		}
		if len(line) == 0 {
			r.size = 0
			if hasData {
				return rawEvent{event: ev, data: data}, nil
			}
			ev = Event{}
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			ev.Type = EventType(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "id":
			ev.ID = string(value)
			if !sendable(ev.ID) {
				return rawEvent{}, &badEventError{fmt.Sprintf("event id %q holds control characters", ev.ID)}
			}
		case "retry":
			// Only digits count; the bit size keeps milliseconds within a time.Duration.
			if ms, err := strconv.ParseUint(string(value), 10, 32); err == nil && r.retry != nil {
				*r.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// line returns the next line without its end, which is LF, CRLF or CR.
func (r *eventReader) line() ([]byte, error) {
	var line []byte
	for {
		if _, err := r.r.Peek(1); err != nil {
			return nil, err
		}
		buf, _ := r.r.Peek(r.r.Buffered())
		if r.afterCR {
			r.afterCR = false
			if buf[0] == '\n' {
				_, _ = r.r.Discard(1)
				continue
			}
		}
		end := bytes.IndexAny(buf, "\r\n")
		n := end
		if end < 0 {
			n = len(buf)
		}
		if r.size += n; r.size > r.limit {
			return nil, &badEventError{fmt.Sprintf("an event is larger than the client's limit of %d MiB", r.limit>>20)}
		}
		line = append(line, buf[:n]...)
		if end < 0 {
			_, _ = r.r.Discard(n)
			continue
		}
		r.afterCR = buf[end] == '\r'
		_, _ = r.r.Discard(end + 1)
		return line, nil
	}
}

// decodeEvent completes ev with its data, which must be a JSON object naming a Thing.
func decodeEvent(ev Event, data []byte) (Event, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil || members == nil {
		return Event{}, &badEventError{fmt.Sprintf("event %q: the data is not a JSON object: %s", ev.ID, truncate(data))}
	}
	if err := json.Unmarshal(members["id"], &ev.ThingID); err != nil || ev.ThingID == "" {
		return Event{}, &badEventError{fmt.Sprintf("event %q: the data has no string \"id\" of a Thing: %s", ev.ID, truncate(data))}
	}
	ev.Data = data
	return ev, nil
}
