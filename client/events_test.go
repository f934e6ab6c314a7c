package client

import (
	"bufio"
	"context"
	"errors"
	"io"
	"iter"
	"log"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

// startStream answers with an event stream and sends each chunk in a write of its own, so
// that line ends fall across reads.
func startStream(w http.ResponseWriter, chunks ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send(w, chunks...)
}

func send(w http.ResponseWriter, chunks ...string) {
	for _, chunk := range chunks {
		_, _ = io.WriteString(w, chunk)
		w.(http.Flusher).Flush()
	}
}

// holdOpen keeps a stream open until the client goes away, as the directory does between
// events; without it the client would reconnect.
func holdOpen(r *http.Request) { <-r.Context().Done() }

// take returns the first n events of seq and breaks out of it, failing at an error.
func take(t *testing.T, seq iter.Seq2[Event, error], n int) []Event {
	t.Helper()
	var events []Event
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("after %d events: %v", len(events), err)
		}
		if events = append(events, ev); len(events) == n {
			break
		}
	}
	if len(events) != n {
		t.Fatalf("the events ended after %d, want %d", len(events), n)
	}
	return events
}

// finalError runs seq to its end, which must come with an error and no event.
func finalError(t *testing.T, seq iter.Seq2[Event, error]) error {
	t.Helper()
	var errs []error
	for ev, err := range seq {
		if err == nil {
			t.Errorf("unexpected event %+v", ev)
			continue
		}
		errs = append(errs, err)
	}
	if len(errs) != 1 {
		t.Fatalf("errors %v, want one", errs)
	}
	return errs[0]
}

func timeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// eventStream has every construct of the format the parser must cope with.
var eventStream = []string{
	": connected, keep-alives follow\n",
	// Data across lines, the second with two spaces of which only one belongs to the syntax.
	"event: thing_created\nid: 7\ndata: {\"id\":\"urn:a\",\ndata:  \"title\":\"A\"}\n\n",
	// CRLF, with a CR and its LF in different writes.
	"event: thing_updated\r\nid: 8\r\ndata: {\"id\":\"urn:b\"}\r", "\n\r\n",
	// CR alone, and a comment inside the event.
	"event: thing_deleted\rid: 9\r: keep-alive\rdata: {\"id\":\"urn:c\"}\r\r",
	// No id, no space after the colon; unknown and wrongly cased fields are ignored.
	"event: thing_updated\nvendor: Acme\nData: {}\ndata:{\"id\":\"urn:d\"}\n\n",
	// A field without a colon is a field with an empty value: here an empty data line.
	"id: 10\nevent: thing_created\ndata: {\"id\":\"urn:e\",\ndata\ndata: \"n\":1}\n\n",
	// Without data there is no event, and without an event field no type.
	"id: 11\nevent: thing_deleted\n\n",
	"id: 12\ndata: {\"id\":\"urn:f\"}\n\n",
}

var wantEvents = []Event{
	{ID: "7", Type: ThingCreated, ThingID: "urn:a", Data: []byte("{\"id\":\"urn:a\",\n \"title\":\"A\"}")},
	{ID: "8", Type: ThingUpdated, ThingID: "urn:b", Data: []byte(`{"id":"urn:b"}`)},
	{ID: "9", Type: ThingDeleted, ThingID: "urn:c", Data: []byte(`{"id":"urn:c"}`)},
	{Type: ThingUpdated, ThingID: "urn:d", Data: []byte(`{"id":"urn:d"}`)},
	{ID: "10", Type: ThingCreated, ThingID: "urn:e", Data: []byte("{\"id\":\"urn:e\",\n\n\"n\":1}")},
	{ID: "12", ThingID: "urn:f", Data: []byte(`{"id":"urn:f"}`)},
}

func TestEventsParsing(t *testing.T) {
	c := newDirectory(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w, eventStream...)
		holdOpen(r)
	})
	got := take(t, c.Events(timeout(t), EventsQuery{}), len(wantEvents))
	if !reflect.DeepEqual(got, wantEvents) {
		t.Errorf("events\n got %q\nwant %q", got, wantEvents)
	}
}

// The parser must not depend on how the stream is cut into reads.
func TestEventReaderAcrossReads(t *testing.T) {
	stream := strings.Join(eventStream, "") + "retry: 2500\n" + "data: {\"id\":\"urn:cut off\"}"
	for name, reader := range map[string]io.Reader{
		"whole":       strings.NewReader(stream),
		"byte a read": iotest.OneByteReader(strings.NewReader(stream)),
		"half a read": iotest.HalfReader(strings.NewReader(stream)),
	} {
		var retry time.Duration
		events := &eventReader{r: bufio.NewReader(reader), retry: &retry, limit: maxEventBytes}
		var got []Event
		var err error
		for {
			var ev Event
			if ev, err = events.next(); err != nil {
				break
			}
			got = append(got, ev)
		}
		if !errors.Is(err, io.EOF) || !reflect.DeepEqual(got, wantEvents) {
			t.Errorf("%s: events\n got %q\nwant %q\nending in %v, want EOF and the cut event left out", name, got, wantEvents, err)
		}
		if retry != 2500*time.Millisecond {
			t.Errorf("%s: retry %v, want 2.5s", name, retry)
		}
	}
}

func TestEventReaderRetry(t *testing.T) {
	for value, want := range map[string]time.Duration{
		"0": 0, "250": 250 * time.Millisecond, "+250": time.Hour, "-1": time.Hour, "1.5": time.Hour,
		"": time.Hour, "99999999999999999999": time.Hour,
	} {
		retry := time.Hour
		events := &eventReader{r: bufio.NewReader(strings.NewReader("retry: " + value + "\n")), retry: &retry, limit: maxEventBytes}
		if _, err := events.next(); !errors.Is(err, io.EOF) || retry != want {
			t.Errorf("retry: %s: reconnection time %v (error %v), want %v", value, retry, err, want)
		}
	}
}

func TestEventReaderSizeLimit(t *testing.T) {
	const limit = 1 << 20
	// An event counts from the end of the one before, comments and field names included:
	// the first is exactly at the limit, the second one byte past it.
	within := ": keep-alive\nid: 1\ndata: {\"id\":\"urn:a\",\"d\":\"" + strings.Repeat("x", limit-44) + "\"}\n\n"
	past := "id: 2\ndata: {\"id\":\"urn:b\",\ndata: \"d\":\"" + strings.Repeat("x", limit-37) + "\"}\n\n"
	var retry time.Duration
	events := &eventReader{r: bufio.NewReader(strings.NewReader(within + past)), retry: &retry, limit: limit}
	if ev, err := events.next(); err != nil || ev.ThingID != "urn:a" {
		t.Fatalf("the event within the limit: %v", err)
	}
	_, err := events.next()
	var bad *badEventError
	if !errors.As(err, &bad) || err.Error() != "events: an event is larger than the client's limit of 1 MiB" {
		t.Errorf("the event past the limit: error %v", err)
	}
}

func TestEventsRequest(t *testing.T) {
	tests := []struct {
		name     string
		query    EventsQuery
		wantURL  string
		wantLast string
	}{
		{name: "all types, live", query: EventsQuery{}, wantURL: "/dir/events"},
		{name: "one type", query: EventsQuery{Types: []EventType{ThingDeleted}}, wantURL: "/dir/events/thing_deleted"},
		{
			name:     "every parameter",
			query:    EventsQuery{Types: []EventType{ThingUpdated}, Diff: true, Kind: "tool", Vendor: "Acme & Co", LastEventID: "41"},
			wantURL:  "/dir/events/thing_updated?diff=true&kind=tool&vendor=Acme+%26+Co",
			wantLast: "41",
		},
		{name: "a type to escape", query: EventsQuery{Types: []EventType{"thing/moved?"}}, wantURL: "/dir/events/thing%2Fmoved%3F"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newDirectory(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.RequestURI() != tt.wantURL {
					t.Errorf("request %s, want %s", r.URL.RequestURI(), tt.wantURL)
				}
				if last, sent := r.Header["Last-Event-Id"]; tt.wantLast == "" && sent || tt.wantLast != "" && (len(last) != 1 || last[0] != tt.wantLast) {
					t.Errorf("Last-Event-ID %q, want %q", last, tt.wantLast)
				}
				if accept := r.Header.Get("Accept"); accept != "text/event-stream" {
					t.Errorf("Accept %q", accept)
				}
				// The event given as LastEventID comes again, as from a directory that
				// replays from it inclusively; it must not be yielded.
				startStream(w, "event: thing_updated\nid: 41\ndata: {\"id\":\"urn:old\"}\n\n",
					"event: thing_updated\nid: 42\ndata: {\"id\":\"urn:new\"}\n\n")
				holdOpen(r)
			})
			want := "41"
			if tt.wantLast != "" {
				want = "42"
			}
			if got := take(t, c.Events(timeout(t), tt.query), 1); got[0].ID != want {
				t.Errorf("first event %q, want %s", got[0].ID, want)
			}
		})
	}
}

func TestEventsRejectsUnservableQueries(t *testing.T) {
	c := newDirectory(t, func(_ http.ResponseWriter, r *http.Request) {
		t.Errorf("request %s sent for a query the client should refuse", r.URL)
	})
	for _, q := range []EventsQuery{
		{Types: []EventType{ThingCreated, ThingDeleted}},
		{Types: []EventType{""}},
		{LastEventID: "4\n2"},
	} {
		if err := finalError(t, c.Events(timeout(t), q)); !strings.HasPrefix(err.Error(), "events: ") {
			t.Errorf("query %+v: error %v", q, err)
		}
	}
}

// server counts its requests and answers each with the handler of its number, from 0; past
// the last handler it holds the stream open.
type server struct {
	mu       sync.Mutex
	requests []*http.Request
	times    []time.Time
}

func (s *server) directory(t *testing.T, handlers ...http.HandlerFunc) *Client {
	return newDirectory(t, func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, r)
		s.times = append(s.times, time.Now())
		s.mu.Unlock()
		if n < len(handlers) {
			handlers[n](w, r)
			return
		}
		startStream(w)
		holdOpen(r)
	})
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *server) lastEventIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for _, r := range s.requests {
		ids = append(ids, r.Header.Get("Last-Event-ID"))
	}
	return ids
}

// gaps are the times between the server's requests.
func (s *server) gaps() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var gaps []time.Duration
	for i := 1; i < len(s.times); i++ {
		gaps = append(gaps, s.times[i].Sub(s.times[i-1]))
	}
	return gaps
}

func ids(events []Event) string {
	var ids []string
	for _, ev := range events {
		ids = append(ids, ev.ID+"="+ev.ThingID)
	}
	return strings.Join(ids, " ")
}

func TestEventsReconnect(t *testing.T) {
	var s server
	c := s.directory(t,
		func(w http.ResponseWriter, _ *http.Request) {
			// A slow consumer cut off by the directory, in the middle of event 10.
			startStream(w,
				"event: thing_created\nid: 8\ndata: {\"id\":\"urn:a\"}\n\n",
				"event: thing_created\nid: 9\ndata: {\"id\":\"urn:b\"}\n\n",
				"event: thing_updated\nid: 10\ndata: {\"id\":")
		},
		func(w http.ResponseWriter, r *http.Request) {
			// One event too many replayed; ids past 9 compare as numbers, not strings.
			startStream(w,
				"event: thing_created\nid: 9\ndata: {\"id\":\"urn:b\"}\n\n",
				"event: thing_updated\nid: 10\ndata: {\"id\":\"urn:a\"}\n\n",
				"event: thing_deleted\nid: 11\ndata: {\"id\":\"urn:b\"}\n\n")
			holdOpen(r)
		})
	got := take(t, withRetry(c, 50*time.Millisecond).Events(timeout(t), EventsQuery{}), 4)
	if ids(got) != "8=urn:a 9=urn:b 10=urn:a 11=urn:b" {
		t.Errorf("events %s, want each of 8 to 11 once and in order", ids(got))
	}
	if last := s.lastEventIDs(); !reflect.DeepEqual(last, []string{"", "9"}) {
		t.Errorf("Last-Event-ID of each request %q, want none, then 9", last)
	}
	if gaps := s.gaps(); len(gaps) != 1 || gaps[0] < 50*time.Millisecond {
		t.Errorf("reconnected after %v, want the reconnection time of 50ms", gaps)
	}
}

// The server's reconnection time replaces the client's, here one that would time the test out.
func TestEventsHonorsRetry(t *testing.T) {
	var s server
	c := s.directory(t,
		func(w http.ResponseWriter, _ *http.Request) {
			startStream(w, "retry: 40\nevent: thing_created\nid: 1\ndata: {\"id\":\"urn:a\"}\n\n")
		},
		func(w http.ResponseWriter, r *http.Request) {
			startStream(w, "event: thing_created\nid: 2\ndata: {\"id\":\"urn:b\"}\n\n")
			holdOpen(r)
		})
	got := take(t, withRetry(c, time.Hour).Events(timeout(t), EventsQuery{}), 2)
	if ids(got) != "1=urn:a 2=urn:b" {
		t.Errorf("events %s", ids(got))
	}
	if gaps := s.gaps(); gaps[0] < 40*time.Millisecond {
		t.Errorf("reconnected after %v, want at least the server's 40ms", gaps[0])
	}
}

func TestEventsBackoff(t *testing.T) {
	unavailable := func(w http.ResponseWriter, _ *http.Request) {
		writeProblem(w, http.StatusServiceUnavailable, `{"title":"Service Unavailable","status":503,"detail":"the store is down"}`)
	}
	var s server
	c := s.directory(t, unavailable, unavailable,
		func(w http.ResponseWriter, _ *http.Request) {
			startStream(w, "event: thing_created\nid: 1\ndata: {\"id\":\"urn:a\"}\n\n")
		},
		unavailable,
		func(w http.ResponseWriter, r *http.Request) {
			startStream(w, "event: thing_created\nid: 2\ndata: {\"id\":\"urn:b\"}\n\n")
			holdOpen(r)
		})
	const retry = 100 * time.Millisecond
	got := take(t, withRetry(c, retry).Events(timeout(t), EventsQuery{}), 2)
	if ids(got) != "1=urn:a 2=urn:b" {
		t.Errorf("events %s", ids(got))
	}
	gaps := s.gaps()
	if len(gaps) != 4 {
		t.Fatalf("%d requests, want 5", len(gaps)+1)
	}
	// Doubling per failure, and from the start again once a stream was accepted (without
	// that, the gaps after it would be 4 and 8 times the reconnection time).
	for i, want := range []time.Duration{retry, 2 * retry, retry, 2 * retry} {
		if gaps[i] < want || i >= 2 && gaps[i] >= 2*want {
			t.Errorf("gap %d: %v, want %v", i, gaps[i], want)
		}
	}
}

func TestBackoff(t *testing.T) {
	for _, tt := range []struct {
		retry    time.Duration
		failures int
		want     time.Duration
	}{
		{time.Second, 0, time.Second},
		{time.Second, 1, 2 * time.Second},
		{time.Second, 4, 16 * time.Second},
		{time.Second, 5, 30 * time.Second},
		{time.Second, 1000, 30 * time.Second},
		{0, 0, time.Millisecond},
		{0, 3, 8 * time.Millisecond},
		{time.Minute, 0, time.Minute},
		{time.Minute, 3, time.Minute},
	} {
		if got := backoff(tt.retry, tt.failures); got != tt.want {
			t.Errorf("backoff(%v, %d) = %v, want %v", tt.retry, tt.failures, got, tt.want)
		}
	}
}

func TestEventsExpired(t *testing.T) {
	var s server
	c := s.directory(t, func(w http.ResponseWriter, _ *http.Request) {
		writeProblem(w, http.StatusGone, `{"type":"urn:lmosdir:problem:events-expired","title":"Gone","status":410,"detail":"events after 3 are no longer held"}`)
	})
	err := finalError(t, withRetry(c, time.Millisecond).Events(timeout(t), EventsQuery{LastEventID: "3"}))
	var problem *ProblemError
	if !errors.Is(err, ErrEventsExpired) || !errors.As(err, &problem) || problem.Status != http.StatusGone {
		t.Errorf("error %v, want ErrEventsExpired and the problem", err)
	}
	if want := "the directory no longer holds the events after the last one seen (Last-Event-ID 3): 410 Gone: events after 3 are no longer held"; err.Error() != want {
		t.Errorf("error\n got %s\nwant %s", err, want)
	}
	if s.count() != 1 {
		t.Errorf("%d requests, want no reconnection", s.count())
	}
}

func TestEventsClientErrors(t *testing.T) {
	for _, tt := range []struct {
		status int
		body   string
	}{
		{http.StatusNotFound, `{"type":"about:blank","title":"Not Found","status":404,"detail":"no event type \"thing_moved\""}`},
		{http.StatusBadRequest, `{"type":"urn:lmosdir:problem:bad-request","title":"Bad Request","status":400,"detail":"diff must be true or false"}`},
	} {
		var s server
		c := s.directory(t, func(w http.ResponseWriter, _ *http.Request) { writeProblem(w, tt.status, tt.body) })
		err := finalError(t, withRetry(c, time.Millisecond).Events(timeout(t), EventsQuery{}))
		var problem *ProblemError
		if !errors.As(err, &problem) || problem.Status != tt.status || problem.Detail == "" || errors.Is(err, ErrEventsExpired) {
			t.Errorf("%d: error %v, want the problem", tt.status, err)
		}
		if s.count() != 1 {
			t.Errorf("%d: %d requests, want no reconnection", tt.status, s.count())
		}
	}
}

// A stream the client cannot read would break again on every reconnection.
func TestEventsBrokenStreams(t *testing.T) {
	for _, tt := range []struct {
		name   string
		answer http.HandlerFunc
		want   string
	}{{
		name:   "not an event stream",
		answer: func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, `{"id":"urn:a"}`) },
		want:   `the answer is "application/json", not an event stream`,
	}, {
		name:   "no content",
		answer: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) },
		want:   "204 No Content",
	}, {
		name:   "data not JSON",
		answer: func(w http.ResponseWriter, _ *http.Request) { startStream(w, "id: 1\ndata: urn:a\n\n") },
		want:   `events: event "1": the data is not a JSON object: urn:a`,
	}, {
		name:   "no thing id",
		answer: func(w http.ResponseWriter, _ *http.Request) { startStream(w, "id: 1\ndata: {\"id\":7}\n\n") },
		want:   `events: event "1": the data has no string "id" of a Thing`,
	}, {
		name: "id unfit for a header",
		answer: func(w http.ResponseWriter, _ *http.Request) {
			startStream(w, "id: 1\x002\ndata: {\"id\":\"urn:a\"}\n\n")
		},
		want: `events: event id "1\x002" holds control characters`,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			var s server
			c := s.directory(t, tt.answer)
			if err := finalError(t, withRetry(c, time.Millisecond).Events(timeout(t), EventsQuery{})); !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %s", err, tt.want)
			}
			if s.count() != 1 {
				t.Errorf("%d requests, want no reconnection", s.count())
			}
		})
	}
}

func TestEventsReconnectsAfterServerErrors(t *testing.T) {
	var s server
	c := s.directory(t,
		func(w http.ResponseWriter, _ *http.Request) {
			writeProblem(w, http.StatusServiceUnavailable, `{"title":"Service Unavailable","status":503}`)
		},
		func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, "<html>proxy error</html>")
		},
		func(w http.ResponseWriter, _ *http.Request) {
			// The connection breaks without an answer.
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		},
		func(w http.ResponseWriter, r *http.Request) {
			startStream(w, "event: thing_created\nid: 1\ndata: {\"id\":\"urn:a\"}\n\n")
			holdOpen(r)
		})
	got := take(t, withRetry(c, time.Millisecond).Events(timeout(t), EventsQuery{}), 1)
	if ids(got) != "1=urn:a" || s.count() != 4 {
		t.Errorf("events %s after %d requests, want 1=urn:a after 4", ids(got), s.count())
	}
}

func TestEventsBreakClosesTheConnection(t *testing.T) {
	closed := make(chan struct{})
	c := newDirectory(t, func(w http.ResponseWriter, r *http.Request) {
		startStream(w, "event: thing_created\nid: 1\ndata: {\"id\":\"urn:a\"}\n\n")
		holdOpen(r)
		close(closed)
	})
	take(t, c.Events(timeout(t), EventsQuery{}), 1)
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the server still streams after the loop ended")
	}
}

func TestEventsEndWithTheContext(t *testing.T) {
	t.Run("streaming", func(t *testing.T) {
		c := newDirectory(t, func(w http.ResponseWriter, r *http.Request) {
			startStream(w, "event: thing_created\nid: 1\ndata: {\"id\":\"urn:a\"}\n\n")
			holdOpen(r)
		})
		ctx, cancel := context.WithCancel(timeout(t))
		defer cancel()
		var n int
		for _, err := range c.Events(ctx, EventsQuery{}) {
			if err != nil {
				t.Fatalf("error %v at the end of the context", err)
			}
			n++
			cancel()
		}
		if n != 1 {
			t.Errorf("%d events, want 1", n)
		}
	})
	t.Run("waiting to reconnect", func(t *testing.T) {
		var s server
		c := s.directory(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
		ctx, cancel := context.WithCancel(timeout(t))
		defer cancel()
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		for ev, err := range withRetry(c, time.Hour).Events(ctx, EventsQuery{}) {
			t.Errorf("event %+v, error %v", ev, err)
		}
		if elapsed := time.Since(start); elapsed > 5*time.Second || s.count() != 1 {
			t.Errorf("ended %v after the start and %d requests, want at once after 1", elapsed, s.count())
		}
	})
}

// The Timeout of the caller's http.Client bounds the wait for an answer, not the stream.
func TestEventsWithClientTimeout(t *testing.T) {
	const limit = 200 * time.Millisecond
	var s server
	c := s.directory(t,
		func(_ http.ResponseWriter, r *http.Request) { holdOpen(r) },
		func(w http.ResponseWriter, r *http.Request) {
			startStream(w, "event: thing_created\nid: 1\ndata: {\"id\":\"urn:a\"}\n\n")
			time.Sleep(2 * limit)
			send(w, "event: thing_created\nid: 2\ndata: {\"id\":\"urn:b\"}\n\n")
			holdOpen(r)
		})
	c.http = &http.Client{Timeout: limit}
	got := take(t, withRetry(c, time.Millisecond).Events(timeout(t), EventsQuery{}), 2)
	if ids(got) != "1=urn:a 2=urn:b" || s.count() != 2 {
		t.Errorf("events %s after %d requests, want 1=urn:a 2=urn:b after a silent one and a stream", ids(got), s.count())
	}
}

func TestEventsUntrustedCertificate(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		t.Errorf("request %s over a connection the client should refuse", r.URL)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := finalError(t, withRetry(c, time.Millisecond).Events(timeout(t), EventsQuery{})); !strings.Contains(err.Error(), "certificate") {
		t.Errorf("error %v, want one about the certificate", err)
	}
}

func TestAfter(t *testing.T) {
	for _, tt := range []struct {
		id, last string
		want     bool
	}{
		{"1", "", true},
		{"10", "9", true},
		{"9", "10", false},
		{"10", "10", false},
		{"b", "a", true},
		{"a", "b", true},
		{"a", "a", false},
		{"10", "a", true},
	} {
		if got := after(tt.id, tt.last); got != tt.want {
			t.Errorf("after(%q, %q) = %v, want %v", tt.id, tt.last, got, tt.want)
		}
	}
}

// withRetry is c with a first reconnection delay of d.
func withRetry(c *Client, d time.Duration) *Client {
	with := *c
	with.eventsRetry = d
	return &with
}
