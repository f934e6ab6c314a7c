package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// sseMessage is one event of a stream, or one comment line.
type sseMessage struct {
	event, id, data string
	comment         string
	at              time.Time
}

// eventStream is a client of an event stream.
type sseClient struct {
	t      *testing.T
	res    *http.Response
	cancel context.CancelFunc
	msgs   chan sseMessage
	opened time.Time // when the request was sent
}

// subscribe opens path (with query) with the given Last-Event-ID ("" for none) and waits
// for the response headers.
func (f *fixture) subscribe(path, lastEventID string) *sseClient {
	f.t.Helper()
	c := f.openStream(path, lastEventID)
	if c.res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(c.res.Body)
		f.t.Fatalf("GET %s: status %d: %s", path, c.res.StatusCode, body)
	}
	if ct := c.res.Header.Get("Content-Type"); ct != "text/event-stream" {
		f.t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	go c.read()
	return c
}

// openStream sends the request of an event stream; the stream is closed when the test ends.
func (f *fixture) openStream(path, lastEventID string) *sseClient {
	f.t.Helper()
	ctx, cancel := context.WithCancel(f.t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url+path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	sent := time.Now()
	res, err := http.DefaultClient.Do(req) //nolint:bodyclose // c.close closes it when the test ends
	if err != nil {
		f.t.Fatal(err)
	}
	c := &sseClient{t: f.t, res: res, cancel: cancel, msgs: make(chan sseMessage, 4096), opened: sent}
	f.t.Cleanup(c.close)
	return c
}

func (c *sseClient) close() {
	c.cancel()
	c.res.Body.Close()
}

// read parses the stream as the server writes it: fields "event", "id", "data" (joined
// with line feeds) and comment lines.
func (c *sseClient) read() {
	defer close(c.msgs)
	sc := bufio.NewScanner(c.res.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var m sseMessage
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if m.event != "" || data != nil {
				m.data, m.at = strings.Join(data, "\n"), time.Now()
				c.msgs <- m
			}
			m, data = sseMessage{}, nil
		case strings.HasPrefix(line, ":"):
			c.msgs <- sseMessage{comment: line, at: time.Now()}
		default:
			name, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch name {
			case "event":
				m.event = value
			case "id":
				m.id = value
			case "data":
				data = append(data, value)
			}
		}
	}
}

// next returns the next event, skipping comments.
func (c *sseClient) next() sseMessage {
	c.t.Helper()
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				c.t.Fatal("the event stream ended")
			}
			if m.comment == "" {
				return m
			}
		case <-time.After(20 * time.Second):
			c.t.Fatal("no event within 20 s")
		}
	}
}

// none checks that no event arrives within d.
func (c *sseClient) none(d time.Duration) {
	c.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-c.msgs:
			if ok && m.comment == "" {
				c.t.Fatalf("unexpected event %s %s: %s", m.event, m.id, m.data)
			}
		case <-deadline:
			return
		}
	}
}

func (m sseMessage) want(t *testing.T, event, thingID string) sseMessage {
	t.Helper()
	if m.event != event {
		t.Fatalf("event %q (data %s), want %q", m.event, m.data, event)
	}
	var data struct{ ID string }
	if err := json.Unmarshal([]byte(m.data), &data); err != nil || data.ID != thingID {
		t.Fatalf("data %s: want an object with id %q (%v)", m.data, thingID, err)
	}
	if _, err := strconv.ParseInt(m.id, 10, 64); err != nil {
		t.Fatalf("event id %q is not a number", m.id)
	}
	return m
}

func (m sseMessage) idNumber() int64 {
	n, _ := strconv.ParseInt(m.id, 10, 64)
	return n
}

func thingPath(id string) string { return "/things/" + url.PathEscape(id) }

func TestEventsOfEachWrite(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		all := f.subscribe("/events", "")
		deletes := f.subscribe("/events/thing_deleted", "")
		id := "urn:ev:lamp"
		f.put(thingPath(id), minimalTD(id, "Lamp")).want(t, http.StatusCreated)
		created := all.next().want(t, "thing_created", id)
		if created.data != `{"id":"urn:ev:lamp"}` {
			t.Errorf("data without diff = %s, want the id alone", created.data)
		}
		f.do(http.MethodPatch, thingPath(id), "application/merge-patch+json", `{"title":"Lamp 2"}`).want(t, http.StatusNoContent)
		updated := all.next().want(t, "thing_updated", id)
		// The keep-alive is no event; the delete is.
		f.do(http.MethodPatch, thingPath(id), "application/merge-patch+json", `{}`).want(t, http.StatusNoContent)
		f.do(http.MethodDelete, thingPath(id), "", "").want(t, http.StatusNoContent)
		deleted := all.next().want(t, "thing_deleted", id)
		if created.idNumber() >= updated.idNumber() || updated.idNumber() >= deleted.idNumber() {
			t.Errorf("ids %s, %s, %s are not increasing", created.id, updated.id, deleted.id)
		}
		if got := deletes.next().want(t, "thing_deleted", id); got.id != deleted.id {
			t.Errorf("/events/thing_deleted gave id %s, /events %s", got.id, deleted.id)
		}
		all.none(100 * time.Millisecond)

		// Anonymous registrations are events too, with the id the directory gave.
		res := f.do(http.MethodPost, "/things", mediaTD, minimalTD("", "Anonymous")).want(t, http.StatusCreated)
		all.next().want(t, "thing_created", res.header.Get("Location"))
	})
}

func TestEventsDiff(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		s := f.subscribe("/events?diff=true", "")
		id := "urn:ev:diff"
		f.put(thingPath(id), minimalTD(id, "Before")).want(t, http.StatusCreated)
		created := s.next().want(t, "thing_created", id)
		served := f.get(thingPath(id)).want(t, http.StatusOK)
		if !sameIgnoringRetrieved(t, created.data, string(served.body)) {
			t.Errorf("created data\n%s\nis not the Enriched TD\n%s", created.data, served.body)
		}
		f.clock.Advance(time.Second)
		f.do(http.MethodPatch, thingPath(id), "application/merge-patch+json", `{"title":"After","description":"new"}`).want(t, http.StatusNoContent)
		updated := s.next().want(t, "thing_updated", id)
		var patch map[string]any
		if err := json.Unmarshal([]byte(updated.data), &patch); err != nil {
			t.Fatal(err)
		}
		if patch["title"] != "After" || patch["description"] != "new" || patch["@context"] != nil || patch["security"] != nil {
			t.Errorf("merge patch %s: want the changed members (and id) only", updated.data)
		}
		// Applied to what the subscriber had, the patch gives what the directory serves.
		merged, err := jsonpatch.MergePatch([]byte(created.data), []byte(updated.data))
		if err != nil {
			t.Fatal(err)
		}
		served = f.get(thingPath(id)).want(t, http.StatusOK)
		if !sameIgnoringRetrieved(t, string(merged), string(served.body)) {
			t.Errorf("created data patched\n%s\nis not the TD served\n%s", merged, served.body)
		}
		// A member removed by a PUT is null in the patch.
		f.put(thingPath(id), minimalTD(id, "After")).want(t, http.StatusNoContent)
		replaced := s.next().want(t, "thing_updated", id)
		if !strings.Contains(replaced.data, `"description":null`) {
			t.Errorf("patch after removing description: %s", replaced.data)
		}
		f.do(http.MethodDelete, thingPath(id), "", "").want(t, http.StatusNoContent)
		if got := s.next().want(t, "thing_deleted", id); got.data != `{"id":"urn:ev:diff"}` {
			t.Errorf("delete with diff = %s, want the id alone", got.data)
		}
	})
}

// sameIgnoringRetrieved compares two Enriched TDs except for registration.retrieved.
func sameIgnoringRetrieved(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y map[string]any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	for _, m := range []map[string]any{x, y} {
		if reg, ok := m["registration"].(map[string]any); ok {
			delete(reg, "retrieved")
		}
	}
	return reflect.DeepEqual(x, y)
}

func TestEventsLineBreaksInData(t *testing.T) {
	f := newFixture(t, "sqlite")
	s := f.subscribe("/events?diff=true", "")
	id := "urn:ev:lines"
	body := "{\r\n\"@context\": \"https://www.w3.org/2022/wot/td/v1.1\",\n\"id\": \"urn:ev:lines\",\r\"title\": \"Lines\",\n" +
		"\"securityDefinitions\": {\"nosec_sc\": {\"scheme\": \"nosec\"}}, \"security\": \"nosec_sc\"\n}"
	f.put(thingPath(id), body).want(t, http.StatusCreated)
	created := s.next().want(t, "thing_created", id)
	if !json.Valid([]byte(created.data)) || !strings.Contains(created.data, "\n\"id\": \"urn:ev:lines\",\n\"title\"") {
		t.Errorf("a TD with CR, LF and CRLF came through as\n%q", created.data)
	}
}

func TestEventsReplay(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		s := f.subscribe("/events", "")
		for i := range 3 {
			id := fmt.Sprintf("urn:ev:%d", i)
			f.put(thingPath(id), minimalTD(id, "T")).want(t, http.StatusCreated)
		}
		first := s.next()
		second, third := s.next(), s.next()
		s.close()

		// Without Last-Event-ID nothing of the past is sent.
		fresh := f.subscribe("/events", "")
		fresh.none(200 * time.Millisecond)

		replay := f.subscribe("/events", first.id)
		if got := replay.next(); got.id != second.id {
			t.Fatalf("replay starts with %s, want %s", got.id, second.id)
		}
		if got := replay.next(); got.id != third.id {
			t.Fatalf("replay goes on with %s, want %s", got.id, third.id)
		}
		f.put(thingPath("urn:ev:3"), minimalTD("urn:ev:3", "T")).want(t, http.StatusCreated)
		live := replay.next().want(t, "thing_created", "urn:ev:3")
		if got := fresh.next(); got.id != live.id {
			t.Fatalf("the fresh subscriber got %s, the replaying one %s", got.id, live.id)
		}
		replay.none(100 * time.Millisecond)

		// Replaying from the newest id sends only what follows.
		latest := f.subscribe("/events/thing_created", live.id)
		f.put(thingPath("urn:ev:4"), minimalTD("urn:ev:4", "T")).want(t, http.StatusCreated)
		latest.next().want(t, "thing_created", "urn:ev:4")
	})
}

// TestEventsReplayRacesWrites subscribes with Last-Event-ID while writes go on: the seam
// between reading the log and joining the live stream loses and repeats nothing.
func TestEventsReplayRacesWrites(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixtureWith(t, store, fixtureOptions{withoutExpansion: true})
		first := f.subscribe("/events", "")
		f.put(thingPath("urn:ev:start"), minimalTD("urn:ev:start", "T")).want(t, http.StatusCreated)
		start := first.next()
		const writes = 60
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range writes {
				id := fmt.Sprintf("urn:ev:%d", i)
				f.put(thingPath(id), minimalTD(id, "T")).want(t, http.StatusCreated)
			}
		}()
		var subs []*sseClient
		for range 5 {
			time.Sleep(5 * time.Millisecond)
			subs = append(subs, f.subscribe("/events", start.id))
		}
		<-done
		var want []string
		for range writes {
			want = append(want, first.next().id)
		}
		for i, s := range subs {
			for j, id := range want {
				if got := s.next(); got.id != id {
					t.Fatalf("subscriber %d: event %d has id %s, want %s", i, j, got.id, id)
				}
			}
			s.none(50 * time.Millisecond)
		}
	})
}

func TestEventsGone(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		s := f.subscribe("/events", "")
		for i := range 2 {
			id := fmt.Sprintf("urn:ev:%d", i)
			f.put(thingPath(id), minimalTD(id, "T")).want(t, http.StatusCreated)
		}
		first, second := s.next(), s.next()
		// An id this directory never gave out.
		p := f.send(http.MethodGet, "/events", http.Header{"Last-Event-ID": {strconv.FormatInt(second.idNumber()+1000, 10)}}, "").want(t, http.StatusGone).problem(t)
		if p.Type != problemEventsGone {
			t.Errorf("problem type %q", p.Type)
		}
		// Events older than the retention are gone; the newest id is still a place to resume.
		f.clock.Advance(time.Hour)
		if _, err := f.dir.PurgeEvents(t.Context(), time.Minute); err != nil {
			t.Fatal(err)
		}
		f.send(http.MethodGet, "/events", http.Header{"Last-Event-ID": {first.id}}, "").want(t, http.StatusGone).problem(t)
		f.send(http.MethodHead, "/events", http.Header{"Last-Event-ID": {first.id}}, "").want(t, http.StatusGone)
		resumed := f.subscribe("/events", second.id)
		f.put(thingPath("urn:ev:new"), minimalTD("urn:ev:new", "T")).want(t, http.StatusCreated)
		resumed.next().want(t, "thing_created", "urn:ev:new")
	})
}

func TestEventsBadRequests(t *testing.T) {
	f := newFixture(t, "sqlite")
	for _, tc := range []struct {
		path, lastEventID string
		status            int
	}{
		{"/events/thing_moved", "", http.StatusNotFound},
		{"/events/", "", http.StatusNotFound},
		{"/events?diff=yes", "", http.StatusBadRequest},
		{"/events?diff=true&diff=false", "", http.StatusBadRequest},
		{"/events?type=thing_created", "", http.StatusBadRequest},
		{"/events?kind=robot", "", http.StatusBadRequest},
		{"/events", "abc", http.StatusBadRequest},
		{"/events", "-1", http.StatusBadRequest},
	} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			header := http.Header{}
			if tc.lastEventID != "" {
				header.Set("Last-Event-ID", tc.lastEventID)
			}
			r := f.send(method, tc.path, header, "").want(t, tc.status)
			if method == http.MethodGet {
				r.problem(t)
			}
		}
	}
}

func TestEventsHead(t *testing.T) {
	f := newFixture(t, "sqlite")
	done := make(chan response, 1)
	go func() { done <- f.send(http.MethodHead, "/events/thing_created?diff=true", nil, "") }()
	select {
	case r := <-done:
		r.want(t, http.StatusOK)
		if ct := r.header.Get("Content-Type"); ct != "text/event-stream" || len(r.body) != 0 {
			t.Errorf("HEAD: Content-Type %q, body %q", ct, r.body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("HEAD /events did not return")
	}
}

func TestEventsKindAndVendorFilters(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		agents := f.subscribe("/events?kind=agent", "")
		acme := f.subscribe("/events?vendor=acme%20corp", "")
		f.put(thingPath("urn:ev:tool"), lmosTD("urn:ev:tool", "lmos:Tool", "T", "D", "Other", "act", "cap", "https")).want(t, http.StatusCreated)
		f.put(thingPath("urn:ev:agent"), lmosTD("urn:ev:agent", "lmos:Agent", "T", "D", "Acme Corp", "act", "cap", "https")).want(t, http.StatusCreated)
		// Events come in order: had the tool's passed the filters, they would be read here.
		agents.next().want(t, "thing_created", "urn:ev:agent")
		acme.next().want(t, "thing_created", "urn:ev:agent")
		// A delete matches what the Thing was.
		f.do(http.MethodDelete, thingPath("urn:ev:tool"), "", "").want(t, http.StatusNoContent)
		f.do(http.MethodDelete, thingPath("urn:ev:agent"), "", "").want(t, http.StatusNoContent)
		agents.next().want(t, "thing_deleted", "urn:ev:agent")
		acme.next().want(t, "thing_deleted", "urn:ev:agent")
	})
}

func TestEventsExpiryPurge(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		s := f.subscribe("/events/thing_deleted", "")
		td := strings.Replace(lmosTD("urn:ev:brief", "lmos:Agent", "T", "D", "Acme", "act", "cap", "https"), `"title"`, `"registration": {"ttl": 60}, "title"`, 1)
		f.put(thingPath("urn:ev:brief"), td).want(t, http.StatusCreated)
		f.clock.Advance(2 * time.Minute)
		if n, err := f.dir.PurgeExpired(t.Context()); err != nil || n != 1 {
			t.Fatalf("PurgeExpired = %d, %v", n, err)
		}
		s.next().want(t, "thing_deleted", "urn:ev:brief")
	})
}

func TestEventsKeepAlive(t *testing.T) {
	const quiet, interval = 400 * time.Millisecond, 100 * time.Millisecond
	f := newFixture(t, "sqlite", func(c *Config) { c.EventQuiet, c.EventKeepAlive = quiet, interval })
	s := f.subscribe("/events", "")
	var comments []time.Time
	for len(comments) < 3 {
		select {
		case m := <-s.msgs:
			if m.comment == "" {
				t.Fatalf("unexpected event %+v", m)
			}
			comments = append(comments, m.at)
		case <-time.After(10 * time.Second):
			t.Fatal("no keep-alive comment within 10 s")
		}
	}
	if first := comments[0].Sub(s.opened); first < quiet {
		t.Errorf("first keep-alive %v after the stream opened, want none in the first %v", first, quiet)
	}
	for i := 1; i < len(comments); i++ {
		if gap := comments[i].Sub(comments[i-1]); gap < interval/2 {
			t.Errorf("keep-alives %v apart, want about %v", gap, interval)
		}
	}
}

// TestEventsStalledClientIsDropped: a client that stops reading is disconnected once its
// buffer overflows, while another keeps receiving every event.
func TestEventsStalledClientIsDropped(t *testing.T) {
	f := newFixtureWith(t, "sqlite", fixtureOptions{withoutExpansion: true, eventBuffer: 4})
	fast := f.subscribe("/events?diff=true", "")
	stalled := rawSubscribe(t, f.url, "/events?diff=true")
	// Large TDs fill the stalled connection's socket buffers quickly.
	padding := strings.Repeat("x", 64<<10)
	const writes = 200
	var ids []string
	for i := range writes {
		id := fmt.Sprintf("urn:ev:%d", i)
		td := strings.Replace(minimalTD(id, "T"), `"title"`, `"description": "`+padding+`", "title"`, 1)
		f.put(thingPath(id), td).want(t, http.StatusCreated)
		ids = append(ids, id)
	}
	for _, id := range ids {
		fast.next().want(t, "thing_created", id)
	}
	// The server closed the stalled connection: reading it now reaches its end.
	if err := stalled.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, stalled)
	if err != nil {
		t.Fatalf("the stalled connection is still open after %d bytes: %v", n, err)
	}
	if n >= int64(writes*len(padding)) {
		t.Fatalf("the stalled client got all %d bytes; it was not dropped", n)
	}
}

// rawSubscribe sends a subscription request on a TCP connection that the test then does
// not read.
func rawSubscribe(t *testing.T, base, path string) net.Conn {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := new(net.Dialer).DialContext(t.Context(), "tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if tcp, ok := conn.(*net.TCPConn); ok {
		if err := tcp.SetReadBuffer(64 << 10); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, u.Host); err != nil {
		t.Fatal(err)
	}
	// The headers arrive before any event: the stream is open.
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, " 200 ") {
		t.Fatalf("subscription answered %q, %v", status, err)
	}
	return conn
}

// TestEventsSubscriptionsAreReleased: a client that goes away frees its place, which the
// limit on subscribers shows.
func TestEventsSubscriptionsAreReleased(t *testing.T) {
	f := newFixtureWith(t, "sqlite", fixtureOptions{maxSubscribers: 1})
	first := f.subscribe("/events", "")
	f.get("/events").want(t, http.StatusServiceUnavailable).problem(t)
	first.close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := f.openStream("/events", "")
		if c.res.StatusCode == http.StatusOK {
			return
		}
		c.close()
		if time.Now().After(deadline) {
			t.Fatalf("the place of a closed subscription was not released within 10 s: %d", c.res.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestEventsThousandSubscribers(t *testing.T) {
	const subscribers = 1000
	f := newFixtureWith(t, "sqlite", fixtureOptions{withoutExpansion: true})
	host := strings.TrimPrefix(f.url, "http://")
	conns := make([]*bufio.Reader, subscribers)
	for i := range conns {
		conn, err := new(net.Dialer).DialContext(t.Context(), "tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if err := conn.SetReadDeadline(time.Now().Add(2 * time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Fprintf(conn, "GET /events HTTP/1.1\r\nHost: %s\r\n\r\n", host); err != nil {
			t.Fatal(err)
		}
		conns[i] = bufio.NewReader(conn)
		if status, err := conns[i].ReadString('\n'); err != nil || !strings.Contains(status, " 200 ") {
			t.Fatalf("subscriber %d: %q, %v", i, status, err)
		}
	}
	f.put(thingPath("urn:ev:all"), minimalTD("urn:ev:all", "T")).want(t, http.StatusCreated)
	var wg sync.WaitGroup
	errs := make(chan error, subscribers)
	for i, r := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					errs <- fmt.Errorf("subscriber %d: %w", i, err)
					return
				}
				if strings.HasPrefix(line, "data: ") {
					if !strings.Contains(line, `"urn:ev:all"`) {
						errs <- fmt.Errorf("subscriber %d: %q", i, line)
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
