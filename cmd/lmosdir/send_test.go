package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/lmosdir/lmosdir/lmos"
)

const sendThingID = "urn:acme:billing"

// sentMessage is what the gateway received.
type sentMessage struct {
	path, accept string
	query        url.Values
	body         []byte
}

// sendGateway serves the gateway's HTTP endpoint: it records every message and answers with
// the frames reply returns for it, as one JSON message or, with several, as an event stream.
func sendGateway(t *testing.T, reply func(m *lmos.Message) []string) (base string, sent <-chan sentMessage) {
	t.Helper()
	messages := make(chan sentMessage, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		messages <- sentMessage{path: r.URL.EscapedPath(), accept: r.Header.Get("Accept"), query: r.URL.Query(), body: body}
		m, err := lmos.Parse(body)
		if err != nil {
			t.Errorf("the command sent an invalid message: %v", err)
			return
		}
		frames := reply(m)
		if len(frames) == 1 {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, frames[0])
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, frame := range frames {
			_, _ = io.WriteString(w, "event: message\ndata: "+frame+"\n\n")
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, messages
}

// replyFrame is a reply to m in its spelling.
func replyFrame(t *testing.T, m *lmos.Message, body lmos.Body) string {
	reply := &lmos.Message{ThingID: m.ThingID, MessageID: uuid.NewString(), CorrelationID: m.MessageID, Body: body}
	data, err := reply.Encode(m.Spelling())
	if err != nil {
		t.Error(err)
	}
	return string(data)
}

func reading(t *testing.T) func(m *lmos.Message) []string {
	return func(m *lmos.Message) []string {
		return []string{replyFrame(t, m, &lmos.PropertyReading{Name: "status", Value: json.RawMessage(`"open"`), Timestamp: "2025-01-20T19:00:00Z"})}
	}
}

func writeMessageFile(t *testing.T, message string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "message.json")
	if err := os.WriteFile(path, []byte(message), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func memberNamesOf(t *testing.T, data []byte) []string {
	t.Helper()
	members, ok := lmos.ObjectMembers(data)
	if !ok {
		t.Fatalf("not a JSON object: %s", data)
	}
	var names []string
	for _, m := range members {
		names = append(names, m.Name)
	}
	return names
}

func TestSendCompletesTheMessage(t *testing.T) {
	correlationID := uuid.NewString()
	messageID := uuid.NewString()
	// The client sends members in the encoder's order, whatever the order of the file.
	tests := []struct {
		name, message string
		want          []string
	}{
		{"no ids", `{"messageType":"readProperty", "name":"status"}`,
			[]string{"thingID", "messageID", "messageType", "name"}},
		{"camel spelling", `{"messageType":"readProperty","correlationId":"` + correlationID + `","name":"status"}`,
			[]string{"thingId", "messageId", "messageType", "correlationId", "name"}},
		{"thing id given", `{"messageType":"readProperty","thingId":"` + sendThingID + `","name":"status"}`,
			[]string{"thingId", "messageId", "messageType", "name"}},
		{"message id given", `{"name":"status","messageID":"` + messageID + `","messageType":"readProperty"}`,
			[]string{"thingID", "messageID", "messageType", "name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, sent := sendGateway(t, reading(t))
			_, _, err := runCommand(t, "send", "--url", base, sendThingID, writeMessageFile(t, tt.message))
			if err != nil {
				t.Fatal(err)
			}
			got := <-sent
			if names := memberNamesOf(t, got.body); !slices.Equal(names, tt.want) {
				t.Errorf("members %v, want %v", names, tt.want)
			}
			m, err := lmos.Parse(got.body)
			if err != nil {
				t.Fatal(err)
			}
			if m.ThingID != sendThingID {
				t.Errorf("thing id %q", m.ThingID)
			}
			if strings.Contains(tt.message, "messageID") && m.MessageID != messageID {
				t.Errorf("message id %q replaced %q", m.MessageID, messageID)
			}
			if strings.Contains(tt.message, "correlationId") && m.CorrelationID != correlationID {
				t.Errorf("correlation id %q, want %q", m.CorrelationID, correlationID)
			}
			if got.path != "/things/urn:acme:billing/messages" {
				t.Errorf("path %s", got.path)
			}
		})
	}
}

func TestSendCompletesInPlace(t *testing.T) {
	const id = "c370da58-69ae-4e83-bb5a-ac6cfb2fed54"
	tests := []struct{ message, want string }{
		{`{"messageType":"readProperty", "name":"status", "x-note":{"a": 1}}`,
			`{"thingID":"urn:acme:billing","messageID":"*","messageType":"readProperty","name":"status","x-note":{"a": 1}}`},
		{`{"messageType":"readProperty","thingId":"urn:acme:billing","name":"status"}`,
			`{"messageType":"readProperty","thingId":"urn:acme:billing","messageId":"*","name":"status"}`},
		{`{"name":"status","correlationId":"` + id + `","messageID":"` + id + `","messageType":"readProperty"}`,
			`{"thingId":"urn:acme:billing","name":"status","correlationId":"` + id + `","messageID":"` + id + `","messageType":"readProperty"}`},
		{`{"thingID":"urn:acme:billing","messageID":"` + id + `"}`, `{"thingID":"urn:acme:billing","messageID":"` + id + `"}`},
		{`not JSON`, `not JSON`},
	}
	for _, tt := range tests {
		got, err := completeMessage([]byte(tt.message), sendThingID)
		if err != nil {
			t.Fatal(err)
		}
		// The new message id is random; "*" stands for it.
		var generated string
		if before, after, ok := strings.Cut(tt.want, `"*"`); ok && len(got) >= len(before)+38 {
			generated = string(got[len(before)+1 : len(before)+37])
			tt.want = before + `"` + generated + `"` + after
		}
		if string(got) != tt.want {
			t.Errorf("completed\n%s\nto\n%s\nwant\n%s", tt.message, got, tt.want)
		}
		if generated != "" {
			if id, err := uuid.Parse(generated); err != nil || id.Version() != 4 {
				t.Errorf("message id %q is no UUIDv4", generated)
			}
		}
	}
}

func TestSendRefusesAMessageForAnotherThing(t *testing.T) {
	base, sent := sendGateway(t, reading(t))
	message := `{"thingID":"urn:acme:other","messageType":"readProperty","name":"status"}`
	_, _, err := runCommand(t, "send", "--url", base, sendThingID, writeMessageFile(t, message))
	if err == nil || !strings.Contains(err.Error(), "urn:acme:other") {
		t.Errorf("error %v, want one naming the other Thing", err)
	}
	if len(sent) > 0 {
		t.Error("the message was sent")
	}
}

func TestSendValidatesLocally(t *testing.T) {
	base, sent := sendGateway(t, reading(t))
	for _, message := range []string{
		`{"messageType":"readProperty","correlationID":"42","traceparent":"x"}`,
		`["not", "an", "object"]`,
		`{"messageType":"readProperty","name":"status"} {}`,
	} {
		stdout, stderr, err := runCommand(t, "send", "--url", base, sendThingID, writeMessageFile(t, message))
		if err == nil || !strings.Contains(err.Error(), "nothing was sent") || stdout != "" {
			t.Errorf("%s: error %v, output %q", message, err, stdout)
		}
		if !strings.Contains(stderr, ": ") {
			t.Errorf("%s: stderr %q lists no problems", message, stderr)
		}
	}
	_, stderr, _ := runCommand(t, "send", "--url", base, sendThingID,
		writeMessageFile(t, `{"messageType":"readProperty","correlationID":"42","traceparent":"x"}`))
	for _, want := range []string{"correlationID: must be a UUID", "traceparent: ", "name: missing"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q, want %q in it", stderr, want)
		}
	}
	if lines := strings.Count(stderr, "\n"); lines != 3 {
		t.Errorf("stderr has %d lines, want one per problem:\n%s", lines, stderr)
	}
	if _, stderr, _ = runCommand(t, "send", "--url", base, sendThingID, writeMessageFile(t, `[]`)); stderr != "message: must be a JSON object\n" {
		t.Errorf("stderr %q", stderr)
	}
	if len(sent) > 0 {
		t.Error("an invalid message was sent")
	}
}

func TestSendPrintsEveryReply(t *testing.T) {
	var want []string
	base, sent := sendGateway(t, func(m *lmos.Message) []string {
		for _, status := range []string{"pending", "running", "completed"} {
			want = append(want, replyFrame(t, m, &lmos.ActionStatus{Action: "createInvoice", Status: status, Output: json.RawMessage(`{"n":1}`)}))
		}
		return want
	})
	t.Setenv("LMOSDIR_SESSION", "s-1")
	message := `{"thingId":"` + sendThingID + `","messageType":"invokeAction","action":"createInvoice","input":{"amount": 12}}`
	stdout, _, err := runCommand(t, "send", "--url", base, "--stream", "--consumer", "urn:zeta:planner", sendThingID, writeMessageFile(t, message))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n"); !slices.Equal(lines, want) {
		t.Errorf("output\n%s\nwant\n%s", stdout, strings.Join(want, "\n"))
	}
	if !strings.Contains(stdout, `"correlationId":`) {
		t.Errorf("the replies lost the camel spelling:\n%s", stdout)
	}
	got := <-sent
	if got.accept != "text/event-stream, application/json" || got.query.Get("consumer") != "urn:zeta:planner" || got.query.Get("session") != "s-1" {
		t.Errorf("Accept %q, query %v", got.accept, got.query)
	}
}

func TestSendFailsOnAnLMOSError(t *testing.T) {
	base, _ := sendGateway(t, func(m *lmos.Message) []string {
		return []string{
			replyFrame(t, m, &lmos.ActionStatus{Action: "createInvoice", Status: "pending"}),
			replyFrame(t, m, lmos.NewError(m, http.StatusBadGateway, "Bad Gateway", "the Thing is unreachable").Body),
		}
	})
	message := `{"messageType":"invokeAction","action":"createInvoice"}`
	stdout, _, err := runCommand(t, "send", "--url", base, "--stream", sendThingID, writeMessageFile(t, message))
	if err == nil || !strings.Contains(err.Error(), "502 Bad Gateway: the Thing is unreachable") {
		t.Errorf("error %v, want the LMOS error", err)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], `"messageType":"error"`) {
		t.Errorf("output %q, want the status and then the error", stdout)
	}
}

func TestSendReadsStandardInput(t *testing.T) {
	base, sent := sendGateway(t, reading(t))
	stdin, err := os.Open(writeMessageFile(t, `{"messageType":"readProperty","name":"status"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	saved := os.Stdin
	os.Stdin = stdin
	t.Cleanup(func() { os.Stdin = saved })
	t.Setenv("LMOSDIR_URL", base)
	// Flags may follow the operands, and - is an operand.
	stdout, _, err := runCommand(t, "send", sendThingID, "-", "--timeout", "5s")
	if err != nil {
		t.Fatal(err)
	}
	m, err := lmos.Parse([]byte(stdout))
	if err != nil || m.Type() != lmos.TypePropertyReading || strings.Count(stdout, "\n") != 1 {
		t.Errorf("output %q, %v; want one propertyReading line", stdout, err)
	}
	if got := <-sent; got.accept != "application/json" || !bytes.Contains(got.body, []byte(`"name":"status"`)) {
		t.Errorf("sent %s with Accept %q", got.body, got.accept)
	}
}

func TestSendTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		// Only once it has read the body does the server notice the client going away.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer srv.Close()
	message := writeMessageFile(t, `{"messageType":"readProperty","name":"status"}`)
	_, _, err := runCommand(t, "send", "--url", srv.URL, "--timeout", "50ms", sendThingID, message)
	if err == nil || err.Error() != "no reply within 50ms" {
		t.Errorf("error %v, want the timeout", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := run(ctx, []string{"send", "--url", srv.URL, sendThingID, message}, io.Discard, io.Discard); err == nil {
		t.Error("an interrupted send succeeded without a reply")
	}
}

func TestSendErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"the LMOS gateway is switched off"}`)
	}))
	defer srv.Close()
	message := writeMessageFile(t, `{"messageType":"readProperty","name":"status"}`)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--url", srv.URL, sendThingID, message}, "503 Service Unavailable: the LMOS gateway is switched off"},
		{[]string{"--url", srv.URL, sendThingID}, "give the thing id and the message file"},
		{[]string{"--url", srv.URL, sendThingID, message, "extra"}, "give the thing id and the message file"},
		{[]string{"--url", srv.URL, "--timeout", "-1s", sendThingID, message}, "timeout must not be negative"},
		{[]string{"--url", srv.URL, sendThingID, filepath.Join(t.TempDir(), "missing.json")}, "missing.json"},
		{[]string{"--url", "localhost:8080", sendThingID, message}, "absolute http or https URL"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			stdout, _, err := runCommand(t, append([]string{"send"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
			if stdout != "" {
				t.Errorf("printed %q despite the error", stdout)
			}
		})
	}
}
