package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/internal/lmostest"
	"github.com/lmosdir/lmosdir/lmos"
	"github.com/lmosdir/lmosdir/lmos/aos"
	"github.com/lmosdir/lmosdir/lmos/gateway"
)

const lmosAgentID = "urn:test:agent"

// startGateway runs a gateway over dir until the test ends.
func startGateway(t *testing.T, dir *directory.Service, cfg gateway.Config) *gateway.Gateway {
	t.Helper()
	cfg.SelfID = "http://dir.example:8080/lmos"
	gw, err := gateway.New(cfg, dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); gw.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-stopped })
	return gw
}

// newGatewayFixture is a directory with a gateway and a registered WebSocket agent.
func newGatewayFixture(t *testing.T, cfg gateway.Config, tune ...func(*Config)) (*fixture, *lmostest.Agent) {
	t.Helper()
	f := newFixtureWith(t, "sqlite", fixtureOptions{withoutExpansion: true, gateway: &cfg}, tune...)
	agent := lmostest.NewAgent(t)
	f.put("/things/"+lmosAgentID, lmostest.AgentTD(lmosAgentID, agent.URL())).want(t, http.StatusCreated)
	return f, agent
}

func (f *fixture) dialLMOS(query string) *websocket.Conn {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.url, "http")+"/lmos"+query, &websocket.DialOptions{Subprotocols: []string{lmos.Subprotocol}})
	if res != nil && res.Body != nil {
		res.Body.Close()
	}
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = conn.CloseNow() })
	if conn.Subprotocol() != lmos.Subprotocol {
		f.t.Fatalf("subprotocol %q", conn.Subprotocol())
	}
	return conn
}

func writeFrame(t *testing.T, conn *websocket.Conn, frame string) {
	t.Helper()
	if err := conn.Write(context.Background(), websocket.MessageText, []byte(frame)); err != nil {
		t.Fatal(err)
	}
}

func readMessage(t *testing.T, conn *websocket.Conn) *lmos.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, data, err := conn.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := lmos.Parse(data)
	if err != nil {
		t.Fatalf("invalid message %s: %v", data, err)
	}
	return m
}

func lmosFrame(thing, members string) (messageID, frame string) {
	messageID = uuid.NewString()
	return messageID, fmt.Sprintf(`{"thingID":%q,"messageID":%q,%s}`, thing, messageID, members)
}

func TestLMOSHandshake(t *testing.T) {
	f, _ := newGatewayFixture(t, gateway.Config{})
	r := f.get("/lmos").want(t, http.StatusUpgradeRequired)
	r.problem(t)
	if r.header.Get("Upgrade") != "websocket" {
		t.Errorf("Upgrade %q", r.header.Get("Upgrade"))
	}
	f.do(http.MethodHead, "/lmos", "", "").want(t, http.StatusUpgradeRequired)
	upgrade := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"}, "Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}}
	r = f.send(http.MethodGet, "/lmos", upgrade, "").want(t, http.StatusBadRequest)
	if p := r.problem(t); !strings.Contains(p.Detail, "lmosprotocol") {
		t.Errorf("detail %q", p.Detail)
	}
	upgrade.Set("Sec-Websocket-Protocol", "chat, v1.lmos")
	f.send(http.MethodGet, "/lmos", upgrade, "").want(t, http.StatusBadRequest).problem(t)
	upgrade.Set("Sec-Websocket-Protocol", "chat, lmosprotocol")
	f.send(http.MethodGet, "/lmos?user=me", upgrade, "").want(t, http.StatusBadRequest).problem(t)
	f.do(http.MethodPut, "/lmos", "", "").want(t, http.StatusMethodNotAllowed).problem(t)
}

func TestLMOSWebSocket(t *testing.T) {
	f, agent := newGatewayFixture(t, gateway.Config{MaxMessageBytes: 4096})
	conn := f.dialLMOS("?consumer=urn:test:consumer")

	readID, frame := lmosFrame(lmosAgentID, `"messageType":"readProperty","name":"temperature"`)
	writeFrame(t, conn, frame)
	if m := readMessage(t, conn); m.Type() != lmos.TypePropertyReading || m.CorrelationID != readID || m.Spelling() != lmos.SpellingUpperID {
		t.Errorf("reply %s to %s", m.Type(), m.CorrelationID)
	}
	agent.Next(t)

	// An oversized message is answered, and the connection stays usable.
	_, frame = lmosFrame(lmosAgentID, `"messageType":"invokeAction","action":"echo","input":{"text":"`+strings.Repeat("x", 5000)+`"}`)
	writeFrame(t, conn, frame)
	if m := readMessage(t, conn); m.Type() != lmos.TypeError || m.Body.(*lmos.Error).Status != "413" {
		t.Errorf("oversized message: %s", m.Type())
	}
	agent.NothingReceived(t)

	subscribeID, frame := lmosFrame(lmosAgentID, `"messageType":"subscribeEvent","event":"alert"`)
	writeFrame(t, conn, frame)
	subscription := agent.Next(t)
	agent.Emit(lmosAgentID, lmos.TypeSubscribeEvent, "alert", json.RawMessage(`"fire"`))
	if m := readMessage(t, conn); m.Type() != lmos.TypeEvent || m.CorrelationID != subscribeID {
		t.Errorf("event %s for %s", m.Type(), m.CorrelationID)
	}
	// Leaving ends the subscription upstream.
	if err := conn.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
	if m := agent.Next(t); m.Type() != lmos.TypeUnsubscribeEvent || m.CorrelationID != subscription.CorrelationID {
		t.Errorf("after the consumer left the agent got %s for %s", m.Type(), m.CorrelationID)
	}
}

func TestLMOSWebSocketFrameFarTooLarge(t *testing.T) {
	f, _ := newGatewayFixture(t, gateway.Config{MaxMessageBytes: 1024})
	conn := f.dialLMOS("")
	writeFrame(t, conn, strings.Repeat(" ", 5000))
	_, _, err := conn.Read(context.Background())
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Errorf("read after a frame beyond 4x the limit: %v", err)
	}
}

func TestPostMessage(t *testing.T) {
	f, agent := newGatewayFixture(t, gateway.Config{})
	path := "/things/" + lmosAgentID + "/messages"

	t.Run("one reply", func(t *testing.T) {
		id, frame := lmosFrame(lmosAgentID, `"messageType":"writeProperty","name":"target","data":3`)
		r := f.do(http.MethodPost, path, mediaJSON, frame).want(t, http.StatusOK)
		m, err := lmos.Parse(r.body)
		if err != nil || m.Type() != lmos.TypePropertyReadings || m.CorrelationID != id || r.header.Get("Content-Type") != mediaJSON {
			t.Errorf("reply %s (%v)", r.body, err)
		}
		agent.Next(t)
	})
	t.Run("refusal", func(t *testing.T) {
		id, frame := lmosFrame(lmosAgentID, `"messageType":"writeProperty","name":"temperature","data":3`)
		r := f.do(http.MethodPost, path, mediaJSON, frame).want(t, http.StatusOK)
		m, err := lmos.Parse(r.body)
		if err != nil || m.Type() != lmos.TypeError || m.Body.(*lmos.Error).Status != "405" || m.CorrelationID != id {
			t.Errorf("reply %s (%v)", r.body, err)
		}
		agent.NothingReceived(t)
	})
	t.Run("final action status only", func(t *testing.T) {
		_, frame := lmosFrame(lmosAgentID, `"messageType":"invokeAction","action":"progress"`)
		r := f.do(http.MethodPost, path, mediaJSON, frame).want(t, http.StatusOK)
		if m, err := lmos.Parse(r.body); err != nil || m.Body.(*lmos.ActionStatus).Status != "completed" {
			t.Errorf("reply %s", r.body)
		}
		agent.Next(t)
	})
	t.Run("action progress as events", func(t *testing.T) {
		_, frame := lmosFrame(lmosAgentID, `"messageType":"invokeAction","action":"progress"`)
		r := f.send(http.MethodPost, path, http.Header{"Content-Type": {mediaJSON}, "Accept": {"text/event-stream, application/json"}}, frame).want(t, http.StatusOK)
		if ct := r.header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q", ct)
		}
		var statuses []string
		for _, block := range strings.Split(strings.TrimSpace(string(r.body)), "\n\n") {
			data, ok := strings.CutPrefix(block, "event: message\ndata: ")
			m, err := lmos.Parse([]byte(data))
			if !ok || err != nil {
				t.Fatalf("event %q", block)
			}
			statuses = append(statuses, m.Body.(*lmos.ActionStatus).Status)
		}
		if got := strings.Join(statuses, ","); got != "pending,pending,completed" {
			t.Errorf("statuses %s", got)
		}
		agent.Next(t)
	})
	t.Run("subscription as events until the client leaves", func(t *testing.T) {
		id, frame := lmosFrame(lmosAgentID, `"messageType":"subscribeEvent","event":"alert"`)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url+path, strings.NewReader(frame))
		req.Header.Set("Content-Type", mediaJSON)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("Content-Type %q", res.Header.Get("Content-Type"))
		}
		subscription := agent.Next(t)
		agent.Emit(lmosAgentID, lmos.TypeSubscribeEvent, "alert", json.RawMessage(`"smoke"`))
		lines := bufio.NewReader(res.Body)
		for _, want := range []string{"event: message\n", "data: "} {
			line, err := lines.ReadString('\n')
			if err != nil || !strings.HasPrefix(line, want) {
				t.Fatalf("line %q (%v), want %q", line, err, want)
			}
			if want == "data: " {
				if m, err := lmos.Parse([]byte(strings.TrimPrefix(line, want))); err != nil || m.CorrelationID != id || m.Type() != lmos.TypeEvent {
					t.Errorf("event %q", line)
				}
			}
		}
		cancel()
		if m := agent.Next(t); m.Type() != lmos.TypeUnsubscribeEvent || m.CorrelationID != subscription.CorrelationID {
			t.Errorf("after the client left the agent got %s", m.Type())
		}
	})
	t.Run("HTTP-level errors", func(t *testing.T) {
		_, frame := lmosFrame("urn:test:other", `"messageType":"readProperty","name":"temperature"`)
		f.do(http.MethodPost, path, mediaJSON, frame).want(t, http.StatusBadRequest).problem(t)
		f.do(http.MethodPost, path, mediaJSON, `[1]`).want(t, http.StatusBadRequest).problem(t)
		f.do(http.MethodPost, path, mediaJSON, `{"thingId":`).want(t, http.StatusBadRequest).problem(t)
		f.do(http.MethodPost, path, "text/plain", frame).want(t, http.StatusUnsupportedMediaType).problem(t)
		f.do(http.MethodPost, path, mediaJSON, `{"pad":"`+strings.Repeat("x", 1<<20)+`"}`).want(t, http.StatusRequestEntityTooLarge).problem(t)
		f.do(http.MethodPost, path+"?color=red", mediaJSON, frame).want(t, http.StatusBadRequest).problem(t)
		r := f.do(http.MethodPost, "/things/"+lmosAgentID, mediaJSON, frame).want(t, http.StatusMethodNotAllowed)
		r.problem(t)
		if !strings.Contains(r.header.Get("Allow"), "PUT") {
			t.Errorf("Allow %q", r.header.Get("Allow"))
		}
		agent.NothingReceived(t)
	})
}

func TestGatewayOff(t *testing.T) {
	f := newFixture(t, "sqlite")
	f.get("/lmos").want(t, http.StatusServiceUnavailable).problem(t)
	_, frame := lmosFrame("urn:x", `"messageType":"readProperty","name":"t"`)
	f.do(http.MethodPost, "/things/urn:x/messages", mediaJSON, frame).want(t, http.StatusServiceUnavailable).problem(t)
}

func TestReadyzAsksTheGuardian(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	guardian, err := aos.NewClient(down.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := newGatewayFixture(t, gateway.Config{Guardian: guardian})
	r := f.get("/readyz").want(t, http.StatusServiceUnavailable)
	if p := r.problem(t); !strings.Contains(p.Detail, "guardian") {
		t.Errorf("detail %q", p.Detail)
	}
	open, _ := newGatewayFixture(t, gateway.Config{Guardian: guardian, GuardianFailOpen: true})
	open.get("/readyz").want(t, http.StatusOK)
}

func TestConsumerThatStopsAnsweringIsDropped(t *testing.T) {
	f, agent := newGatewayFixture(t, gateway.Config{PingInterval: 100 * time.Millisecond, ConnectTimeout: 300 * time.Millisecond})
	conn := f.dialLMOS("")
	_, frame := lmosFrame(lmosAgentID, `"messageType":"subscribeEvent","event":"alert"`)
	writeFrame(t, conn, frame)
	subscription := agent.Next(t)
	// The consumer never reads, so it never answers the gateway's pings.
	if m := agent.Next(t); m.Type() != lmos.TypeUnsubscribeEvent || m.CorrelationID != subscription.CorrelationID {
		t.Errorf("the agent got %s for %s, want the subscription ended", m.Type(), m.CorrelationID)
	}
}

func TestMessageStreamKeepAlive(t *testing.T) {
	f, agent := newGatewayFixture(t, gateway.Config{}, func(c *Config) { c.EventKeepAlive = 50 * time.Millisecond })
	_, frame := lmosFrame(lmosAgentID, `"messageType":"subscribeEvent","event":"alert"`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/things/"+lmosAgentID+"/messages", strings.NewReader(frame))
	req.Header.Set("Content-Type", mediaJSON)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	agent.Next(t)
	lines := bufio.NewReader(res.Body)
	for range 2 {
		line, err := lines.ReadString('\n')
		if err != nil || line != ": keep-alive\n" {
			t.Fatalf("line %q (%v), want a keep-alive comment", line, err)
		}
		if blank, _ := lines.ReadString('\n'); blank != "\n" {
			t.Fatalf("line %q after the comment", blank)
		}
	}
}
