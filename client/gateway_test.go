package client

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/lmosdir/lmosdir/lmos"
)

const (
	billingID = "urn:acme:billing"
	stamp     = "2025-01-20T19:00:00Z"
)

// fakeGateway plays the directory's LMOS gateway under /dir: WebSocket consumers at /lmos
// and single messages at /things/{id}/messages. What it answers depends on the request:
//
//   - readProperty: a propertyReading whose value is the property name; "never" gets no
//     answer, "stray" one for nobody and broken frames before its own, "invalid" an invalid
//     reply, and "batch" is held until batchSize of them arrived, then all are answered in
//     the reverse order;
//   - writeProperty: propertyReadings;
//   - invokeAction: "report" gets pending, running, completed; "explode" pending and an
//     error; "vanish" pending, then the connection or stream ends; others completed at once,
//     over HTTP too unless the consumer accepts an event stream;
//   - subscribeEvent: three events, after which an HTTP stream is held until the client
//     goes away;
//   - any message for urn:acme:nobody: an error, as the gateway refuses unknown Things.
type fakeGateway struct {
	t *testing.T
	// received gets every message the gateway reads, in order.
	received chan *lmos.Message
	// queries gets the query of every request.
	queries   chan url.Values
	batchSize int
	// off refuses everything with 503, as a directory whose gateway is switched off.
	off bool
	// noSubprotocol accepts WebSocket handshakes without agreeing to lmosprotocol.
	noSubprotocol bool
	// gone gets a value when the client of an HTTP event stream has gone away.
	gone chan struct{}
}

func newFakeGateway(t *testing.T) (*fakeGateway, *Client) {
	t.Helper()
	f := &fakeGateway{t: t, received: make(chan *lmos.Message, 256), queries: make(chan url.Values, 256), gone: make(chan struct{}, 16)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /dir/lmos", f.serveWebSocket)
	mux.HandleFunc("POST /dir/things/{id}/messages", f.serveHTTP)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL + "/dir")
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func (f *fakeGateway) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	f.queries <- r.URL.Query()
	if f.off {
		writeProblem(w, http.StatusServiceUnavailable, `{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"the LMOS gateway is switched off"}`)
		return
	}
	opts := &websocket.AcceptOptions{Subprotocols: []string{"lmosprotocol"}}
	if f.noSubprotocol {
		opts = nil
	} else if !slices.Contains(strings.Split(strings.ReplaceAll(r.Header.Get("Sec-WebSocket-Protocol"), " ", ""), ","), "lmosprotocol") {
		writeProblem(w, http.StatusBadRequest, `{"type":"about:blank","title":"Bad Request","status":400,"detail":"use the WebSocket subprotocol lmosprotocol"}`)
		return
	}
	ws, err := websocket.Accept(w, r, opts)
	if err != nil {
		f.t.Error(err)
		return
	}
	defer func() { _ = ws.CloseNow() }()
	ctx := r.Context()
	var batch []*lmos.Message
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		m, err := lmos.Parse(data)
		if err != nil {
			f.t.Errorf("the client sent an invalid message: %v\n%s", err, data)
			continue
		}
		f.received <- m
		if rp, ok := m.Body.(*lmos.ReadProperty); ok && rp.Name == "batch" {
			if batch = append(batch, m); len(batch) < f.batchSize {
				continue
			}
			for _, req := range slices.Backward(batch) {
				f.write(ctx, ws, encode(f.t, req, reading(req)))
			}
			batch = nil
			continue
		}
		for _, frame := range f.answer(m) {
			f.write(ctx, ws, frame)
		}
		if ia, ok := m.Body.(*lmos.InvokeAction); ok && ia.Action == "vanish" {
			ws.Close(websocket.StatusGoingAway, "restarting")
			return
		}
	}
}

func (f *fakeGateway) write(ctx context.Context, ws *websocket.Conn, frame []byte) {
	if err := ws.Write(ctx, websocket.MessageText, frame); err != nil {
		f.t.Error(err)
	}
}

// answer returns the frames that reply to m, in the spelling m came in.
func (f *fakeGateway) answer(m *lmos.Message) [][]byte {
	t := f.t
	if m.ThingID == "urn:acme:nobody" {
		return [][]byte{encode(t, m, lmos.NewError(m, http.StatusNotFound, "Not Found", "no Thing urn:acme:nobody is registered").Body)}
	}
	switch body := m.Body.(type) {
	case *lmos.ReadProperty:
		switch body.Name {
		case "never":
			return nil
		case "stray":
			stray := reply(m, reading(m))
			stray.CorrelationID = uuid.NewString()
			strayData, err := stray.Encode(m.Spelling())
			if err != nil {
				t.Error(err)
			}
			return [][]byte{
				strayData,
				[]byte(`not JSON`),
				[]byte(`{"messageType":"propertyReading"}`),
				encode(t, m, reading(m)),
			}
		case "invalid":
			return [][]byte{fmt.Appendf(nil, `{"thingID":%q,"messageID":%q,"messageType":"propertyReading","correlationID":%q,"name":"invalid"}`,
				m.ThingID, uuid.NewString(), key(m))}
		}
		return [][]byte{encode(t, m, reading(m))}
	case *lmos.WriteProperty:
		return [][]byte{encode(t, m, &lmos.PropertyReadings{Data: json.RawMessage(fmt.Sprintf(`{%q:%s}`, body.Name, body.Data)), Timestamp: stamp})}
	case *lmos.InvokeAction:
		status := func(s string) []byte {
			return encode(t, m, &lmos.ActionStatus{Action: body.Action, Status: s, Output: body.Input})
		}
		switch body.Action {
		case "report":
			return [][]byte{status("pending"), status("running"), status("completed")}
		case "explode":
			return [][]byte{status("pending"), encode(t, m, lmos.NewError(m, http.StatusInternalServerError, "Internal Server Error", "the action exploded").Body)}
		case "vanish":
			return [][]byte{status("pending")}
		}
		return [][]byte{status("completed")}
	case *lmos.SubscribeEvent:
		var frames [][]byte
		for i := range 3 {
			frames = append(frames, encode(t, m, &lmos.Event{Event: body.Event, Data: json.RawMessage(fmt.Sprint(i + 1)), Timestamp: stamp}))
		}
		return frames
	}
	return nil
}

func (f *fakeGateway) serveHTTP(w http.ResponseWriter, r *http.Request) {
	f.queries <- r.URL.Query()
	if f.off {
		writeProblem(w, http.StatusServiceUnavailable, `{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"the LMOS gateway is switched off"}`)
		return
	}
	if r.Header.Get("Content-Type") != "application/json" {
		writeProblem(w, http.StatusUnsupportedMediaType, `{"type":"about:blank","title":"Unsupported Media Type","status":415,"detail":"send the message as application/json"}`)
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Error(err)
		return
	}
	m, err := lmos.Parse(data)
	if err != nil {
		f.t.Errorf("the client sent an invalid message: %v\n%s", err, data)
		return
	}
	if m.ThingID != r.PathValue("id") {
		writeProblem(w, http.StatusBadRequest, fmt.Sprintf(`{"type":"about:blank","title":"Bad Request","status":400,"detail":"the message is for %s, not %s"}`, m.ThingID, r.PathValue("id")))
		return
	}
	f.received <- m
	frames := f.answer(m)
	_, subscription := m.Body.(*lmos.SubscribeEvent)
	_, invocation := m.Body.(*lmos.InvokeAction)
	streamed := subscription || invocation && strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	if !streamed {
		writeJSON(w, string(frames[len(frames)-1]))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, frame := range frames {
		send(w, "event: message\ndata: "+string(frame)+"\n\n")
	}
	if subscription {
		<-r.Context().Done()
		f.gone <- struct{}{}
	}
}

// await returns the next message the gateway receives, which must be of type want.
func (f *fakeGateway) await(t *testing.T, want lmos.Type) *lmos.Message {
	t.Helper()
	select {
	case m := <-f.received:
		if m.Type() != want {
			t.Fatalf("the gateway received %s, want %s", m.Type(), want)
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatalf("the gateway received no %s", want)
		return nil
	}
}

func key(m *lmos.Message) string { return cmp.Or(m.CorrelationID, m.MessageID) }

func reply(req *lmos.Message, body lmos.Body) *lmos.Message {
	return &lmos.Message{ThingID: req.ThingID, MessageID: uuid.NewString(), CorrelationID: key(req), Body: body}
}

func encode(t *testing.T, req *lmos.Message, body lmos.Body) []byte {
	t.Helper()
	data, err := reply(req, body).Encode(req.Spelling())
	if err != nil {
		// Error, not Fatal: the fake gateway calls this on its own goroutines.
		t.Error(err)
	}
	return data
}

func reading(req *lmos.Message) *lmos.PropertyReading {
	name := req.Body.(*lmos.ReadProperty).Name
	return &lmos.PropertyReading{Name: name, Value: json.RawMessage(fmt.Sprintf("%q", name)), Timestamp: stamp}
}

func newMessage(thingID string, body lmos.Body) *lmos.Message {
	return &lmos.Message{ThingID: thingID, MessageID: uuid.NewString(), Body: body}
}

func readProperty(name string) *lmos.Message {
	return newMessage(billingID, &lmos.ReadProperty{Name: name})
}

func invokeAction(action string) *lmos.Message {
	return newMessage(billingID, &lmos.InvokeAction{Action: action, Input: json.RawMessage(`{"amount":12}`)})
}

func dial(t *testing.T, c *Client) *GatewayConn {
	t.Helper()
	g, err := c.DialGateway(timeout(t), GatewayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// describe is a reply as "type:detail", e.g. "actionStatus:pending", for comparisons.
func describe(m *lmos.Message) string {
	switch body := m.Body.(type) {
	case *lmos.ActionStatus:
		return "actionStatus:" + body.Status
	case *lmos.PropertyReading:
		return "propertyReading:" + string(body.Value)
	case *lmos.Event:
		return "event:" + string(body.Data)
	case *lmos.Error:
		return "error:" + body.Status
	}
	return string(m.Type())
}

// collect runs seq to its end and returns the replies described and the errors.
func collect(seq iter.Seq2[*lmos.Message, error]) (replies []string, errs []error) {
	for m, err := range seq {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		replies = append(replies, describe(m))
	}
	return replies, errs
}

func TestGatewayCall(t *testing.T) {
	f, c := newFakeGateway(t)
	g, err := c.DialGateway(timeout(t), GatewayOptions{Consumer: "urn:zeta:planner", Session: "s 1"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if q := <-f.queries; q.Get("consumer") != "urn:zeta:planner" || q.Get("session") != "s 1" {
		t.Errorf("query %v", q)
	}

	req := readProperty("status")
	got, err := g.Call(timeout(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if describe(got) != `propertyReading:"status"` || got.CorrelationID != req.MessageID || got.ThingID != billingID {
		t.Errorf("reply %s correlated to %s, want the reading of status correlated to %s", describe(got), got.CorrelationID, req.MessageID)
	}
	if sent := f.await(t, lmos.TypeReadProperty); sent.MessageID != req.MessageID {
		t.Errorf("the gateway received message %s, want %s", sent.MessageID, req.MessageID)
	}

	// A correlation id of the caller's own keys the request instead of its message id.
	req = newMessage(billingID, &lmos.WriteProperty{Name: "limit", Data: json.RawMessage(`{"eur":100}`)})
	req.CorrelationID = uuid.NewString()
	got, err = g.Call(timeout(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if readings, ok := got.Body.(*lmos.PropertyReadings); !ok || string(readings.Data) != `{"limit":{"eur":100}}` || got.CorrelationID != req.CorrelationID {
		t.Errorf("reply %s", describe(got))
	}

	// An error message is a reply like any other.
	got, err = g.Call(timeout(t), newMessage("urn:acme:nobody", &lmos.ReadProperty{Name: "status"}))
	if err != nil || describe(got) != "error:404" {
		t.Errorf("reply %v, error %v; want the LMOS error 404", got, err)
	}

	// An invocation's progress is skipped.
	for action, want := range map[string]string{"report": "actionStatus:completed", "explode": "error:500"} {
		got, err = g.Call(timeout(t), invokeAction(action))
		if err != nil || describe(got) != want {
			t.Errorf("%s: reply %v, error %v; want %s", action, got, err, want)
		}
	}
}

func TestGatewayRepliesInBothSpellings(t *testing.T) {
	_, c := newFakeGateway(t)
	g := dial(t, c)
	for _, spelling := range []lmos.Spelling{lmos.SpellingUpperID, lmos.SpellingCamelID} {
		data, err := readProperty("status").Encode(spelling)
		if err != nil {
			t.Fatal(err)
		}
		req, err := lmos.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := g.Call(timeout(t), req)
		if err != nil {
			t.Fatalf("spelling %d: %v", spelling, err)
		}
		encoded, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		wantMember := map[lmos.Spelling]string{lmos.SpellingUpperID: `"correlationID":`, lmos.SpellingCamelID: `"correlationId":`}[spelling]
		if got.Spelling() != spelling || !strings.Contains(string(encoded), wantMember) || got.CorrelationID != req.MessageID {
			t.Errorf("spelling %d: reply %s", spelling, encoded)
		}
	}
}

func TestGatewayConcurrentCalls(t *testing.T) {
	const n = 32
	f, c := newFakeGateway(t)
	// The gateway answers only when all calls are in flight, and in the reverse order.
	f.batchSize = n
	g := dial(t, c)
	ctx := timeout(t)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req := readProperty("batch")
			got, err := g.Call(ctx, req)
			if err != nil {
				t.Error(err)
				return
			}
			if got.CorrelationID != req.MessageID {
				t.Errorf("the reply to %s went to %s", got.CorrelationID, req.MessageID)
			}
		})
	}
	wg.Wait()
}

func TestGatewayStreamUntilFinalStatus(t *testing.T) {
	_, c := newFakeGateway(t)
	g := dial(t, c)
	replies, errs := collect(g.Stream(timeout(t), invokeAction("report")))
	want := []string{"actionStatus:pending", "actionStatus:running", "actionStatus:completed"}
	if !slices.Equal(replies, want) || errs != nil {
		t.Errorf("replies %v, errors %v; want %v", replies, errs, want)
	}
	// The final status freed the key: the same request can go again.
	req := invokeAction("report")
	for range 2 {
		if replies, errs := collect(g.Stream(timeout(t), req)); len(replies) != 3 || errs != nil {
			t.Errorf("replies %v, errors %v", replies, errs)
		}
	}
}

func TestGatewayStreamUntilError(t *testing.T) {
	_, c := newFakeGateway(t)
	g := dial(t, c)
	replies, errs := collect(g.Stream(timeout(t), invokeAction("explode")))
	want := []string{"actionStatus:pending", "error:500"}
	if !slices.Equal(replies, want) || errs != nil {
		t.Errorf("replies %v, errors %v; want %v", replies, errs, want)
	}
}

func TestGatewayStreamBreak(t *testing.T) {
	f, c := newFakeGateway(t)
	g := dial(t, c)
	ctx := timeout(t)
	sub := newMessage(billingID, &lmos.SubscribeEvent{Event: "invoiceOverdue"})
	sub.CorrelationID = uuid.NewString()
	for m, err := range g.Stream(ctx, sub) {
		if err != nil || describe(m) != "event:1" {
			t.Fatalf("reply %v, error %v; want the first event", m, err)
		}
		break
	}
	f.await(t, lmos.TypeSubscribeEvent)

	// Breaking sent nothing: the next message the gateway gets is the unsubscription, and
	// the events still coming for the subscription go nowhere.
	if err := g.Send(ctx, newMessage(billingID, &lmos.UnsubscribeEvent{Event: "invoiceOverdue"})); err != nil {
		t.Fatal(err)
	}
	f.await(t, lmos.TypeUnsubscribeEvent)
	if got, err := g.Call(ctx, readProperty("status")); err != nil || describe(got) != `propertyReading:"status"` {
		t.Errorf("reply %v, error %v", got, err)
	}
	// The key is free again.
	replies, _ := collect(func(yield func(*lmos.Message, error) bool) {
		for m, err := range g.Stream(ctx, sub) {
			if !yield(m, err) || err != nil || describe(m) == "event:3" {
				return
			}
		}
	})
	if want := []string{"event:1", "event:2", "event:3"}; !slices.Equal(replies, want) {
		t.Errorf("replies %v, want %v", replies, want)
	}
}

func TestGatewayContextEnds(t *testing.T) {
	f, c := newFakeGateway(t)
	g := dial(t, c)

	ctx, cancel := context.WithCancel(timeout(t))
	result := make(chan error)
	go func() {
		_, err := g.Call(ctx, readProperty("never"))
		result <- err
	}()
	f.await(t, lmos.TypeReadProperty)
	cancel()
	if err := <-result; !errors.Is(err, context.Canceled) {
		t.Errorf("Call returned %v, want context.Canceled", err)
	}

	// A stream ends without an error, and before it sends when ctx has already ended.
	ctx, cancel = context.WithCancel(timeout(t))
	defer cancel()
	var replies []string
	for m, err := range g.Stream(ctx, invokeAction("report")) {
		if err != nil {
			t.Fatal(err)
		}
		replies = append(replies, describe(m))
		cancel()
	}
	if len(replies) == 0 || len(replies) > 3 {
		t.Errorf("replies %v", replies)
	}
	f.await(t, lmos.TypeInvokeAction)
	if replies, errs := collect(g.Stream(ctx, invokeAction("report"))); replies != nil || errs != nil {
		t.Errorf("replies %v, errors %v after the end of ctx", replies, errs)
	}

	// The connection outlives the ends of its requests.
	if got, err := g.Call(timeout(t), readProperty("status")); err != nil || describe(got) != `propertyReading:"status"` {
		t.Errorf("reply %v, error %v", got, err)
	}
	if sent := f.await(t, lmos.TypeReadProperty); sent.Body.(*lmos.ReadProperty).Name != "status" {
		t.Errorf("the gateway received a request for %s", sent.Body.(*lmos.ReadProperty).Name)
	}
}

func TestGatewayConnectionLost(t *testing.T) {
	f, c := newFakeGateway(t)
	g := dial(t, c)
	ctx := timeout(t)
	waiting := callNeverAnswered(ctx, t, f, g)

	replies, errs := collect(g.Stream(ctx, invokeAction("vanish")))
	if !slices.Equal(replies, []string{"actionStatus:pending"}) || len(errs) != 1 {
		t.Fatalf("replies %v, errors %v; want pending, then the error", replies, errs)
	}
	if websocket.CloseStatus(errs[0]) != websocket.StatusGoingAway {
		t.Errorf("error %v, want the gateway's close status", errs[0])
	}
	if err := <-waiting; websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("the waiting call returned %v, want the gateway's close status", err)
	}
	if _, err := g.Call(ctx, readProperty("status")); err == nil {
		t.Error("a call on a lost connection succeeded")
	}
	if err := g.Send(ctx, newMessage(billingID, &lmos.UnsubscribeAllEvents{})); err == nil {
		t.Error("a message was sent on a lost connection")
	}
	if err := g.Close(); err != nil {
		t.Errorf("closing a lost connection: %v", err)
	}
}

func TestGatewayDropsStrayFrames(t *testing.T) {
	_, c := newFakeGateway(t)
	g := dial(t, c)
	got, err := g.Call(timeout(t), readProperty("stray"))
	if err != nil || describe(got) != `propertyReading:"stray"` {
		t.Errorf("reply %v, error %v; want the reading after the stray frames", got, err)
	}
}

func TestGatewayInvalidReply(t *testing.T) {
	_, c := newFakeGateway(t)
	g := dial(t, c)
	ctx := timeout(t)
	_, err := g.Call(ctx, readProperty("invalid"))
	var invalid *lmos.ValidationError
	if !errors.As(err, &invalid) || !strings.Contains(err.Error(), "timestamp") {
		t.Errorf("error %v, want the problems of the invalid reply", err)
	}
	if got, err := g.Call(ctx, readProperty("status")); err != nil || describe(got) != `propertyReading:"status"` {
		t.Errorf("after an invalid reply: reply %v, error %v", got, err)
	}
}

func TestGatewayHandshakeRefused(t *testing.T) {
	f, c := newFakeGateway(t)
	f.off = true
	_, err := c.DialGateway(timeout(t), GatewayOptions{})
	var problem *ProblemError
	if !errors.As(err, &problem) || problem.Status != http.StatusServiceUnavailable || problem.Detail != "the LMOS gateway is switched off" {
		t.Errorf("error %#v, want the gateway's problem", err)
	}
}

func TestGatewayWithoutSubprotocol(t *testing.T) {
	f, c := newFakeGateway(t)
	f.noSubprotocol = true
	if _, err := c.DialGateway(timeout(t), GatewayOptions{}); err == nil || !strings.Contains(err.Error(), "lmosprotocol") {
		t.Errorf("error %v, want one about the subprotocol", err)
	}
}

func TestGatewayRefusesBadRequests(t *testing.T) {
	f, c := newFakeGateway(t)
	g := dial(t, c)
	ctx := timeout(t)

	sub := newMessage(billingID, &lmos.SubscribeEvent{Event: "invoiceOverdue"})
	sub.CorrelationID = uuid.NewString()
	next, stop := iter.Pull2(g.Stream(ctx, sub))
	defer stop()
	if m, err, ok := next(); !ok || err != nil || describe(m) != "event:1" {
		t.Fatalf("reply %v, error %v", m, err)
	}
	again := newMessage(billingID, &lmos.ReadProperty{Name: "status"})
	again.CorrelationID = sub.CorrelationID
	if _, err := g.Call(ctx, again); err == nil || !strings.Contains(err.Error(), "already waiting") {
		t.Errorf("error %v, want one about the correlation key in use", err)
	}
	stop()

	if _, err := g.Call(ctx, newMessage(billingID, &lmos.UnobserveProperty{Name: "status"})); err == nil || !strings.Contains(err.Error(), "Send") {
		t.Errorf("error %v, want one pointing to Send", err)
	}
	if _, err := g.Call(ctx, newMessage(billingID, &lmos.ObserveProperty{Name: "status"})); err == nil || !strings.Contains(err.Error(), "Stream") {
		t.Errorf("error %v, want one pointing to Stream", err)
	}
	if _, errs := collect(g.Stream(ctx, newMessage(billingID, &lmos.UnsubscribeAllEvents{}))); len(errs) != 1 || !strings.Contains(errs[0].Error(), "Send") {
		t.Errorf("errors %v, want one pointing to Send", errs)
	}
	var invalid *lmos.ValidationError
	if _, err := g.Call(ctx, newMessage("billing", &lmos.ReadProperty{Name: "status"})); !errors.As(err, &invalid) {
		t.Errorf("error %v, want a validation error", err)
	}
	if err := g.Send(ctx, &lmos.Message{ThingID: billingID, Body: &lmos.UnsubscribeAllEvents{}}); !errors.As(err, &invalid) {
		t.Errorf("error %v, want a validation error", err)
	}
	// None of these reached the gateway.
	f.await(t, lmos.TypeSubscribeEvent)
	if _, err := g.Call(ctx, readProperty("status")); err != nil {
		t.Fatal(err)
	}
	if sent := f.await(t, lmos.TypeReadProperty); sent.CorrelationID != "" {
		t.Errorf("the gateway received the refused request %s", sent.CorrelationID)
	}
}

func TestGatewayClose(t *testing.T) {
	f, c := newFakeGateway(t)
	g := dial(t, c)
	ctx := timeout(t)
	waiting := callNeverAnswered(ctx, t, f, g)
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-waiting; !errors.Is(err, ErrGatewayClosed) {
		t.Errorf("the waiting call returned %v, want ErrGatewayClosed", err)
	}
	if _, err := g.Call(ctx, readProperty("status")); !errors.Is(err, ErrGatewayClosed) {
		t.Errorf("a call after Close returned %v, want ErrGatewayClosed", err)
	}
	if _, errs := collect(g.Stream(ctx, invokeAction("report"))); len(errs) != 1 || !errors.Is(errs[0], ErrGatewayClosed) {
		t.Errorf("a stream after Close yielded %v, want ErrGatewayClosed", errs)
	}
	if err := g.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

func TestSendMessage(t *testing.T) {
	f, c := newFakeGateway(t)
	const thingID = "https://acme.example/things/billing?v=2"
	req := newMessage(thingID, &lmos.ReadProperty{Name: "status"})
	var replies []*lmos.Message
	for m, err := range c.SendMessage(timeout(t), thingID, req, GatewayOptions{Consumer: "urn:zeta:planner"}, false) {
		if err != nil {
			t.Fatal(err)
		}
		replies = append(replies, m)
	}
	if len(replies) != 1 || describe(replies[0]) != `propertyReading:"status"` || replies[0].CorrelationID != req.MessageID {
		t.Fatalf("replies %v", replies)
	}
	if q := <-f.queries; q.Get("consumer") != "urn:zeta:planner" || q.Has("session") {
		t.Errorf("query %v", q)
	}
	if sent := f.await(t, lmos.TypeReadProperty); sent.ThingID != thingID {
		t.Errorf("the gateway received a message for %s", sent.ThingID)
	}

	// Without asking for a stream an invocation gets one answer; an error is a reply too.
	for _, tt := range []struct {
		req  *lmos.Message
		want []string
	}{
		{invokeAction("report"), []string{"actionStatus:completed"}},
		{invokeAction("explode"), []string{"error:500"}},
		{newMessage("urn:acme:nobody", &lmos.ReadProperty{Name: "status"}), []string{"error:404"}},
	} {
		replies, errs := collect(c.SendMessage(timeout(t), tt.req.ThingID, tt.req, GatewayOptions{}, false))
		if !slices.Equal(replies, tt.want) || errs != nil {
			t.Errorf("replies %v, errors %v; want %v", replies, errs, tt.want)
		}
	}
}

func TestSendMessageStream(t *testing.T) {
	_, c := newFakeGateway(t)
	for _, tt := range []struct {
		action string
		want   []string
		err    bool
	}{
		{"report", []string{"actionStatus:pending", "actionStatus:running", "actionStatus:completed"}, false},
		{"explode", []string{"actionStatus:pending", "error:500"}, false},
		{"vanish", []string{"actionStatus:pending"}, true},
	} {
		replies, errs := collect(c.SendMessage(timeout(t), billingID, invokeAction(tt.action), GatewayOptions{}, true))
		if !slices.Equal(replies, tt.want) || (len(errs) == 1) != tt.err || len(errs) > 1 {
			t.Errorf("%s: replies %v, errors %v; want %v", tt.action, replies, errs, tt.want)
		}
	}
}

func TestSendMessageSubscription(t *testing.T) {
	f, c := newFakeGateway(t)
	ctx, cancel := context.WithCancel(timeout(t))
	defer cancel()
	sub := newMessage(billingID, &lmos.SubscribeEvent{Event: "invoiceOverdue"})
	var replies []string
	// The gateway streams a subscription whether or not the client asked.
	for m, err := range c.SendMessage(ctx, billingID, sub, GatewayOptions{}, false) {
		if err != nil {
			t.Fatal(err)
		}
		if replies = append(replies, describe(m)); len(replies) == 3 {
			break
		}
	}
	if want := []string{"event:1", "event:2", "event:3"}; !slices.Equal(replies, want) {
		t.Errorf("replies %v, want %v", replies, want)
	}
	select {
	case <-f.gone:
	case <-ctx.Done():
		t.Fatal("breaking out did not end the stream")
	}

	// The end of ctx ends a stream without an error.
	streamCtx, stream := context.WithCancel(timeout(t))
	defer stream()
	replies, errs := collect(func(yield func(*lmos.Message, error) bool) {
		for m, err := range c.SendMessage(streamCtx, billingID, sub, GatewayOptions{}, true) {
			if m != nil && describe(m) == "event:3" {
				stream()
			}
			if !yield(m, err) {
				return
			}
		}
	})
	if len(replies) != 3 || errs != nil {
		t.Errorf("replies %v, errors %v", replies, errs)
	}
	<-f.gone
}

func TestSendMessageProblems(t *testing.T) {
	f, c := newFakeGateway(t)
	req := readProperty("status")
	_, errs := collect(c.SendMessage(timeout(t), "urn:acme:other", req, GatewayOptions{}, false))
	var problem *ProblemError
	if len(errs) != 1 || !errors.As(errs[0], &problem) || problem.Status != http.StatusBadRequest || !strings.Contains(problem.Detail, "urn:acme:other") {
		t.Errorf("errors %v, want the gateway's 400 problem", errs)
	}

	f.off = true
	_, errs = collect(c.SendMessage(timeout(t), billingID, req, GatewayOptions{}, false))
	if len(errs) != 1 || !errors.As(errs[0], &problem) || problem.Status != http.StatusServiceUnavailable {
		t.Errorf("errors %v, want the gateway's 503 problem", errs)
	}

	var invalid *lmos.ValidationError
	if _, errs = collect(c.SendMessage(timeout(t), billingID, &lmos.Message{ThingID: billingID}, GatewayOptions{}, false)); len(errs) != 1 || !errors.As(errs[0], &invalid) {
		t.Errorf("errors %v, want a validation error", errs)
	}
}

func TestSendMessageBrokenAnswers(t *testing.T) {
	answers := map[string]func(w http.ResponseWriter){
		"text":         func(w http.ResponseWriter) { _, _ = io.WriteString(w, "hello") },
		"not LMOS":     func(w http.ResponseWriter) { writeJSON(w, `{"id":"urn:acme:billing"}`) },
		"invalid data": func(w http.ResponseWriter) { startStream(w, "event: message\ndata: [1]\n\n") },
		"cut stream":   func(w http.ResponseWriter) { startStream(w, ": nothing yet\n") },
	}
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			c := newDirectory(t, func(w http.ResponseWriter, _ *http.Request) { answer(w) })
			replies, errs := collect(c.SendMessage(timeout(t), billingID, invokeAction("report"), GatewayOptions{}, true))
			if replies != nil || len(errs) != 1 {
				t.Errorf("replies %v, errors %v; want one error", replies, errs)
			}
		})
	}
}

func TestSendMessageWithClientTimeout(t *testing.T) {
	const limit = 50 * time.Millisecond
	release := make(chan struct{})
	c := newDirectory(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") == "application/json" {
			// Only once it has read the body does the server notice the client going away.
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
			return
		}
		startStream(w, "event: message\ndata: "+string(encode(t, invokeAction("report"), &lmos.ActionStatus{Action: "report", Status: "pending"}))+"\n\n")
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		send(w, "data: "+string(encode(t, invokeAction("report"), &lmos.ActionStatus{Action: "report", Status: "completed"}))+"\n\n")
	})
	c.http = &http.Client{Timeout: limit}

	_, errs := collect(c.SendMessage(timeout(t), billingID, readProperty("status"), GatewayOptions{}, false))
	if len(errs) != 1 || !errors.Is(errs[0], errNoAnswer) {
		t.Errorf("errors %v, want the timeout", errs)
	}

	// The timeout bounds the wait for the answer, not a stream once it began.
	var replies []string
	for m, err := range c.SendMessage(timeout(t), billingID, invokeAction("report"), GatewayOptions{}, true) {
		if err != nil {
			t.Fatal(err)
		}
		if replies = append(replies, describe(m)); len(replies) == 1 {
			time.AfterFunc(3*limit, func() { close(release) })
		}
	}
	if want := []string{"actionStatus:pending", "actionStatus:completed"}; !slices.Equal(replies, want) {
		t.Errorf("replies %v, want %v", replies, want)
	}
}

// callNeverAnswered makes a Call the fake gateway receives but does not answer; its
// outcome comes on the channel.
func callNeverAnswered(ctx context.Context, t *testing.T, f *fakeGateway, g *GatewayConn) <-chan error {
	t.Helper()
	waiting := make(chan error, 1)
	go func() {
		_, err := g.Call(ctx, readProperty("never"))
		waiting <- err
	}()
	f.await(t, lmos.TypeReadProperty)
	return waiting
}
