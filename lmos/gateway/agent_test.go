package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/directory/sqlite"
	"github.com/lmosdir/lmosdir/internal/dirtest"
	"github.com/lmosdir/lmosdir/lmos"
	"github.com/lmosdir/lmosdir/lmos/gateway"
	"github.com/lmosdir/lmosdir/td"
)

// wsAgent is an LMOS agent on a real WebSocket: it answers every request type, keeps
// subscriptions by correlation id, and records what it receives.
type wsAgent struct {
	t        *testing.T
	server   *httptest.Server
	received chan *lmos.Message
	accepted atomic.Int32 // connections accepted

	mu    sync.Mutex
	conns []*websocket.Conn
	subs  map[string]agentSubscription // correlation id → subscription
}

type agentSubscription struct {
	conn *websocket.Conn
	kind lmos.Type // subscribeEvent, subscribeAllEvents or observeProperty
	name string
}

func newWSAgent(t *testing.T) *wsAgent {
	t.Helper()
	a := &wsAgent{t: t, received: make(chan *lmos.Message, 10000), subs: map[string]agentSubscription{}}
	a.server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.server.Close)
	t.Cleanup(a.kill)
	return a
}

// url is the agent's WebSocket endpoint.
func (a *wsAgent) url() string { return "ws" + strings.TrimPrefix(a.server.URL, "http") + "/agent" }

func (a *wsAgent) serve(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{gateway.Subprotocol}})
	if err != nil {
		return
	}
	a.accepted.Add(1)
	a.mu.Lock()
	a.conns = append(a.conns, conn)
	a.mu.Unlock()
	for {
		_, data, err := conn.Read(context.Background())
		if err != nil {
			return
		}
		m, err := lmos.Parse(data)
		if err != nil {
			a.t.Errorf("the agent got an invalid message %s: %v", data, err)
			continue
		}
		a.answer(conn, m)
		a.received <- m
	}
}

func (a *wsAgent) answer(conn *websocket.Conn, m *lmos.Message) {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	switch b := m.Body.(type) {
	case *lmos.InvokeAction:
		switch b.Action {
		case "echo":
			a.reply(conn, m, &lmos.ActionStatus{Action: b.Action, Status: "completed", Output: b.Input})
		case "progress":
			a.reply(conn, m, &lmos.ActionStatus{Action: b.Action, Status: "pending"})
			a.reply(conn, m, &lmos.ActionStatus{Action: b.Action, Status: "pending", Output: json.RawMessage(`"half"`)})
			a.reply(conn, m, &lmos.ActionStatus{Action: b.Action, Status: "completed", Output: json.RawMessage(`"done"`)})
		case "fail":
			reply := lmos.NewError(m, http.StatusInternalServerError, "Internal Server Error", "the tool broke")
			a.send(conn, reply, m.Spelling())
		case "die":
			_ = conn.CloseNow()
		}
	case *lmos.QueryAction:
		a.reply(conn, m, &lmos.ActionStatus{Action: b.Action, Status: "pending"})
	case *lmos.CancelAction:
		a.reply(conn, m, &lmos.ActionStatus{Action: b.Action, Status: "canceled"})
	case *lmos.ReadProperty:
		a.reply(conn, m, &lmos.PropertyReading{Name: b.Name, Value: json.RawMessage(`21.5`), Timestamp: now})
	case *lmos.WriteProperty:
		data, _ := json.Marshal(map[string]json.RawMessage{b.Name: b.Data})
		a.reply(conn, m, &lmos.PropertyReadings{Data: data, Timestamp: now})
	case *lmos.WriteMultipleProperties:
		a.reply(conn, m, &lmos.PropertyReadings{Data: b.Data, Timestamp: now})
	case *lmos.SubscribeEvent:
		a.subscribe(m.CorrelationID, agentSubscription{conn: conn, kind: m.Type(), name: b.Event})
	case *lmos.SubscribeAllEvents:
		a.subscribe(m.CorrelationID, agentSubscription{conn: conn, kind: m.Type()})
	case *lmos.ObserveProperty:
		a.subscribe(m.CorrelationID, agentSubscription{conn: conn, kind: m.Type(), name: b.Name})
	case *lmos.UnsubscribeEvent, *lmos.UnsubscribeAllEvents, *lmos.UnobserveProperty:
		a.mu.Lock()
		delete(a.subs, m.CorrelationID)
		a.mu.Unlock()
	}
}

func (a *wsAgent) subscribe(correlation string, s agentSubscription) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.subs[correlation] = s
}

// reply answers request with the correlation id the gateway gave it.
func (a *wsAgent) reply(conn *websocket.Conn, request *lmos.Message, body lmos.Body) {
	m := &lmos.Message{ThingID: request.ThingID, MessageID: uuid.NewString(), CorrelationID: request.CorrelationID, Body: body}
	a.send(conn, m, request.Spelling())
}

func (a *wsAgent) send(conn *websocket.Conn, m *lmos.Message, spelling lmos.Spelling) {
	data, err := m.Encode(spelling)
	if err != nil {
		a.t.Errorf("the agent's reply: %v", err)
		return
	}
	_ = conn.Write(context.Background(), websocket.MessageText, data)
}

// emit sends an event (or, for a property, a reading) to every matching subscription.
func (a *wsAgent) emit(thingID string, kind lmos.Type, name string, data json.RawMessage) int {
	type target struct {
		correlation string
		conn        *websocket.Conn
	}
	a.mu.Lock()
	var targets []target
	for correlation, s := range a.subs {
		if s.kind == kind && (s.name == name || kind == lmos.TypeSubscribeAllEvents) {
			targets = append(targets, target{correlation, s.conn})
		}
	}
	a.mu.Unlock()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for _, tg := range targets {
		var body lmos.Body = &lmos.Event{Event: name, Data: data, Timestamp: now}
		if kind == lmos.TypeObserveProperty {
			body = &lmos.PropertyReading{Name: name, Value: data, Timestamp: now}
		}
		a.send(tg.conn, &lmos.Message{ThingID: thingID, MessageID: uuid.NewString(), CorrelationID: tg.correlation, Body: body}, lmos.SpellingUpperID)
	}
	return len(targets)
}

func (a *wsAgent) subscriptionCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.subs)
}

// kill drops every connection without a closing handshake.
func (a *wsAgent) kill() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.conns {
		_ = c.CloseNow()
	}
	a.conns = nil
}

// next returns the next message the agent received.
func (a *wsAgent) next(t *testing.T) *lmos.Message {
	t.Helper()
	select {
	case m := <-a.received:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("the agent received nothing")
		return nil
	}
}

// nothingReceived checks that the agent got no message.
func (a *wsAgent) nothingReceived(t *testing.T) {
	t.Helper()
	select {
	case m := <-a.received:
		t.Fatalf("the agent received %s %s", m.Type(), m.MessageID)
	default:
	}
}

// wsAgentTD describes an agent served at endpoint over lmosprotocol.
func wsAgentTD(id, endpoint string) string {
	form := `[{"href":"agent","subprotocol":"lmosprotocol"}]`
	base := strings.TrimSuffix(endpoint, "agent")
	return `{"@context":["https://www.w3.org/2022/wot/td/v1.1",{"lmos":"https://eclipse.dev/lmos/protocol/v1"}],` +
		`"id":"` + id + `","title":"Test agent","@type":"lmos:Agent","base":"` + base + `",` +
		`"securityDefinitions":{"nosec_sc":{"scheme":"nosec"}},"security":"nosec_sc",` +
		`"forms":[{"op":["subscribeallevents","unsubscribeallevents"],"href":"agent","subprotocol":"lmosprotocol"}],` +
		`"properties":{` +
		`"temperature":{"type":"number","readOnly":true,"observable":true,"forms":` + form + `},` +
		`"target":{"type":"integer","minimum":0,"forms":` + form + `},` +
		`"mode":{"type":"string","enum":["eco","fast"],"forms":` + form + `},` +
		`"secret":{"type":"string","writeOnly":true,"forms":` + form + `}},` +
		`"actions":{` +
		`"echo":{"input":{"type":"object","properties":{"text":{"type":"string"},"lang":{"type":"string"}},"required":["text"]},"forms":` + form + `},` +
		`"progress":{"forms":` + form + `},` +
		`"fail":{"forms":` + form + `},` +
		`"die":{"forms":` + form + `},` +
		`"silent":{"forms":` + form + `}},` +
		`"events":{"alert":{"data":{"type":"string"},"forms":` + form + `},"tick":{"forms":` + form + `}}}`
}

// fixture is a directory with its event delivery running and a gateway over it.
type fixture struct {
	dir   *directory.Service
	gw    *gateway.Gateway
	clock *clock
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newFixture(t *testing.T, tune ...func(*gateway.Config)) *fixture {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "lmosdir.db"), sqlite.Options{MigrateOnOpen: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	validator, err := td.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{now: time.Now().UTC()}
	dir := directory.NewService(store, validator, directory.Options{Clock: clk.Now})
	dirtest.StartEvents(t, dir)
	cfg := gateway.Config{SelfID: "http://dir.example/lmos"}
	for _, f := range tune {
		f(&cfg)
	}
	gw, err := gateway.New(cfg, dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { defer close(stopped); gw.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-stopped })
	return &fixture{dir: dir, gw: gw, clock: clk}
}

func (f *fixture) register(t *testing.T, id, document string) {
	t.Helper()
	if _, err := f.dir.Put(context.Background(), id, []byte(document)); err != nil {
		t.Fatalf("registering %s: %v", id, err)
	}
}

// consumer is a session with helpers to send and await replies.
type consumer struct {
	t       *testing.T
	session *gateway.Session
}

func (f *fixture) open(t *testing.T, c gateway.Consumer) *consumer {
	t.Helper()
	s := f.gw.Open(c)
	t.Cleanup(s.Close)
	return &consumer{t: t, session: s}
}

// send hands a message to the session; id fields missing from members are filled in.
func (c *consumer) send(thingID string, members string) (messageID string, answer gateway.Answer) {
	c.t.Helper()
	messageID = uuid.NewString()
	frame := fmt.Sprintf(`{"thingId":%q,"messageId":%q,%s}`, thingID, messageID, members)
	return messageID, c.session.Handle(context.Background(), []byte(frame))
}

// reply waits for the next reply.
func (c *consumer) reply() (*lmos.Message, gateway.Reply) {
	c.t.Helper()
	select {
	case r := <-c.session.Replies():
		m, err := lmos.Parse(r.Data)
		if err != nil {
			c.t.Fatalf("the gateway sent an invalid message %s: %v", r.Data, err)
		}
		return m, r
	case <-time.After(5 * time.Second):
		c.t.Fatal("no reply")
		return nil, gateway.Reply{}
	}
}

// noReply checks that nothing is waiting for the consumer.
func (c *consumer) noReply() {
	c.t.Helper()
	select {
	case r := <-c.session.Replies():
		c.t.Fatalf("unexpected reply %s", r.Data)
	case <-time.After(50 * time.Millisecond):
	}
}

// errorReply waits for an LMOS error and checks its status and correlation.
func (c *consumer) errorReply(status int, correlation string) *lmos.Error {
	c.t.Helper()
	m, r := c.reply()
	e, ok := m.Body.(*lmos.Error)
	if !ok {
		c.t.Fatalf("reply %s, want an error", r.Data)
	}
	if e.Status != fmt.Sprint(status) {
		c.t.Fatalf("error status %s (%s), want %d", e.Status, e.Detail, status)
	}
	if !r.Final {
		c.t.Error("an error must be the final reply")
	}
	if m.CorrelationID != correlation {
		c.t.Errorf("error correlation %q, want %q", m.CorrelationID, correlation)
	}
	return e
}
