package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/lmosdir/lmosdir/internal/lmostest"
	"github.com/lmosdir/lmosdir/lmos"
	"github.com/lmosdir/lmosdir/lmos/aos"
	"github.com/lmosdir/lmosdir/lmos/gateway"
)

// guardian is an AOS guardian over HTTP that decides as told and records its calls.
type guardian struct {
	server *httptest.Server
	calls  chan guardianCall

	mu       sync.Mutex
	decision string // the result object of steps/toolCallRequest
	down     bool
}

type guardianCall struct {
	Method      string          `json:"method"`
	Params      json.RawMessage `json:"params"`
	TraceParent string          `json:"-"`
}

func newGuardian(t *testing.T, decision string) *guardian {
	t.Helper()
	g := &guardian{calls: make(chan guardianCall, 100), decision: decision}
	g.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			guardianCall
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("guardian request %s: %v", body, err)
		}
		g.mu.Lock()
		decision, down := g.decision, g.down
		g.mu.Unlock()
		if down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		req.TraceParent = r.Header.Get("traceparent")
		g.calls <- req.guardianCall
		result := `{"decision":"allow","message":"noted"}`
		switch req.Method {
		case "steps/toolCallRequest":
			if strings.HasPrefix(decision, `{"code"`) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":`+decision+`}`)
				return
			}
			result = decision
		case "ping":
			result = `{"status":"connected","version":"1.0","timestamp":"2026-11-21T10:00:00Z"}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
	}))
	t.Cleanup(g.server.Close)
	return g
}

func (g *guardian) set(decision string, down bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.decision, g.down = decision, down
}

func (g *guardian) next(t *testing.T, method string) map[string]any {
	t.Helper()
	for {
		select {
		case c := <-g.calls:
			if c.Method != method {
				continue
			}
			var params map[string]any
			if err := json.Unmarshal(c.Params, &params); err != nil {
				t.Fatal(err)
			}
			return params
		case <-time.After(5 * time.Second):
			t.Fatalf("the guardian got no %s", method)
			return nil
		}
	}
}

func guardedFixture(t *testing.T, g *guardian, failOpen bool) (*fixture, *lmostest.Agent) {
	t.Helper()
	client, err := aos.NewClient(g.server.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return newAgentFixture(t, func(c *gateway.Config) {
		c.Guardian, c.GuardianFailOpen, c.GuardianTimeout = client, failOpen, time.Second
	})
}

func TestGuardianAllows(t *testing.T) {
	g := newGuardian(t, `{"decision":"allow","message":"fine"}`)
	f, agent := guardedFixture(t, g, false)
	consumerTD := strings.Replace(strings.Replace(lmostest.AgentTD("urn:test:consumer", agent.URL()), `"Test agent"`, `"Trip planner","version":{"instance":"2.1.0"}`, 1),
		`"@type":"lmos:Agent",`, `"@type":"lmos:Agent","lmos:metadata":{"lmos:vendor":{"lmos:name":"Acme","lmos:url":"https://acme.example"}},`, 1)
	f.register(t, "urn:test:consumer", consumerTD)
	c := f.open(t, gateway.Consumer{ID: "urn:test:consumer", Session: "session-7"})
	messageID, _ := c.send(agentID, `"messageType":"invokeAction","action":"echo","input":{"text":"hi","lang":"en"}`)

	params := g.next(t, "steps/toolCallRequest")
	call := params["toolCallRequest"].(map[string]any)
	if call["executionId"] != messageID || call["toolId"] != agentID+"#echo" {
		t.Errorf("tool call %v", call)
	}
	inputs, _ := json.Marshal(call["inputs"])
	if string(inputs) != `[{"name":"text","value":"hi"},{"name":"lang","value":"en"}]` {
		t.Errorf("inputs %s", inputs)
	}
	step := params["context"].(map[string]any)
	agentObject := step["agent"].(map[string]any)
	if agentObject["id"] != "urn:test:consumer" || agentObject["name"] != "Trip planner" || agentObject["version"] != "2.1.0" ||
		agentObject["provider"].(map[string]any)["name"] != "Acme" {
		t.Errorf("agent %v", agentObject)
	}
	tool := agentObject["tools"].([]any)[0].(map[string]any)
	args, _ := json.Marshal(tool["arguments"])
	if tool["id"] != agentID+"#echo" || string(args) != `[{"name":"text","required":true,"type":"string"},{"name":"lang","required":false,"type":"string"}]` {
		t.Errorf("tool %v, arguments %s", tool, args)
	}
	if step["session"].(map[string]any)["id"] != "session-7" || step["stepId"] != messageID || step["turnId"] != messageID {
		t.Errorf("step context %v", step)
	}

	if upstream := agent.Next(t); string(upstream.Body.(*lmos.InvokeAction).Input) != `{"text":"hi","lang":"en"}` {
		t.Errorf("forwarded %s", upstream.Body.(*lmos.InvokeAction).Input)
	}
	if reply, _ := c.reply(); reply.Type() != lmos.TypeActionStatus {
		t.Fatalf("reply %s", reply.Type())
	}
	result := g.next(t, "steps/toolCallResult")
	resultJSON, _ := json.Marshal(result["result"])
	if result["executionId"] != messageID || string(resultJSON) != `{"isError":false,"outputs":[{"kind":"text","text":"{\"text\":\"hi\",\"lang\":\"en\"}"}]}` {
		t.Errorf("tool call result %v %s", result["executionId"], resultJSON)
	}
}

func TestGuardianDenies(t *testing.T) {
	g := newGuardian(t, `{"decision":"deny","message":"echo is not for you"}`)
	f, agent := guardedFixture(t, g, false)
	c := f.open(t, gateway.Consumer{})
	messageID, _ := c.send(agentID, `"messageType":"invokeAction","action":"echo","input":{"text":"hi"}`)
	if e := c.errorReply(http.StatusForbidden, messageID); !strings.Contains(e.Detail, "echo is not for you") {
		t.Errorf("detail %q", e.Detail)
	}
	agent.NothingReceived(t)
	// Only actions are put to the guardian.
	c.send(agentID, `"messageType":"readProperty","name":"temperature"`)
	if reply, _ := c.reply(); reply.Type() != lmos.TypePropertyReading {
		t.Errorf("reading a property: %s", reply.Type())
	}
}

func TestGuardianModifies(t *testing.T) {
	g := newGuardian(t, `{"decision":"modify","message":"toned down","modifiedRequest":{"jsonrpc":"2.0","method":"steps/toolCallRequest",`+
		`"params":{"toolCallRequest":{"executionId":"x","toolId":"y","inputs":[{"name":"text","value":"HI (redacted)"}]}}}}`)
	f, agent := guardedFixture(t, g, false)
	c := f.open(t, gateway.Consumer{})
	c.send(agentID, `"messageType":"invokeAction","action":"echo","input":{"text":"hi","lang":"en"}`)
	if upstream := agent.Next(t); string(upstream.Body.(*lmos.InvokeAction).Input) != `{"text":"HI (redacted)"}` {
		t.Errorf("forwarded %s", upstream.Body.(*lmos.InvokeAction).Input)
	}
	c.reply()

	g.set(`{"decision":"modify","message":"broken","modifiedRequest":{"inputs":[{"name":"lang","value":"en"}]}}`, false)
	messageID, _ := c.send(agentID, `"messageType":"invokeAction","action":"echo","input":{"text":"hi"}`)
	if e := c.errorReply(http.StatusBadGateway, messageID); !strings.Contains(e.Detail, "text") {
		t.Errorf("a modified input the action refuses: %q", e.Detail)
	}
	agent.NothingReceived(t)
}

func TestGuardianUnavailable(t *testing.T) {
	for _, failOpen := range []bool{false, true} {
		t.Run(map[bool]string{false: "fails closed", true: "fails open"}[failOpen], func(t *testing.T) {
			g := newGuardian(t, `{"decision":"allow","message":"fine"}`)
			f, agent := guardedFixture(t, g, failOpen)
			if err := f.gw.Ready(context.Background()); err != nil {
				t.Fatalf("ready with a live guardian: %v", err)
			}
			g.set("", true)
			c := f.open(t, gateway.Consumer{})
			messageID, _ := c.send(agentID, `"messageType":"invokeAction","action":"echo","input":{"text":"hi"}`)
			if failOpen {
				agent.Next(t)
				if reply, _ := c.reply(); reply.Type() != lmos.TypeActionStatus {
					t.Errorf("reply %s", reply.Type())
				}
				return
			}
			c.errorReply(http.StatusServiceUnavailable, messageID)
			agent.NothingReceived(t)
		})
	}
}

func TestGuardianReadiness(t *testing.T) {
	g := newGuardian(t, `{"decision":"allow","message":"fine"}`)
	f, _ := guardedFixture(t, g, false)
	if err := f.gw.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	g.next(t, "ping")
	g.server.Close()
	client, _ := aos.NewClient(g.server.URL, nil)
	gw, err := gateway.New(gateway.Config{SelfID: "http://x/lmos", Guardian: client}, f.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Ready(context.Background()); err == nil {
		t.Error("ready without its guardian")
	}
}

func TestGuardianErrorIsNotUnavailability(t *testing.T) {
	g := newGuardian(t, `{"code":-32602,"message":"Invalid params"}`)
	f, agent := guardedFixture(t, g, true)
	c := f.open(t, gateway.Consumer{})
	messageID, _ := c.send(agentID, `"messageType":"invokeAction","action":"echo","input":{"text":"hi"}`)
	if e := c.errorReply(http.StatusBadGateway, messageID); !strings.Contains(e.Detail, "Invalid params") {
		t.Errorf("detail %q", e.Detail)
	}
	agent.NothingReceived(t)
}

func TestGuardianHearsOfActionsTheGatewayEnded(t *testing.T) {
	g := newGuardian(t, `{"decision":"allow","message":"fine"}`)
	client, err := aos.NewClient(g.server.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, agent := newAgentFixture(t, func(c *gateway.Config) { c.Guardian, c.ReplyTimeout = client, 100*time.Millisecond })
	c := f.open(t, gateway.Consumer{})
	messageID, _ := c.send(agentID, `"messageType":"invokeAction","action":"silent"`)
	agent.Next(t)
	c.errorReply(http.StatusGatewayTimeout, messageID)
	result := g.next(t, "steps/toolCallResult")
	outcome := result["result"].(map[string]any)
	if result["executionId"] != messageID || outcome["isError"] != true {
		t.Errorf("tool call result %v", result)
	}
}

func TestGuardianCallsAreTraced(t *testing.T) {
	g := newGuardian(t, `{"decision":"allow","message":"fine"}`)
	client, err := aos.NewClient(g.server.URL, &http.Client{Transport: gateway.TraceTransport(http.DefaultTransport)})
	if err != nil {
		t.Fatal(err)
	}
	recorder := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	f, agent := newAgentFixture(t, func(c *gateway.Config) { c.Guardian, c.Tracer = client, provider.Tracer("test") })
	c := f.open(t, gateway.Consumer{})
	const traceID = "0af7651916cd43dd8448eb211c80319c"
	c.send(agentID, `"traceparent":"00-`+traceID+`-b7ad6b7169203331-01","messageType":"invokeAction","action":"echo","input":{"text":"hi"}`)
	agent.Next(t)
	c.reply()
	for _, method := range []string{"steps/toolCallRequest", "steps/toolCallResult"} {
		select {
		case call := <-g.calls:
			if call.Method != method || !strings.Contains(call.TraceParent, traceID) {
				t.Errorf("the guardian got %s with traceparent %q, want %s in trace %s", call.Method, call.TraceParent, method, traceID)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the guardian got no %s", method)
		}
	}
	waitFor(t, func() bool { return len(recorder.Ended()) == 4 })
	names := map[string]bool{}
	for _, s := range recorder.Ended() {
		names[s.Name()] = s.SpanContext().TraceID().String() == traceID
	}
	for _, name := range []string{"lmos receive invokeAction", "aos steps/toolCallRequest", "lmos forward invokeAction", "aos steps/toolCallResult"} {
		if !names[name] {
			t.Errorf("no span %s in the trace; spans %v", name, names)
		}
	}
}
