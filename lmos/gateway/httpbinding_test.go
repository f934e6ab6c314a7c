package gateway_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lmosdir/lmosdir/lmos"
	"github.com/lmosdir/lmosdir/lmos/gateway"
)

const toolID = "urn:test:http-tool"

// httpTool is a tool with plain HTTP forms; it records the requests it serves.
type httpTool struct {
	server   *httptest.Server
	requests chan *http.Request
	bodies   chan string
}

func newHTTPTool(t *testing.T, elsewhere string) *httpTool {
	t.Helper()
	tool := &httpTool{requests: make(chan *http.Request, 100), bodies: make(chan string, 100)}
	mux := http.NewServeMux()
	record := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			tool.requests <- r
			tool.bodies <- string(body)
			h(w, r)
		}
	}
	mux.HandleFunc("POST /actions/echo", record(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"echoed":true}`)
	}))
	mux.HandleFunc("POST /actions/text", record(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "plain words")
	}))
	mux.HandleFunc("POST /actions/fail", record(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusConflict)
		_, _ = io.WriteString(w, `{"type":"https://errors.example/busy","title":"Busy","detail":"the tool is busy"}`)
	}))
	mux.HandleFunc("POST /actions/moved", record(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/actions/echo", http.StatusTemporaryRedirect)
	}))
	mux.HandleFunc("POST /actions/loop", record(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/actions/loop", http.StatusTemporaryRedirect)
	}))
	mux.HandleFunc("POST /actions/seeother", record(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/actions/result", http.StatusSeeOther)
	}))
	mux.HandleFunc("POST /actions/elsewhere", record(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere+"/actions/echo", http.StatusTemporaryRedirect)
	}))
	mux.HandleFunc("GET /properties/temperature", record(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `21.5`)
	}))
	mux.HandleFunc("PUT /properties/target", record(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	mux.HandleFunc("PATCH /properties", record(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	tool.server = httptest.NewServer(mux)
	t.Cleanup(tool.server.Close)
	return tool
}

func (tool *httpTool) td() string {
	action := func(name string) string {
		return `"` + name + `":{"forms":[{"href":"actions/` + name + `","htv:methodName":"POST"}]}`
	}
	return `{"@context":"https://www.w3.org/2022/wot/td/v1.1","id":"` + toolID + `","title":"HTTP tool","base":"` + tool.server.URL + `/",` +
		`"securityDefinitions":{"nosec_sc":{"scheme":"nosec"}},"security":"nosec_sc",` +
		`"forms":[{"op":"writemultipleproperties","href":"properties","htv:methodName":"PATCH"}],` +
		`"properties":{"temperature":{"type":"number","readOnly":true,"forms":[{"href":"properties/temperature"}]},` +
		`"target":{"type":"integer","forms":[{"href":"properties/target"}]}},` +
		`"actions":{` + strings.Join([]string{action("echo"), action("text"), action("fail"), action("moved"), action("elsewhere"), action("loop"), action("seeother")}, ",") + `},` +
		`"events":{"alert":{"forms":[{"href":"events/alert","subprotocol":"sse"}]}}}`
}

// request waits for the tool's next request.
func (tool *httpTool) request(t *testing.T) (*http.Request, string) {
	t.Helper()
	select {
	case r := <-tool.requests:
		return r, <-tool.bodies
	default:
		t.Fatal("the tool got no request")
		return nil, ""
	}
}

func TestHTTPBinding(t *testing.T) {
	other := newHTTPTool(t, "")
	tool := newHTTPTool(t, other.server.URL)
	f := newFixture(t)
	f.register(t, toolID, tool.td())
	c := f.open(t, gateway.Consumer{})

	t.Run("invokeAction", func(t *testing.T) {
		messageID, _ := c.send(toolID, `"messageType":"invokeAction","action":"echo","input":{"q":1}`)
		reply, r := c.reply()
		status, ok := reply.Body.(*lmos.ActionStatus)
		if !ok || status.Status != "completed" || string(status.Output) != `{"echoed":true}` || reply.CorrelationID != messageID || !r.Final {
			t.Fatalf("reply %s", r.Data)
		}
		req, body := tool.request(t)
		if req.Method != http.MethodPost || body != `{"q":1}` || req.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %s %q %q", req.Method, body, req.Header.Get("Content-Type"))
		}
	})
	t.Run("text output", func(t *testing.T) {
		c.send(toolID, `"messageType":"invokeAction","action":"text"`)
		reply, r := c.reply()
		if string(reply.Body.(*lmos.ActionStatus).Output) != `"plain words"` {
			t.Errorf("reply %s", r.Data)
		}
		if _, body := tool.request(t); body != "" {
			t.Errorf("an action without input sent %q", body)
		}
	})
	t.Run("readProperty", func(t *testing.T) {
		c.send(toolID, `"messageType":"readProperty","name":"temperature"`)
		reply, r := c.reply()
		reading, ok := reply.Body.(*lmos.PropertyReading)
		if !ok || string(reading.Value) != "21.5" || reading.Name != "temperature" {
			t.Errorf("reply %s", r.Data)
		}
		if req, _ := tool.request(t); req.Method != http.MethodGet {
			t.Errorf("method %s", req.Method)
		}
	})
	t.Run("writeProperty", func(t *testing.T) {
		c.send(toolID, `"messageType":"writeProperty","name":"target","data":4`)
		reply, r := c.reply()
		readings, ok := reply.Body.(*lmos.PropertyReadings)
		if !ok || string(readings.Data) != `{"target":4}` {
			t.Errorf("reply %s", r.Data)
		}
		if req, body := tool.request(t); req.Method != http.MethodPut || body != "4" {
			t.Errorf("request %s %q", req.Method, body)
		}
	})
	t.Run("writeMultipleProperties", func(t *testing.T) {
		c.send(toolID, `"messageType":"writeMultipleProperties","data":{"target":5}`)
		reply, r := c.reply()
		if readings, ok := reply.Body.(*lmos.PropertyReadings); !ok || string(readings.Data) != `{"target":5}` {
			t.Errorf("reply %s", r.Data)
		}
		if req, body := tool.request(t); req.Method != http.MethodPatch || req.URL.Path != "/properties" || body != `{"target":5}` {
			t.Errorf("request %s %s %q", req.Method, req.URL.Path, body)
		}
	})
	t.Run("error answer", func(t *testing.T) {
		messageID, _ := c.send(toolID, `"messageType":"invokeAction","action":"fail"`)
		e := c.errorReply(http.StatusConflict, messageID)
		if e.Detail != "the tool is busy" || e.TypeURI != "https://errors.example/busy" {
			t.Errorf("error %+v", e)
		}
		tool.request(t)
	})
	t.Run("redirect on the same host", func(t *testing.T) {
		c.send(toolID, `"messageType":"invokeAction","action":"moved","input":{"q":2}`)
		if reply, r := c.reply(); reply.Type() != lmos.TypeActionStatus {
			t.Errorf("reply %s", r.Data)
		}
		tool.request(t)
		if req, body := tool.request(t); req.URL.Path != "/actions/echo" || body != `{"q":2}` {
			t.Errorf("redirected to %s with %q", req.URL.Path, body)
		}
	})
	for _, refused := range []struct {
		name, action, detail string
		requests             int       // what the tool gets: the request and the redirects followed
		untouched            *httpTool // the server that must get nothing more
	}{
		{"redirect to another host", "elsewhere", "another origin", 1, other},
		{"redirect that turns the POST into a GET", "seeother", "turns POST into GET", 1, tool},
		{"redirects without end", "loop", "3 redirects", 4, tool},
	} {
		t.Run(refused.name, func(t *testing.T) {
			messageID, _ := c.send(toolID, `"messageType":"invokeAction","action":"`+refused.action+`","input":{"q":3}`)
			if e := c.errorReply(http.StatusBadGateway, messageID); !strings.Contains(e.Detail, refused.detail) {
				t.Errorf("detail %q", e.Detail)
			}
			for range refused.requests {
				tool.request(t)
			}
			select {
			case r := <-refused.untouched.requests:
				t.Errorf("a request too many: %s %s", r.Method, r.URL)
			default:
			}
		})
	}
	t.Run("no HTTP binding for events", func(*testing.T) {
		messageID, _ := c.send(toolID, `"messageType":"subscribeEvent","event":"alert"`)
		c.errorReply(http.StatusNotImplemented, messageID)
	})
}
