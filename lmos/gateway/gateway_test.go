package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/internal/lmostest"
	"github.com/lmosdir/lmosdir/internal/testsync"
	"github.com/lmosdir/lmosdir/lmos"
	"github.com/lmosdir/lmosdir/lmos/gateway"
)

const agentID = "urn:test:agent"

func newAgentFixture(t testing.TB, tune ...func(*gateway.Config)) (*fixture, *lmostest.Agent) {
	t.Helper()
	f := newFixture(t, tune...)
	agent := lmostest.NewAgent(t)
	f.register(t, agentID, lmostest.AgentTD(agentID, agent.URL()))
	return f, agent
}

func TestRelaysRequestReplyOverWebSocket(t *testing.T) {
	f, agent := newAgentFixture(t)
	c := f.open(t, gateway.Consumer{})
	cases := []struct {
		name    string
		members string
		answer  gateway.Answer
		want    lmos.Type
	}{
		{"invokeAction", `"messageType":"invokeAction","action":"echo","input":{"text":"hi","lang":"en"}`, gateway.AnswerProgress, lmos.TypeActionStatus},
		{"queryAction", `"messageType":"queryAction","action":"echo"`, gateway.AnswerOne, lmos.TypeActionStatus},
		{"cancelAction", `"messageType":"cancelAction","action":"echo","reason":"changed my mind"`, gateway.AnswerOne, lmos.TypeActionStatus},
		{"readProperty", `"messageType":"readProperty","name":"temperature"`, gateway.AnswerOne, lmos.TypePropertyReading},
		{"writeProperty", `"messageType":"writeProperty","name":"target","data":7`, gateway.AnswerOne, lmos.TypePropertyReadings},
		{"writeMultipleProperties", `"messageType":"writeMultipleProperties","data":{"target":3,"mode":"eco"}`, gateway.AnswerOne, lmos.TypePropertyReadings},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			messageID, answer := c.send(agentID, tc.members)
			if answer != tc.answer {
				t.Errorf("answer %d, want %d", answer, tc.answer)
			}
			upstream := agent.Next(t)
			if upstream.MessageID == messageID || upstream.CorrelationID != upstream.MessageID {
				t.Errorf("upstream ids %s/%s: want a fresh message id that is also the correlation id", upstream.MessageID, upstream.CorrelationID)
			}
			if upstream.Spelling() != lmos.SpellingCamelID {
				t.Error("the message went upstream in another spelling than the consumer's")
			}
			if upstream.Type() != lmos.Type(tc.name) {
				t.Errorf("upstream type %s", upstream.Type())
			}
			reply, r := c.reply()
			if reply.Type() != tc.want || reply.CorrelationID != messageID || !r.Final {
				t.Fatalf("reply %s: want a final %s correlated to %s", r.Data, tc.want, messageID)
			}
			if !strings.Contains(string(r.Data), `"correlationId"`) || !strings.Contains(string(r.Data), `"thingId"`) {
				t.Errorf("reply %s is not in the consumer's spelling", r.Data)
			}
		})
	}
	t.Run("echo output", func(t *testing.T) {
		c.send(agentID, `"messageType":"invokeAction","action":"echo","input":{"text":"hello"}`)
		agent.Next(t)
		reply, _ := c.reply()
		status := reply.Body.(*lmos.ActionStatus)
		if status.Status != "completed" || string(status.Output) != `{"text":"hello"}` {
			t.Errorf("status %+v", status)
		}
	})
}

func TestActionProgressUntilTerminalStatus(t *testing.T) {
	f, agent := newAgentFixture(t)
	c := f.open(t, gateway.Consumer{})
	correlation := "8d0c7ab3-2a43-4f4e-9d3f-2c1f55d2b6a1"
	messageID, answer := c.send(agentID, `"correlationId":"`+correlation+`","messageType":"invokeAction","action":"progress"`)
	if answer != gateway.AnswerProgress {
		t.Fatalf("answer %d", answer)
	}
	agent.Next(t)
	var statuses []string
	for {
		reply, r := c.reply()
		if reply.CorrelationID != correlation {
			t.Fatalf("reply correlated to %s, want the request's correlation id %s (not its message id %s)", reply.CorrelationID, correlation, messageID)
		}
		statuses = append(statuses, reply.Body.(*lmos.ActionStatus).Status)
		if r.Final {
			break
		}
	}
	if got := strings.Join(statuses, ","); got != "pending,pending,completed" {
		t.Errorf("statuses %s", got)
	}
	c.noReply()
}

func TestThingErrorEndsTheRequest(t *testing.T) {
	f, agent := newAgentFixture(t)
	c := f.open(t, gateway.Consumer{})
	messageID, _ := c.send(agentID, `"messageType":"invokeAction","action":"fail"`)
	agent.Next(t)
	if e := c.errorReply(http.StatusInternalServerError, messageID); e.Detail != "the tool broke" {
		t.Errorf("detail %q", e.Detail)
	}
}

func TestSubscriptionsAndObservations(t *testing.T) {
	f, agent := newAgentFixture(t)
	c := f.open(t, gateway.Consumer{})
	cases := []struct {
		subscribe, unsubscribe string
		kind                   lmos.Type
		name                   string
		want                   lmos.Type
	}{
		{`"messageType":"subscribeEvent","event":"alert"`, `"messageType":"unsubscribeEvent","event":"alert"`, lmos.TypeSubscribeEvent, "alert", lmos.TypeEvent},
		{`"messageType":"subscribeAllEvents"`, `"messageType":"unsubscribeAllEvents"`, lmos.TypeSubscribeAllEvents, "tick", lmos.TypeEvent},
		{`"messageType":"observeProperty","name":"temperature"`, `"messageType":"unobserveProperty","name":"temperature"`, lmos.TypeObserveProperty, "temperature", lmos.TypePropertyReading},
	}
	for _, tc := range cases {
		t.Run(string(tc.kind), func(t *testing.T) {
			messageID, answer := c.send(agentID, tc.subscribe)
			if answer != gateway.AnswerStream {
				t.Fatalf("answer %d", answer)
			}
			subscription := agent.Next(t)
			for i := range 3 {
				if n := agent.Emit(agentID, tc.kind, tc.name, json.RawMessage(fmt.Sprintf(`"%d"`, i))); n != 1 {
					t.Fatalf("the agent holds %d matching subscriptions", n)
				}
				reply, r := c.reply()
				if reply.Type() != tc.want || reply.CorrelationID != messageID || r.Final {
					t.Fatalf("reply %s: want a non-final %s for %s", r.Data, tc.want, messageID)
				}
			}
			if _, answer := c.send(agentID, tc.unsubscribe); answer != gateway.AnswerNone {
				t.Errorf("unsubscribing answered %d", answer)
			}
			ended := agent.Next(t)
			if ended.CorrelationID != subscription.CorrelationID {
				t.Errorf("the upstream unsubscription names %s, want the subscription %s", ended.CorrelationID, subscription.CorrelationID)
			}
			waitFor(t, func() bool { return agent.SubscriptionCount() == 0 })
			c.noReply()
		})
	}
}

func TestConsumerLeavingEndsItsSubscriptionsUpstream(t *testing.T) {
	f, agent := newAgentFixture(t)
	c := f.open(t, gateway.Consumer{})
	c.send(agentID, `"messageType":"subscribeEvent","event":"alert"`)
	c.send(agentID, `"messageType":"observeProperty","name":"temperature"`)
	c.send(agentID, `"messageType":"subscribeAllEvents"`)
	subscribed := map[string]lmos.Type{}
	for range 3 {
		m := agent.Next(t)
		subscribed[m.CorrelationID] = m.Type()
	}
	other := f.open(t, gateway.Consumer{})
	other.send(agentID, `"messageType":"subscribeEvent","event":"alert"`)
	agent.Next(t)

	c.session.Close()
	ends := map[lmos.Type]lmos.Type{
		lmos.TypeSubscribeEvent:     lmos.TypeUnsubscribeEvent,
		lmos.TypeObserveProperty:    lmos.TypeUnobserveProperty,
		lmos.TypeSubscribeAllEvents: lmos.TypeUnsubscribeAllEvents,
	}
	for range 3 {
		m := agent.Next(t)
		kind, ok := subscribed[m.CorrelationID]
		if !ok || ends[kind] != m.Type() {
			t.Fatalf("upstream got %s for %s", m.Type(), m.CorrelationID)
		}
		delete(subscribed, m.CorrelationID)
	}
	waitFor(t, func() bool { return agent.SubscriptionCount() == 1 })
	agent.Emit(agentID, lmos.TypeSubscribeEvent, "alert", json.RawMessage(`"still here"`))
	if reply, _ := other.reply(); reply.Type() != lmos.TypeEvent {
		t.Errorf("the other consumer got %s", reply.Type())
	}
}

func TestManyConsumersShareOneUpstreamConnection(t *testing.T) {
	f, agent := newAgentFixture(t)
	const consumers, requests = 20, 50
	var wg sync.WaitGroup
	for i := range consumers {
		c := f.open(t, gateway.Consumer{ID: fmt.Sprintf("urn:test:consumer-%d", i)})
		wg.Go(func() {
			for j := range requests {
				text := fmt.Sprintf("%d-%d", i, j)
				messageID, _ := c.send(agentID, `"messageType":"invokeAction","action":"echo","input":{"text":"`+text+`"}`)
				reply, _ := c.reply()
				status, ok := reply.Body.(*lmos.ActionStatus)
				if !ok || reply.CorrelationID != messageID || string(status.Output) != `{"text":"`+text+`"}` {
					t.Errorf("consumer %d request %d: reply %+v", i, j, reply)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := agent.Accepted.Load(); n != 1 {
		t.Errorf("the agent accepted %d connections, want 1 shared", n)
	}
}

func TestUpstreamDyingFailsItsRequestsAndIsRedialed(t *testing.T) {
	f, agent := newAgentFixture(t)
	c := f.open(t, gateway.Consumer{})
	subscription, _ := c.send(agentID, `"messageType":"subscribeEvent","event":"alert"`)
	agent.Next(t)
	dying, _ := c.send(agentID, `"messageType":"invokeAction","action":"die"`)
	agent.Next(t)
	failed := c.errorReplies(2, http.StatusBadGateway)
	if failed[subscription] == nil || failed[dying] == nil {
		t.Errorf("failed %v, want the subscription %s and the action %s", failed, subscription, dying)
	}
	messageID, _ := c.send(agentID, `"messageType":"readProperty","name":"temperature"`)
	agent.Next(t)
	if reply, _ := c.reply(); reply.Type() != lmos.TypePropertyReading || reply.CorrelationID != messageID {
		t.Errorf("after the upstream died: %s", reply.Type())
	}
	if n := agent.Accepted.Load(); n != 2 {
		t.Errorf("the agent accepted %d connections, want 2", n)
	}
}

func TestReplyTimeout(t *testing.T) {
	f, agent := newAgentFixture(t, func(c *gateway.Config) { c.ReplyTimeout = 100 * time.Millisecond })
	c := f.open(t, gateway.Consumer{})
	messageID, _ := c.send(agentID, `"messageType":"invokeAction","action":"silent"`)
	agent.Next(t)
	c.errorReply(http.StatusGatewayTimeout, messageID)
}

// TestActionTimeout: an action that never reaches a final status is given up after the
// action timeout, and its in-flight slot is free again.
func TestActionTimeout(t *testing.T) {
	f, agent := newAgentFixture(t, func(c *gateway.Config) {
		c.MaxInFlight, c.ReplyTimeout, c.ActionTimeout = 1, 50*time.Millisecond, time.Second
	})
	c := f.open(t, gateway.Consumer{})
	messageID, _ := c.send(agentID, `"messageType":"invokeAction","action":"stall"`)
	agent.Next(t)
	if reply, r := c.reply(); reply.Type() != lmos.TypeActionStatus || r.Final {
		t.Fatalf("first reply %s (final %t), want the pending status", reply.Type(), r.Final)
	}
	// The reply timeout no longer applies once the Thing has answered.
	time.Sleep(200 * time.Millisecond)
	c.noReply()
	if e := c.errorReply(http.StatusGatewayTimeout, messageID); !strings.Contains(e.Detail, "did not finish within 1s") {
		t.Errorf("detail %q", e.Detail)
	}
	c.send(agentID, `"messageType":"readProperty","name":"temperature"`)
	if reply, _ := c.reply(); reply.Type() != lmos.TypePropertyReading {
		t.Errorf("after the action timed out: %s, want its slot free", reply.Type())
	}
}

func TestConnectFailure(t *testing.T) {
	f := newFixture(t, func(c *gateway.Config) { c.ConnectTimeout = time.Second })
	f.register(t, agentID, lmostest.AgentTD(agentID, "ws://127.0.0.1:1/agent"))
	c := f.open(t, gateway.Consumer{})
	messageID, _ := c.send(agentID, `"messageType":"readProperty","name":"temperature"`)
	if e := c.errorReply(http.StatusBadGateway, messageID); !strings.Contains(e.Detail, "could not connect") {
		t.Errorf("detail %q", e.Detail)
	}
}

func TestRefusals(t *testing.T) {
	f, agent := newAgentFixture(t, func(c *gateway.Config) { c.MaxMessageBytes = 2048 })
	f.register(t, "urn:test:expiring", strings.Replace(lmostest.AgentTD("urn:test:expiring", agent.URL()), `"title"`, `"registration":{"ttl":60},"title"`, 1))
	f.register(t, "urn:test:formless", `{"@context":"https://www.w3.org/2022/wot/td/v1.1","id":"urn:test:formless","title":"No forms",`+
		`"securityDefinitions":{"nosec_sc":{"scheme":"nosec"}},"security":"nosec_sc","actions":{"run":{"forms":[{"href":"mqtt://broker.example/run"}]}}}`)
	f.clock.Advance(2 * time.Minute)
	cases := []struct {
		name    string
		frame   string // a whole frame; when empty, members for agentID
		thing   string
		members string
		status  int
		detail  string
	}{
		{name: "not JSON", frame: `{"thingId":`, status: 400},
		{name: "not a UUIDv4", frame: `{"thingId":"urn:test:agent","messageId":"1234","messageType":"readProperty","name":"temperature"}`, status: 400, detail: "messageId"},
		{name: "unknown type", members: `"messageType":"shout"`, status: 400},
		{name: "unknown Thing", thing: "urn:test:nobody", members: `"messageType":"readProperty","name":"x"`, status: 404, detail: "urn:test:nobody"},
		{name: "expired Thing", thing: "urn:test:expiring", members: `"messageType":"readProperty","name":"temperature"`, status: 404},
		{name: "unknown action", members: `"messageType":"invokeAction","action":"fly"`, status: 404, detail: "fly"},
		{name: "unknown property", members: `"messageType":"readProperty","name":"humidity"`, status: 404},
		{name: "unknown event", members: `"messageType":"subscribeEvent","event":"quake"`, status: 404},
		{name: "write read-only", members: `"messageType":"writeProperty","name":"temperature","data":3`, status: 405},
		{name: "read write-only", members: `"messageType":"readProperty","name":"secret"`, status: 405},
		{name: "observe non-observable", members: `"messageType":"observeProperty","name":"target"`, status: 405},
		{name: "input against schema", members: `"messageType":"invokeAction","action":"echo","input":{"lang":"en"}`, status: 400, detail: "text"},
		{name: "written value against schema", members: `"messageType":"writeProperty","name":"target","data":-1`, status: 400},
		{name: "one of several written values", members: `"messageType":"writeMultipleProperties","data":{"target":1,"mode":"turbo"}`, status: 400, detail: "mode"},
		{name: "reply type from a consumer", members: `"messageType":"propertyReading","name":"temperature","value":1,"timestamp":"2026-01-01T00:00:00Z"`, status: 400},
		{name: "unsubscribe without subscription", members: `"messageType":"unsubscribeEvent","event":"alert"`, status: 404, detail: "subscription"},
		{name: "no usable form", thing: "urn:test:formless", members: `"messageType":"invokeAction","action":"run"`, status: 501},
		{name: "too large", members: `"messageType":"invokeAction","action":"echo","input":{"text":"` + strings.Repeat("x", 3000) + `"}`, status: 413},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := f.open(t, gateway.Consumer{})
			messageID := ""
			frame := tc.frame
			if frame == "" {
				thing := tc.thing
				if thing == "" {
					thing = agentID
				}
				messageID = "3c5e1f0e-9a7b-4c1d-8e2f-0a1b2c3d4e5f"
				frame = fmt.Sprintf(`{"thingId":%q,"messageId":%q,%s}`, thing, messageID, tc.members)
			}
			if answer := c.session.Handle(context.Background(), []byte(frame)); answer != gateway.AnswerOne {
				t.Errorf("answer %d", answer)
			}
			if tc.status == http.StatusRequestEntityTooLarge {
				messageID = "" // the message is not read
			}
			e := c.errorReply(tc.status, messageID)
			if !strings.Contains(e.Detail, tc.detail) || e.Title != http.StatusText(tc.status) || !strings.HasPrefix(e.Instance, "urn:uuid:") {
				t.Errorf("error %+v, want detail with %q", e, tc.detail)
			}
			agent.NothingReceived(t)
		})
	}
}

func TestRateLimitPerConnection(t *testing.T) {
	f, agent := newAgentFixture(t, func(c *gateway.Config) { c.MessagesPerSecond = 5 })
	c := f.open(t, gateway.Consumer{})
	other := f.open(t, gateway.Consumer{})
	allowed, limited := 0, 0
	for range 15 {
		c.send(agentID, `"messageType":"readProperty","name":"temperature"`)
		reply, _ := c.reply()
		if e, ok := reply.Body.(*lmos.Error); ok && e.Status == "429" {
			limited++
		} else {
			allowed++
		}
	}
	if allowed < 10 || allowed > 11 || limited < 4 {
		t.Errorf("allowed %d, limited %d: want the burst of 10 (at most one more refilled) and the rest refused", allowed, limited)
	}
	for range allowed {
		agent.Next(t)
	}
	other.send(agentID, `"messageType":"readProperty","name":"temperature"`)
	if reply, _ := other.reply(); reply.Type() != lmos.TypePropertyReading {
		t.Error("another connection was limited too")
	}
}

func TestMaxInFlight(t *testing.T) {
	f, agent := newAgentFixture(t, func(c *gateway.Config) { c.MaxInFlight = 1 })
	c := f.open(t, gateway.Consumer{})
	c.send(agentID, `"messageType":"invokeAction","action":"silent"`)
	agent.Next(t)
	messageID, _ := c.send(agentID, `"messageType":"readProperty","name":"temperature"`)
	c.errorReply(http.StatusServiceUnavailable, messageID)
	agent.NothingReceived(t)
	c.session.Close()
	d := f.open(t, gateway.Consumer{})
	d.send(agentID, `"messageType":"readProperty","name":"temperature"`)
	if reply, _ := d.reply(); reply.Type() != lmos.TypePropertyReading {
		t.Errorf("after the waiting request's consumer left: %s", reply.Type())
	}
}

// TestMaxWaitingPerConnection: one connection cannot take every in-flight slot; another
// still gets through.
func TestMaxWaitingPerConnection(t *testing.T) {
	f, agent := newAgentFixture(t, func(c *gateway.Config) { c.MaxWaiting = 2 })
	c := f.open(t, gateway.Consumer{})
	for range 2 {
		c.send(agentID, `"messageType":"invokeAction","action":"silent"`)
		agent.Next(t)
	}
	messageID, _ := c.send(agentID, `"messageType":"readProperty","name":"temperature"`)
	if e := c.errorReply(http.StatusTooManyRequests, messageID); !strings.Contains(e.Detail, "2 requests waiting") {
		t.Errorf("detail %q", e.Detail)
	}
	agent.NothingReceived(t)
	other := f.open(t, gateway.Consumer{})
	other.send(agentID, `"messageType":"readProperty","name":"temperature"`)
	if reply, _ := other.reply(); reply.Type() != lmos.TypePropertyReading {
		t.Errorf("another connection: %s", reply.Type())
	}
}

func TestMaxSubscriptions(t *testing.T) {
	f, agent := newAgentFixture(t, func(c *gateway.Config) { c.MaxSubscriptions = 2 })
	c := f.open(t, gateway.Consumer{})
	c.send(agentID, `"messageType":"subscribeEvent","event":"alert"`)
	c.send(agentID, `"messageType":"subscribeEvent","event":"tick"`)
	messageID, _ := c.send(agentID, `"messageType":"observeProperty","name":"temperature"`)
	c.errorReply(http.StatusTooManyRequests, messageID)
	c.send(agentID, `"messageType":"unsubscribeEvent","event":"tick"`)
	c.send(agentID, `"messageType":"observeProperty","name":"temperature"`)
	for _, want := range []lmos.Type{lmos.TypeSubscribeEvent, lmos.TypeSubscribeEvent, lmos.TypeUnsubscribeEvent, lmos.TypeObserveProperty} {
		if m := agent.Next(t); m.Type() != want {
			t.Fatalf("upstream got %s, want %s", m.Type(), want)
		}
	}
}

func TestAllowedHosts(t *testing.T) {
	f, agent := newAgentFixture(t, func(c *gateway.Config) { c.AllowedHosts = []string{"*.example.com"} })
	c := f.open(t, gateway.Consumer{})
	messageID, _ := c.send(agentID, `"messageType":"readProperty","name":"temperature"`)
	if e := c.errorReply(http.StatusForbidden, messageID); !strings.Contains(e.Detail, "127.0.0.1") {
		t.Errorf("detail %q", e.Detail)
	}
	agent.NothingReceived(t)
	if _, err := gateway.New(gateway.Config{SelfID: "http://x/lmos", AllowedHosts: []string{"[a-"}}, f.dir, nil); err == nil {
		t.Error("a malformed host pattern was accepted")
	}
}

func TestChangedTDIsUsedAtOnce(t *testing.T) {
	f, agent := newAgentFixture(t)
	c := f.open(t, gateway.Consumer{})
	c.send(agentID, `"messageType":"invokeAction","action":"echo","input":{"text":"a"}`)
	agent.Next(t)
	c.reply()
	f.register(t, agentID, strings.Replace(lmostest.AgentTD(agentID, agent.URL()), `"echo"`, `"echoed"`, 1))
	waitFor(t, func() bool {
		messageID, _ := c.send(agentID, `"messageType":"invokeAction","action":"echo","input":{"text":"a"}`)
		reply, _ := c.reply()
		e, ok := reply.Body.(*lmos.Error)
		if !ok {
			agent.Next(t)
		}
		return ok && e.Status == "404" && reply.CorrelationID == messageID
	})
	if err := f.dir.Delete(context.Background(), agentID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		c.send(agentID, `"messageType":"readProperty","name":"temperature"`)
		reply, _ := c.reply()
		e, ok := reply.Body.(*lmos.Error)
		if !ok {
			agent.Next(t)
		}
		return ok && e.Status == "404"
	})
}

func TestSessionsEndWhenTheGatewayStops(t *testing.T) {
	f, _ := newAgentFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	gw, err := gateway.New(gateway.Config{SelfID: "http://dir.example/lmos"}, f.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { defer close(stopped); gw.Run(ctx) }()
	s := gw.Open(gateway.Consumer{})
	cancel()
	<-stopped
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the session outlived the gateway")
	}
	if !errors.Is(s.Err(), gateway.ErrStopped) {
		t.Errorf("err %v", s.Err())
	}
	if late := gw.Open(gateway.Consumer{}); !errors.Is(late.Err(), gateway.ErrStopped) {
		t.Error("a session opened after the stop is open")
	}
}

// waitFor polls cond until it holds, for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	testsync.Await(t, "the condition", 5*time.Second, cond)
}

func TestUnsubscribeWithCorrelationEndsOneSubscription(t *testing.T) {
	f, agent := newAgentFixture(t)
	c := f.open(t, gateway.Consumer{})
	first, _ := c.send(agentID, `"messageType":"subscribeEvent","event":"alert"`)
	c.send(agentID, `"messageType":"subscribeEvent","event":"alert"`)
	firstUpstream := agent.Next(t)
	agent.Next(t)
	if _, answer := c.send(agentID, `"correlationId":"`+first+`","messageType":"unsubscribeEvent","event":"alert"`); answer != gateway.AnswerNone {
		t.Fatalf("answer %d", answer)
	}
	if m := agent.Next(t); m.CorrelationID != firstUpstream.CorrelationID {
		t.Errorf("ended %s, want %s", m.CorrelationID, firstUpstream.CorrelationID)
	}
	waitFor(t, func() bool { return agent.SubscriptionCount() == 1 })
}

func TestHungUpstreamIsDroppedByPing(t *testing.T) {
	f, agent := newAgentFixture(t, func(c *gateway.Config) {
		c.PingInterval, c.ConnectTimeout = 100*time.Millisecond, 300*time.Millisecond
	})
	c := f.open(t, gateway.Consumer{})
	subscription, _ := c.send(agentID, `"messageType":"subscribeEvent","event":"alert"`)
	agent.Next(t)
	frozen, _ := c.send(agentID, `"messageType":"invokeAction","action":"freeze"`)
	agent.Next(t)
	failed := c.errorReplies(2, http.StatusBadGateway)
	for _, id := range []string{subscription, frozen} {
		if e := failed[id]; e == nil || !strings.Contains(e.Detail, "ping") {
			t.Errorf("%s: %+v, want a failed ping", id, e)
		}
	}
}

func TestKeepAliveBeyondTheCachedExpiry(t *testing.T) {
	f, agent := newAgentFixture(t)
	const id = "urn:test:renewed"
	f.register(t, id, strings.Replace(lmostest.AgentTD(id, agent.URL()), `"title"`, `"registration":{"ttl":60},"title"`, 1))
	c := f.open(t, gateway.Consumer{})
	for range 2 { // the TD is in the gateway's cache after these
		c.send(id, `"messageType":"readProperty","name":"temperature"`)
		if reply, _ := c.reply(); reply.Type() != lmos.TypePropertyReading {
			t.Fatalf("reply %s", reply.Type())
		}
		agent.Next(t)
	}
	f.clock.Advance(50 * time.Second)
	if err := f.dir.Patch(context.Background(), id, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(20 * time.Second) // past the first expiry, within the renewed one
	c.send(id, `"messageType":"readProperty","name":"temperature"`)
	if reply, r := c.reply(); reply.Type() != lmos.TypePropertyReading {
		t.Fatalf("after a keep-alive: %s", r.Data)
	}
	agent.Next(t)
	f.clock.Advance(time.Minute)
	messageID, _ := c.send(id, `"messageType":"readProperty","name":"temperature"`)
	c.errorReply(http.StatusNotFound, messageID)
}

func TestCancelNamesTheInvocation(t *testing.T) {
	f, agent := newAgentFixture(t)
	c := f.open(t, gateway.Consumer{})
	invocation, _ := c.send(agentID, `"messageType":"invokeAction","action":"silent"`)
	invoked := agent.Next(t)
	for _, follow := range []struct {
		members string
		want    string
		final   bool
	}{
		{`"messageType":"queryAction","action":"silent"`, "pending", false},
		{`"messageType":"cancelAction","action":"silent","reason":"enough"`, "canceled", true},
	} {
		if _, answer := c.send(agentID, `"correlationId":"`+invocation+`",`+follow.members); answer != gateway.AnswerNone {
			t.Errorf("answer %d: the replies come as the invocation's", answer)
		}
		if upstream := agent.Next(t); upstream.CorrelationID != invoked.CorrelationID {
			t.Errorf("upstream %s under %s, want the invocation's %s", upstream.Type(), upstream.CorrelationID, invoked.CorrelationID)
		}
		reply, r := c.reply()
		status, ok := reply.Body.(*lmos.ActionStatus)
		if !ok || status.Status != follow.want || reply.CorrelationID != invocation || r.Final != follow.final {
			t.Errorf("reply %s, want %s for the invocation (final %v)", r.Data, follow.want, follow.final)
		}
	}
	// Without an invocation in progress, a cancelAction is a request of its own.
	messageID, answer := c.send(agentID, `"messageType":"cancelAction","action":"silent"`)
	if answer != gateway.AnswerOne {
		t.Errorf("answer %d", answer)
	}
	if upstream := agent.Next(t); upstream.CorrelationID == invoked.CorrelationID {
		t.Error("a cancelAction of no invocation went under the ended invocation's id")
	}
	if reply, _ := c.reply(); reply.CorrelationID != messageID {
		t.Errorf("reply for %s, want %s", reply.CorrelationID, messageID)
	}
}
