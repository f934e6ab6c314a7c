package aos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lmosdir/lmosdir/lmos/aos"
)

// call is one request as the test guardian received it.
type call struct {
	httpMethod string
	path       string
	header     http.Header
	body       []byte
	id         json.RawMessage
	method     string
	params     json.RawMessage
}

// answerFunc writes the guardian's HTTP response to a call.
type answerFunc func(w http.ResponseWriter, c call)

// guardian is a test AOS guardian that records what it receives.
type guardian struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []call
}

func newGuardian(t *testing.T, answer answerFunc) *guardian {
	t.Helper()
	g := &guardian{}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c := call{httpMethod: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body}
		var envelope struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(body, &envelope) == nil {
			c.id, c.method, c.params = envelope.ID, envelope.Method, envelope.Params
		}
		g.mu.Lock()
		g.calls = append(g.calls, c)
		g.mu.Unlock()
		answer(w, c)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *guardian) client(t *testing.T) *aos.Client {
	t.Helper()
	c, err := aos.NewClient(g.srv.URL, nil)
	if err != nil {
		t.Fatalf("NewClient(%q): %v", g.srv.URL, err)
	}
	return c
}

func (g *guardian) received() []call {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]call(nil), g.calls...)
}

func (g *guardian) only(t *testing.T) call {
	t.Helper()
	calls := g.received()
	if len(calls) != 1 {
		t.Fatalf("the guardian received %d requests, want 1", len(calls))
	}
	return calls[0]
}

func writeBody(w http.ResponseWriter, status int, contentType, body string) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// answerResult answers with a JSON-RPC success response carrying result.
func answerResult(result string) answerFunc {
	return func(w http.ResponseWriter, c call) {
		writeBody(w, http.StatusOK, "application/json",
			`{"jsonrpc":"2.0","id":`+string(c.id)+`,"result":`+result+`}`)
	}
}

// answerEnvelope answers with the members given, the request's id put in for %s.
func answerEnvelope(format string) answerFunc {
	return func(w http.ResponseWriter, c call) {
		writeBody(w, http.StatusOK, "application/json", fmt.Sprintf(format, c.id))
	}
}

const allowResult = `{"decision":"allow","message":"ok"}`

// assertJSON fails unless got and want hold the same JSON value.
func assertJSON(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v in %s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: the expected JSON: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

// assertEnvelope checks what every request must be on the wire and returns
// its id.
func assertEnvelope(t *testing.T, c call, method string) string {
	t.Helper()
	if c.httpMethod != http.MethodPost {
		t.Errorf("HTTP method %s, want POST", c.httpMethod)
	}
	if got := c.header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q, want application/json", got)
	}
	if got := c.header.Get("Accept"); got != "application/json" {
		t.Errorf("Accept %q, want application/json", got)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(c.body, &members); err != nil {
		t.Fatalf("the request body is not a JSON object: %v", err)
	}
	var names []string
	for name := range members {
		names = append(names, name)
	}
	if len(members) != 4 || members["jsonrpc"] == nil || members["id"] == nil || members["method"] == nil || members["params"] == nil {
		t.Errorf("request members %v, want exactly jsonrpc, id, method and params", names)
	}
	if got := string(members["jsonrpc"]); got != `"2.0"` {
		t.Errorf("jsonrpc %s, want \"2.0\"", got)
	}
	if c.method != method {
		t.Errorf("method %q, want %q", c.method, method)
	}
	var id string
	if err := json.Unmarshal(c.id, &id); err != nil {
		t.Fatalf("id %s is not a string", c.id)
	}
	if _, err := uuid.Parse(id); err != nil {
		t.Errorf("id %q is not a UUID: %v", id, err)
	}
	return id
}

// fullContext sets every member of a StepContext, optional ones included.
func fullContext() aos.StepContext {
	model := &aos.Model{
		Name:          "GPT-4o",
		ID:            "gpt-4o",
		MaxTokens:     1000,
		ContextWindow: 128000,
		StopSequences: []string{"User:"},
		DefaultParams: map[string]any{"temperature": 0.2},
		Metadata:      map[string]any{"m": "1"},
	}
	model.Provider.Name = "OpenAI"
	model.Provider.Metadata = map[string]any{"region": "eu"}
	return aos.StepContext{
		Agent: aos.Agent{
			Name:         "gateway",
			ID:           "agent-1",
			Description:  "relays actions",
			Instructions: "relay only what the guardian allows",
			Version:      "1.2.3",
			Provider:     aos.AgentProvider{Name: "lmosdir", URL: "https://lmosdir.example", Metadata: map[string]any{"p": "1"}},
			Model:        model,
			Tools: []aos.ToolDefinition{
				{
					Name:        "setTemperature",
					ID:          "urn:thing:1#setTemperature",
					Description: "sets the target temperature",
					Type:        "api_request",
					Arguments: []aos.ToolArgumentDefinition{{
						Name: "celsius", ID: "c", Description: "target", Type: "number", MimeType: "application/json", Required: true,
					}},
					Outputs: []aos.ToolOutputDefinition{{
						Name: "accepted", ID: "a", Description: "whether it was taken", Type: "boolean", MimeType: "application/json",
					}},
					Metadata: map[string]any{"t": "1"},
				},
				{Name: "reset", ID: "urn:thing:1#reset", Type: "api_request"},
			},
			Organization: &aos.Organization{ID: "org-1", Name: "Example", Metadata: map[string]any{"o": "1"}},
			Metadata:     map[string]any{"a": "1"},
		},
		Session:   aos.Session{ID: "session-1", Metadata: map[string]any{"s": "1"}},
		TurnID:    "turn-1",
		StepID:    "step-1",
		Timestamp: "2026-01-02T03:04:05Z",
		User: &aos.User{
			ID:           "user-1",
			Name:         "Ada",
			Email:        "ada@example.com",
			Organization: aos.Organization{ID: "org-2"},
			Metadata:     map[string]any{"u": "1"},
		},
	}
}

const fullContextJSON = `{
	"agent": {
		"name": "gateway",
		"id": "agent-1",
		"description": "relays actions",
		"instructions": "relay only what the guardian allows",
		"version": "1.2.3",
		"provider": {"name": "lmosdir", "url": "https://lmosdir.example", "metadata": {"p": "1"}},
		"model": {
			"name": "GPT-4o",
			"id": "gpt-4o",
			"provider": {"name": "OpenAI", "metadata": {"region": "eu"}},
			"maxTokens": 1000,
			"contextWindow": 128000,
			"stopSequences": ["User:"],
			"defaultParams": {"temperature": 0.2},
			"metadata": {"m": "1"}
		},
		"tools": [
			{
				"name": "setTemperature",
				"id": "urn:thing:1#setTemperature",
				"description": "sets the target temperature",
				"type": "api_request",
				"arguments": [{"name": "celsius", "id": "c", "description": "target", "type": "number", "mimeType": "application/json", "required": true}],
				"outputs": [{"name": "accepted", "id": "a", "description": "whether it was taken", "type": "boolean", "mimeType": "application/json"}],
				"metadata": {"t": "1"}
			},
			{"name": "reset", "id": "urn:thing:1#reset", "type": "api_request", "arguments": null, "outputs": null}
		],
		"organization": {"id": "org-1", "name": "Example", "metadata": {"o": "1"}},
		"metadata": {"a": "1"}
	},
	"session": {"id": "session-1", "metadata": {"s": "1"}},
	"turnId": "turn-1",
	"stepId": "step-1",
	"timestamp": "2026-01-02T03:04:05Z",
	"user": {"id": "user-1", "name": "Ada", "email": "ada@example.com", "organization": {"id": "org-2"}, "metadata": {"u": "1"}}
}`

// emptyContextJSON is a zero StepContext: every required member, no optional one.
const emptyContextJSON = `{
	"agent": {"name": "", "id": "", "instructions": "", "version": "", "provider": {"name": "", "url": ""}},
	"session": {"id": ""},
	"turnId": "",
	"stepId": "",
	"timestamp": ""
}`

func TestToolCallRequestOnTheWire(t *testing.T) {
	g := newGuardian(t, answerResult(allowResult))
	_, err := g.client(t).ToolCallRequest(context.Background(), aos.ToolCallRequestParams{
		Context: fullContext(),
		ToolCallRequest: aos.ToolCallRequest{
			ExecutionID: "exec-1",
			ToolID:      "urn:thing:1#setTemperature",
			Inputs: []aos.ToolArgumentValue{
				{Name: "celsius", ID: "c", Value: json.RawMessage(`21.5`)},
				{Name: "mode", Value: json.RawMessage(`{"eco":true}`)},
				{Name: "note"},
			},
		},
		Reasoning: "the user asked for it",
	})
	if err != nil {
		t.Fatal(err)
	}
	c := g.only(t)
	assertEnvelope(t, c, "steps/toolCallRequest")
	assertJSON(t, "params", c.params, `{
		"context": `+fullContextJSON+`,
		"toolCallRequest": {
			"executionId": "exec-1",
			"toolId": "urn:thing:1#setTemperature",
			"inputs": [
				{"name": "celsius", "id": "c", "value": 21.5},
				{"name": "mode", "value": {"eco": true}},
				{"name": "note", "value": null}
			]
		},
		"reasoning": "the user asked for it"
	}`)
}

func TestToolCallResultOnTheWire(t *testing.T) {
	g := newGuardian(t, answerResult(allowResult))
	_, err := g.client(t).ToolCallResult(context.Background(), aos.ToolCallResultParams{
		Context:     fullContext(),
		ExecutionID: "exec-1",
		Result: aos.ToolCallResult{
			Outputs: []aos.TextPart{
				{Text: "accepted"},
				{Kind: "text", Text: "21.5", Metadata: map[string]any{"unit": "celsius"}},
			},
			IsError: true,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := g.only(t)
	assertEnvelope(t, c, "steps/toolCallResult")
	assertJSON(t, "params", c.params, `{
		"context": `+fullContextJSON+`,
		"executionId": "exec-1",
		"result": {
			"outputs": [
				{"kind": "text", "text": "accepted"},
				{"kind": "text", "text": "21.5", "metadata": {"unit": "celsius"}}
			],
			"isError": true
		}
	}`)
}

func TestPingOnTheWire(t *testing.T) {
	g := newGuardian(t, answerResult(`{"status":"connected","version":"1","timestamp":"2026-01-02T03:04:06Z"}`))
	_, err := g.client(t).Ping(context.Background(), aos.PingParams{
		Timestamp: "2026-01-02T03:04:05Z",
		Timeout:   1500,
		Metadata:  map[string]any{"from": "gateway"},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := g.only(t)
	assertEnvelope(t, c, "ping")
	assertJSON(t, "params", c.params, `{"timestamp": "2026-01-02T03:04:05Z", "timeout": 1500, "metadata": {"from": "gateway"}}`)
}

func TestRequiredMembersPresentWhenEmpty(t *testing.T) {
	g := newGuardian(t, func(w http.ResponseWriter, c call) {
		if c.method == "ping" {
			answerResult(`{"status":"connected","version":"1","timestamp":"2026-01-02T03:04:06Z"}`)(w, c)
			return
		}
		answerResult(allowResult)(w, c)
	})
	client := g.client(t)
	ctx := context.Background()
	if _, err := client.ToolCallRequest(ctx, aos.ToolCallRequestParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.ToolCallResult(ctx, aos.ToolCallResultParams{}); err != nil {
		t.Fatal(err)
	}
	before := time.Now().UTC().Truncate(time.Second)
	if _, err := client.Ping(ctx, aos.PingParams{}); err != nil {
		t.Fatal(err)
	}
	calls := g.received()
	if len(calls) != 3 {
		t.Fatalf("the guardian received %d requests, want 3", len(calls))
	}

	ids := map[string]bool{}
	for _, c := range calls {
		ids[assertEnvelope(t, c, c.method)] = true
	}
	if len(ids) != 3 {
		t.Errorf("%d distinct ids in 3 requests", len(ids))
	}

	assertJSON(t, "toolCallRequest params", calls[0].params, `{
		"context": `+emptyContextJSON+`,
		"toolCallRequest": {"executionId": "", "toolId": "", "inputs": []}
	}`)
	assertJSON(t, "toolCallResult params", calls[1].params, `{
		"context": `+emptyContextJSON+`,
		"executionId": "",
		"result": {"outputs": [], "isError": false}
	}`)

	// The spec requires a ping timestamp, so an empty one is filled in.
	var ping map[string]any
	if err := json.Unmarshal(calls[2].params, &ping); err != nil {
		t.Fatal(err)
	}
	stamp, _ := ping["timestamp"].(string)
	sent, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		t.Fatalf("ping timestamp %q: %v", stamp, err)
	}
	if sent.Before(before) || sent.After(time.Now().Add(time.Second)) || !strings.HasSuffix(stamp, "Z") {
		t.Errorf("ping timestamp %q is not the current UTC time", stamp)
	}
	if len(ping) != 1 {
		t.Errorf("ping params %s, want only timestamp", calls[2].params)
	}
}

func TestInvalidParamsAreNotSent(t *testing.T) {
	g := newGuardian(t, answerResult(allowResult))
	_, err := g.client(t).ToolCallRequest(context.Background(), aos.ToolCallRequestParams{
		ToolCallRequest: aos.ToolCallRequest{Inputs: []aos.ToolArgumentValue{{Name: "x", Value: json.RawMessage(`{not json`)}}},
	})
	if err == nil {
		t.Fatal("no error for a value that is not JSON")
	}
	if errors.Is(err, aos.ErrUnavailable) {
		t.Errorf("the caller's bad params are reported as the guardian being unavailable: %v", err)
	}
	if n := len(g.received()); n != 0 {
		t.Errorf("the guardian received %d requests", n)
	}
}

func TestDecisions(t *testing.T) {
	tests := []struct {
		name   string
		result string
		want   aos.Decision
	}{
		{"allow", `{"decision":"allow","message":"fine"}`, aos.Decision{Decision: aos.DecisionAllow, Message: "fine"}},
		{"allow with an empty message", `{"decision":"allow","message":""}`, aos.Decision{Decision: aos.DecisionAllow}},
		{
			"deny",
			`{"decision":"deny","message":"not at night","reasoning":"quiet hours","reasonCode":["R1","R2"],"data":{"until":"06:00"}}`,
			aos.Decision{
				Decision:   aos.DecisionDeny,
				Message:    "not at night",
				Reasoning:  "quiet hours",
				ReasonCode: []string{"R1", "R2"},
				Data:       map[string]any{"until": "06:00"},
			},
		},
		{
			"modify",
			`{"decision":"modify","message":"capped","modifiedRequest":{"inputs":[{"name":"celsius","value":25}]}}`,
			aos.Decision{
				Decision:        aos.DecisionModify,
				Message:         "capped",
				ModifiedRequest: json.RawMessage(`{"inputs":[{"name":"celsius","value":25}]}`),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := newGuardian(t, answerResult(tt.result)).client(t)
			for _, ask := range []struct {
				method string
				call   func() (aos.Decision, error)
			}{
				{"ToolCallRequest", func() (aos.Decision, error) {
					return client.ToolCallRequest(context.Background(), aos.ToolCallRequestParams{})
				}},
				{"ToolCallResult", func() (aos.Decision, error) {
					return client.ToolCallResult(context.Background(), aos.ToolCallResultParams{})
				}},
			} {
				got, err := ask.call()
				if err != nil {
					t.Fatalf("%s: %v", ask.method, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: %+v, want %+v", ask.method, got, tt.want)
				}
			}
		})
	}
}

func TestModifiedInputs(t *testing.T) {
	want := []aos.ToolArgumentValue{
		{Name: "celsius", ID: "c", Value: json.RawMessage(`25`)},
		{Name: "mode", Value: json.RawMessage(`null`)},
	}
	inputs := `[{"name":"celsius","id":"c","value":25},{"name":"mode","value":null}]`
	shapes := map[string]string{
		"JSON-RPC request": `{"jsonrpc":"2.0","id":"x","method":"steps/toolCallRequest","params":{"context":{},"toolCallRequest":{"executionId":"e","toolId":"t","inputs":` + inputs + `}}}`,
		"params":           `{"context":{},"toolCallRequest":{"executionId":"e","toolId":"t","inputs":` + inputs + `}}`,
		"tool call":        `{"executionId":"e","toolId":"t","inputs":` + inputs + `}`,
	}
	for name, modified := range shapes {
		t.Run(name, func(t *testing.T) {
			client := newGuardian(t, answerResult(`{"decision":"modify","message":"m","modifiedRequest":`+modified+`}`)).client(t)
			d, err := client.ToolCallRequest(context.Background(), aos.ToolCallRequestParams{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.ModifiedInputs()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("inputs %+v, want %+v", got, want)
			}
		})
	}

	t.Run("emptied inputs", func(t *testing.T) {
		d := aos.Decision{Decision: aos.DecisionModify, ModifiedRequest: json.RawMessage(`{"inputs":[]}`)}
		got, err := d.ModifiedInputs()
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("ModifiedInputs() = %v, %v; want no inputs and no error", got, err)
		}
	})

	failures := []struct {
		name     string
		decision string
		modified string
		wantErr  string
	}{
		{"allow decision", aos.DecisionAllow, `{"inputs":[]}`, `"allow", not "modify"`},
		{"no modifiedRequest", aos.DecisionModify, ``, "no modifiedRequest"},
		{"null modifiedRequest", aos.DecisionModify, `null`, "holds no inputs"},
		{"modifiedRequest not an object", aos.DecisionModify, `[{"name":"a","value":1}]`, "holds no inputs"},
		{"no inputs anywhere", aos.DecisionModify, `{"params":{"toolCallRequest":{"toolId":"t"}}}`, "holds no inputs"},
		{"inputs under another name", aos.DecisionModify, `{"params":{"arguments":[]}}`, "holds no inputs"},
		{"inputs an object", aos.DecisionModify, `{"inputs":{"celsius":25}}`, "not an array"},
		{"inputs null", aos.DecisionModify, `{"toolCallRequest":{"inputs":null}}`, "not an array"},
		{"inputs a string", aos.DecisionModify, `{"params":{"toolCallRequest":{"inputs":"celsius=25"}}}`, "not an array"},
		{"input not an object", aos.DecisionModify, `{"inputs":[25]}`, "not tool argument values"},
		{"input name not a string", aos.DecisionModify, `{"inputs":[{"name":1,"value":25}]}`, "not tool argument values"},
		{"input without name", aos.DecisionModify, `{"inputs":[{"value":25}]}`, "input 0 has no name"},
		{"input without value", aos.DecisionModify, `{"inputs":[{"name":"celsius","value":1},{"name":"mode"}]}`, `"mode" has no value`},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			d := aos.Decision{Decision: tt.decision, Message: "m"}
			if tt.modified != "" {
				d.ModifiedRequest = json.RawMessage(tt.modified)
			}
			got, err := d.ModifiedInputs()
			if err == nil {
				t.Fatalf("ModifiedInputs() = %+v, want an error", got)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not say %q", err, tt.wantErr)
			}
		})
	}
}

func TestRPCError(t *testing.T) {
	tests := []struct {
		name     string
		envelope string
		want     aos.RPCError
		wantText string
	}{
		{
			"error object",
			`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"Invalid method parameters","data":{"missing":"context"}}}`,
			aos.RPCError{Code: -32602, Message: "Invalid method parameters", Data: json.RawMessage(`{"missing":"context"}`)},
			"error -32602: Invalid method parameters",
		},
		{
			"error object without data",
			`{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"policy engine down"}}`,
			aos.RPCError{Code: -32001, Message: "policy engine down"},
			"error -32001: policy engine down",
		},
		{
			"error string as in the AOS spec",
			`{"jsonrpc":"2.0","id":%s,"error":"InvalidParamsError"}`,
			aos.RPCError{Message: "InvalidParamsError"},
			"error: InvalidParamsError",
		},
		{
			"null result beside the error",
			`{"jsonrpc":"2.0","id":%s,"result":null,"error":{"code":-32603,"message":"Internal server error"}}`,
			aos.RPCError{Code: -32603, Message: "Internal server error"},
			"error -32603",
		},
		{
			"null id when the guardian could not read the request",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Invalid JSON payload"}}%.0s`,
			aos.RPCError{Code: -32700, Message: "Invalid JSON payload"},
			"error -32700",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := newGuardian(t, answerEnvelope(tt.envelope)).client(t)
			_, err := client.ToolCallRequest(context.Background(), aos.ToolCallRequestParams{})
			rpcErr, ok := errors.AsType[*aos.RPCError](err)
			if !ok {
				t.Fatalf("error %v, want an *RPCError", err)
			}
			if errors.Is(err, aos.ErrUnavailable) {
				t.Errorf("an RPCError wraps ErrUnavailable: %v", err)
			}
			if !reflect.DeepEqual(*rpcErr, tt.want) {
				t.Errorf("%+v, want %+v", *rpcErr, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q does not say %q", err, tt.wantText)
			}
		})
	}
}

// assertUnavailable fails unless err wraps ErrUnavailable, is no RPCError and
// says why.
func assertUnavailable(t *testing.T, err error, why string) {
	t.Helper()
	if !errors.Is(err, aos.ErrUnavailable) {
		t.Fatalf("error %v, want one wrapping ErrUnavailable", err)
	}
	if _, ok := errors.AsType[*aos.RPCError](err); ok {
		t.Errorf("error %v is an RPCError", err)
	}
	if !strings.Contains(err.Error(), why) {
		t.Errorf("error %q does not say %q", err, why)
	}
}

func TestUnavailable(t *testing.T) {
	const maxBody = 1 << 20
	// paddedAllow answers allow with a message padded so that the body is size bytes.
	paddedAllow := func(size int) answerFunc {
		return func(w http.ResponseWriter, c call) {
			head := `{"jsonrpc":"2.0","id":` + string(c.id) + `,"result":{"decision":"allow","message":"`
			tail := `"}}`
			writeBody(w, http.StatusOK, "application/json", head+strings.Repeat("a", size-len(head)-len(tail))+tail)
		}
	}
	tests := []struct {
		name   string
		answer answerFunc
		why    string
	}{
		{"500", func(w http.ResponseWriter, _ call) {
			writeBody(w, http.StatusInternalServerError, "text/plain", "policy store unreachable\n")
		}, `HTTP status 500 Internal Server Error: "policy store unreachable"`},
		{"503 with a JSON-RPC body", func(w http.ResponseWriter, c call) {
			writeBody(w, http.StatusServiceUnavailable, "application/json", `{"jsonrpc":"2.0","id":`+string(c.id)+`,"result":`+allowResult+`}`)
		}, "HTTP status 503"},
		{"HTML body", func(w http.ResponseWriter, _ call) {
			writeBody(w, http.StatusOK, "text/html", "<html><body>Welcome to nginx!</body></html>")
		}, `not JSON (Content-Type "text/html")`},
		{"empty body", func(w http.ResponseWriter, _ call) {
			w.WriteHeader(http.StatusNoContent)
		}, "not JSON"},
		{"JSON array", answerEnvelope(`[{"jsonrpc":"2.0","id":%s,"result":{"decision":"allow","message":"ok"}}]`), "not a JSON-RPC response object"},
		{"id mismatch", answerEnvelope(`{"jsonrpc":"2.0","id":"f47ac10b-58cc-4372-a567-0e02b2c3d479","result":{"decision":"allow","message":"ok"}}%.0s`), "is not the request's"},
		{"id a number", answerEnvelope(`{"jsonrpc":"2.0","id":1,"result":{"decision":"allow","message":"ok"}}%.0s`), "response id 1 is not the request's"},
		{"id missing", answerEnvelope(`{"jsonrpc":"2.0","result":{"decision":"allow","message":"ok"}}%.0s`), "has no id"},
		{"id null on a result", answerEnvelope(`{"jsonrpc":"2.0","id":null,"result":{"decision":"allow","message":"ok"}}%.0s`), "response id null"},
		{"jsonrpc missing", answerEnvelope(`{"id":%s,"result":{"decision":"allow","message":"ok"}}`), "no jsonrpc member"},
		{"jsonrpc 1.0", answerEnvelope(`{"jsonrpc":"1.0","id":%s,"result":{"decision":"allow","message":"ok"}}`), `jsonrpc "1.0"`},
		{"jsonrpc a number", answerEnvelope(`{"jsonrpc":2.0,"id":%s,"result":{"decision":"allow","message":"ok"}}`), "not a JSON-RPC response object"},
		{"both result and error", answerEnvelope(`{"jsonrpc":"2.0","id":%s,"result":{"decision":"allow","message":"ok"},"error":{"code":-32603,"message":"x"}}`), "both result and error"},
		{"neither result nor error", answerEnvelope(`{"jsonrpc":"2.0","id":%s}`), "neither result nor error"},
		{"null result", answerEnvelope(`{"jsonrpc":"2.0","id":%s,"result":null}`), "neither result nor error"},
		{"error neither string nor object", answerEnvelope(`{"jsonrpc":"2.0","id":%s,"error":-32603}`), "neither a string nor an error object"},
		{"error object without code", answerEnvelope(`{"jsonrpc":"2.0","id":%s,"error":{"message":"x"}}`), "lacks code or message"},
		{"unknown decision", answerResult(`{"decision":"maybe","message":"ok"}`), `unknown decision "maybe"`},
		{"decision in capitals", answerResult(`{"decision":"ALLOW","message":"ok"}`), `unknown decision "ALLOW"`},
		{"decision missing", answerResult(`{"message":"ok"}`), "no decision"},
		{"message missing", answerResult(`{"decision":"deny"}`), "no message"},
		{"message null", answerResult(`{"decision":"deny","message":null}`), "no message"},
		{"result not an object", answerResult(`"allow"`), "decision is malformed"},
		{"reasonCode not strings", answerResult(`{"decision":"deny","message":"no","reasonCode":[1]}`), "decision is malformed"},
		{"oversize body", paddedAllow(maxBody + 1), "larger than 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := newGuardian(t, tt.answer).client(t)
			_, err := client.ToolCallRequest(context.Background(), aos.ToolCallRequestParams{})
			assertUnavailable(t, err, tt.why)
		})
	}

	t.Run("body of exactly 1 MiB", func(t *testing.T) {
		client := newGuardian(t, paddedAllow(maxBody)).client(t)
		d, err := client.ToolCallRequest(context.Background(), aos.ToolCallRequestParams{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Decision != aos.DecisionAllow {
			t.Errorf("decision %q", d.Decision)
		}
	})
}
