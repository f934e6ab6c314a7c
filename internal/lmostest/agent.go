// Package lmostest runs LMOS agents on real sockets for tests of the gateway: a WebSocket
// agent that answers every request type, and the TD that describes it.
package lmostest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/lmosdir/lmosdir/lmos"
)

// Agent is an LMOS agent on a real WebSocket: it answers every request type, keeps
// subscriptions by correlation id, and records what it receives. Its actions: echo (the
// input as output), progress (two pending statuses, then completed), fail (an error), die
// (drops the connection), freeze (stops reading, as a hung agent), silent (no reply) and
// stall (one pending status, then nothing).
type Agent struct {
	t        testing.TB
	server   *httptest.Server
	received chan *lmos.Message
	Accepted atomic.Int32 // connections accepted

	thawed chan struct{} // closed by Kill: a frozen connection's reader resumes, to end
	kill   sync.Once

	mu    sync.Mutex
	conns []*websocket.Conn
	subs  map[string]subscription // correlation id → subscription
}

type subscription struct {
	conn *websocket.Conn
	kind lmos.Type // subscribeEvent, subscribeAllEvents or observeProperty
	name string
}

// NewAgent serves an agent until the test ends.
func NewAgent(t testing.TB) *Agent {
	t.Helper()
	a := &Agent{t: t, received: make(chan *lmos.Message, 10000), subs: map[string]subscription{}, thawed: make(chan struct{})}
	a.server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.server.Close)
	t.Cleanup(a.Kill)
	return a
}

// URL is the agent's WebSocket endpoint.
func (a *Agent) URL() string { return "ws" + strings.TrimPrefix(a.server.URL, "http") + "/agent" }

func (a *Agent) serve(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{lmos.Subprotocol}})
	if err != nil {
		return
	}
	a.Accepted.Add(1)
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
		select {
		case a.received <- m:
		default: // a benchmark sends more than any test reads back
		}
		if invoke, ok := m.Body.(*lmos.InvokeAction); ok && invoke.Action == "freeze" {
			// It stops reading, as a hung process would: pings go unanswered.
			<-a.thawed
			return
		}
	}
}

func (a *Agent) answer(conn *websocket.Conn, m *lmos.Message) {
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
		case "stall":
			a.reply(conn, m, &lmos.ActionStatus{Action: b.Action, Status: "pending"})
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
		a.subscribe(m.CorrelationID, subscription{conn: conn, kind: m.Type(), name: b.Event})
	case *lmos.SubscribeAllEvents:
		a.subscribe(m.CorrelationID, subscription{conn: conn, kind: m.Type()})
	case *lmos.ObserveProperty:
		a.subscribe(m.CorrelationID, subscription{conn: conn, kind: m.Type(), name: b.Name})
	case *lmos.UnsubscribeEvent, *lmos.UnsubscribeAllEvents, *lmos.UnobserveProperty:
		a.mu.Lock()
		delete(a.subs, m.CorrelationID)
		a.mu.Unlock()
	}
}

func (a *Agent) subscribe(correlation string, s subscription) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.subs[correlation] = s
}

// reply answers request with the correlation id the gateway gave it.
func (a *Agent) reply(conn *websocket.Conn, request *lmos.Message, body lmos.Body) {
	m := &lmos.Message{ThingID: request.ThingID, MessageID: uuid.NewString(), CorrelationID: request.CorrelationID, Body: body}
	a.send(conn, m, request.Spelling())
}

func (a *Agent) send(conn *websocket.Conn, m *lmos.Message, spelling lmos.Spelling) {
	data, err := m.Encode(spelling)
	if err != nil {
		a.t.Errorf("the agent's reply: %v", err)
		return
	}
	_ = conn.Write(context.Background(), websocket.MessageText, data)
}

// Emit sends an event (or, for a property, a reading) to every matching subscription.
func (a *Agent) Emit(thingID string, kind lmos.Type, name string, data json.RawMessage) int {
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

// SubscriptionCount is how many subscriptions and observations the agent holds.
func (a *Agent) SubscriptionCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.subs)
}

// Kill drops every connection without a closing handshake.
func (a *Agent) Kill() {
	a.kill.Do(func() { close(a.thawed) })
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.conns {
		_ = c.CloseNow()
	}
	a.conns = nil
}

// Next returns the next message the agent received.
func (a *Agent) Next(t *testing.T) *lmos.Message {
	t.Helper()
	select {
	case m := <-a.received:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("the agent received nothing")
		return nil
	}
}

// NothingReceived checks that the agent got no message. A message forwarded by mistake
// may still be on its way when the refusal reaches the test, so it waits a little for one.
func (a *Agent) NothingReceived(t *testing.T) {
	t.Helper()
	select {
	case m := <-a.received:
		t.Fatalf("the agent received %s %s", m.Type(), m.MessageID)
	case <-time.After(nothingWait):
	}
}

// nothingWait is how long NothingReceived waits: a forwarded message crosses a loopback
// socket in well under a millisecond.
const nothingWait = 100 * time.Millisecond

// AgentTD describes an agent served at endpoint over lmosprotocol.
func AgentTD(id, endpoint string) string {
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
		`"freeze":{"forms":` + form + `},` +
		`"silent":{"forms":` + form + `},` +
		`"stall":{"forms":` + form + `}},` +
		`"events":{"alert":{"data":{"type":"string"},"forms":` + form + `},"tick":{"forms":` + form + `}}}`
}
