package aos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/lmos/aos"
)

func TestNewClient(t *testing.T) {
	for _, endpoint := range []string{
		"http://guardian.example/aos",
		"https://guardian.example:8443/",
		"HTTPS://guardian.example",
		"http://127.0.0.1:9000",
	} {
		if _, err := aos.NewClient(endpoint, nil); err != nil {
			t.Errorf("NewClient(%q): %v", endpoint, err)
		}
	}
	for _, endpoint := range []string{
		"",
		"guardian.example",
		"/aos",
		"//guardian.example/aos",
		"ftp://guardian.example/",
		"ws://guardian.example/",
		"http://",
		"http:///aos",
		"http://guardian.example:port/",
		"://guardian.example",
	} {
		if c, err := aos.NewClient(endpoint, nil); err == nil {
			t.Errorf("NewClient(%q) = %v, want an error", endpoint, c)
		}
	}
}

func TestConnectionRefused(t *testing.T) {
	g := newGuardian(t, answerResult(allowResult))
	client := g.client(t)
	g.srv.Close()
	_, err := client.ToolCallRequest(context.Background(), aos.ToolCallRequestParams{})
	assertUnavailable(t, err, "connection refused")
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	g := newGuardian(t, func(w http.ResponseWriter, c call) {
		<-release
		answerResult(allowResult)(w, c)
	})
	// Cleanups run last-registered first, so the handler is released before
	// the server waits for it to finish.
	t.Cleanup(func() { close(release) })

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := g.client(t).ToolCallRequest(ctx, aos.ToolCallRequestParams{})
	assertUnavailable(t, err, "deadline exceeded")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the call returned after %v, long after its deadline", took)
	}
}

// redirectingGuardian redirects each path in hops to the location given for
// it with code, and answers allow everywhere else.
func redirectingGuardian(t *testing.T, code int, hops func(self string) map[string]string) *guardian {
	t.Helper()
	var g *guardian
	g = newGuardian(t, func(w http.ResponseWriter, c call) {
		if to, ok := hops(g.srv.URL)[c.path]; ok {
			w.Header().Set("Location", to)
			w.WriteHeader(code)
			return
		}
		answerResult(allowResult)(w, c)
	})
	return g
}

func TestRedirectFollowedOnTheSameOrigin(t *testing.T) {
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			g := redirectingGuardian(t, code, func(self string) map[string]string {
				return map[string]string{"/": self + "/v2"}
			})
			d, err := g.client(t).ToolCallRequest(context.Background(), aos.ToolCallRequestParams{
				ToolCallRequest: aos.ToolCallRequest{ToolID: "tool"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if d.Decision != aos.DecisionAllow {
				t.Errorf("decision %q", d.Decision)
			}
			calls := g.received()
			if len(calls) != 2 {
				t.Fatalf("the guardian received %d requests, want 2", len(calls))
			}
			if calls[1].path != "/v2" {
				t.Errorf("the redirect went to %s", calls[1].path)
			}
			assertEnvelope(t, calls[1], "steps/toolCallRequest")
			if string(calls[1].body) != string(calls[0].body) {
				t.Errorf("the redirected body differs:\n%s\n%s", calls[1].body, calls[0].body)
			}
		})
	}
}

func TestRedirectLimit(t *testing.T) {
	chain := func(self string) map[string]string {
		return map[string]string{"/": self + "/1", "/1": self + "/2", "/2": self + "/3", "/3": "/4"}
	}
	t.Run("three followed", func(t *testing.T) {
		g := redirectingGuardian(t, http.StatusTemporaryRedirect, func(self string) map[string]string {
			hops := chain(self)
			delete(hops, "/3")
			return hops
		})
		if _, err := g.client(t).ToolCallRequest(context.Background(), aos.ToolCallRequestParams{}); err != nil {
			t.Fatal(err)
		}
		if n := len(g.received()); n != 4 {
			t.Errorf("the guardian received %d requests, want 4", n)
		}
	})
	t.Run("four refused", func(t *testing.T) {
		g := redirectingGuardian(t, http.StatusTemporaryRedirect, chain)
		_, err := g.client(t).ToolCallRequest(context.Background(), aos.ToolCallRequestParams{})
		assertUnavailable(t, err, "stopped after 3 redirects")
		if n := len(g.received()); n != 4 {
			t.Errorf("the guardian received %d requests, want 4", n)
		}
	})
}

func TestRedirectRefused(t *testing.T) {
	other := newGuardian(t, answerResult(allowResult))
	tests := []struct {
		name string
		code int
		to   func(self *url.URL) string
		why  string
	}{
		{"another host", http.StatusTemporaryRedirect, func(self *url.URL) string {
			return "http://localhost:" + self.Port() + "/"
		}, "another origin"},
		{"another port", http.StatusTemporaryRedirect, func(*url.URL) string {
			return other.srv.URL + "/"
		}, "another origin"},
		{"another scheme", http.StatusPermanentRedirect, func(self *url.URL) string {
			return "https://" + self.Host + "/"
		}, "another origin"},
		{"a 302 that turns the POST into a GET", http.StatusFound, func(self *url.URL) string {
			return self.String() + "/v2"
		}, "turns POST into GET"},
		{"a 303 that turns the POST into a GET", http.StatusSeeOther, func(self *url.URL) string {
			return self.String() + "/v2"
		}, "turns POST into GET"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := redirectingGuardian(t, tt.code, func(self string) map[string]string {
				u, err := url.Parse(self)
				if err != nil {
					panic(err)
				}
				return map[string]string{"/": tt.to(u)}
			})
			_, err := g.client(t).ToolCallRequest(context.Background(), aos.ToolCallRequestParams{})
			assertUnavailable(t, err, tt.why)
			if n := len(g.received()); n != 1 {
				t.Errorf("the guardian received %d requests, want 1", n)
			}
		})
	}
	if n := len(other.received()); n != 0 {
		t.Errorf("the other server received %d requests", n)
	}
}

// markingTransport marks each request so that a test can tell it went through
// the caller's http.Client.
type markingTransport struct{}

func (markingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Caller-Transport", "yes")
	return http.DefaultTransport.RoundTrip(r)
}

func TestCallersHTTPClient(t *testing.T) {
	other := newGuardian(t, answerResult(allowResult))
	g := redirectingGuardian(t, http.StatusTemporaryRedirect, func(self string) map[string]string {
		return map[string]string{"/": self + "/v2", "/away": other.srv.URL + "/"}
	})

	t.Run("its transport is used and its redirect policy left alone", func(t *testing.T) {
		callers := &http.Client{Transport: markingTransport{}}
		client, err := aos.NewClient(g.srv.URL, callers)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.ToolCallRequest(context.Background(), aos.ToolCallRequestParams{}); err != nil {
			t.Fatal(err)
		}
		for _, c := range g.received() {
			if c.header.Get("X-Caller-Transport") != "yes" {
				t.Errorf("the request to %s did not go through the caller's transport", c.path)
			}
		}
		if callers.CheckRedirect != nil {
			t.Error("NewClient set the caller's CheckRedirect")
		}
	})

	t.Run("a permissive policy does not lift the origin rule", func(t *testing.T) {
		callers := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
		client, err := aos.NewClient(g.srv.URL+"/away", callers)
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.ToolCallRequest(context.Background(), aos.ToolCallRequestParams{})
		assertUnavailable(t, err, "another origin")
		if n := len(other.received()); n != 0 {
			t.Errorf("the other server received %d requests", n)
		}
	})

	t.Run("a stricter policy still applies", func(t *testing.T) {
		errCaller := errors.New("the caller allows no redirects")
		callers := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return errCaller }}
		client, err := aos.NewClient(g.srv.URL, callers)
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.ToolCallRequest(context.Background(), aos.ToolCallRequestParams{})
		assertUnavailable(t, err, errCaller.Error())
		if !errors.Is(err, errCaller) {
			t.Errorf("error %v does not wrap the caller's", err)
		}
		if !errors.Is(callers.CheckRedirect(nil, nil), errCaller) {
			t.Error("NewClient replaced the caller's CheckRedirect")
		}
	})
}

func TestPing(t *testing.T) {
	t.Run("connected", func(t *testing.T) {
		client := newGuardian(t, answerResult(`{"status":"connected","version":"0.3.1","timestamp":"2026-01-02T03:04:06Z","metadata":{"load":0.5}}`)).client(t)
		got, err := client.Ping(context.Background(), aos.PingParams{})
		if err != nil {
			t.Fatal(err)
		}
		want := aos.PingResult{Status: "connected", Version: "0.3.1", Timestamp: "2026-01-02T03:04:06Z", Metadata: map[string]any{"load": 0.5}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v, want %+v", got, want)
		}
	})

	t.Run("error status", func(t *testing.T) {
		client := newGuardian(t, answerResult(`{"status":"error","version":"0.3.1","timestamp":"2026-01-02T03:04:06Z","metadata":{"reason":"no policy loaded"}}`)).client(t)
		got, err := client.Ping(context.Background(), aos.PingParams{})
		assertUnavailable(t, err, `ping status "error"`)
		if got.Status != "error" || got.Metadata["reason"] != "no policy loaded" {
			t.Errorf("the result %+v is not returned with the error", got)
		}
	})

	unavailable := []struct {
		name   string
		result string
		why    string
	}{
		{"no status", `{"version":"0.3.1","timestamp":"2026-01-02T03:04:06Z"}`, `ping status ""`},
		{"unknown status", `{"status":"degraded","version":"0.3.1","timestamp":"2026-01-02T03:04:06Z"}`, `ping status "degraded"`},
		{"status not a string", `{"status":true,"version":"0.3.1","timestamp":"2026-01-02T03:04:06Z"}`, "ping result is malformed"},
		{"a decision instead", allowResult, `ping status ""`},
	}
	for _, tt := range unavailable {
		t.Run(tt.name, func(t *testing.T) {
			client := newGuardian(t, answerResult(tt.result)).client(t)
			_, err := client.Ping(context.Background(), aos.PingParams{})
			assertUnavailable(t, err, tt.why)
		})
	}

	t.Run("JSON-RPC error", func(t *testing.T) {
		client := newGuardian(t, answerEnvelope(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`)).client(t)
		_, err := client.Ping(context.Background(), aos.PingParams{})
		if rpcErr, ok := errors.AsType[*aos.RPCError](err); !ok || rpcErr.Code != -32601 {
			t.Errorf("error %v, want an RPCError with code -32601", err)
		}
		if errors.Is(err, aos.ErrUnavailable) {
			t.Errorf("an RPCError wraps ErrUnavailable: %v", err)
		}
	})

	t.Run("500", func(t *testing.T) {
		client := newGuardian(t, func(w http.ResponseWriter, _ call) {
			writeBody(w, http.StatusBadGateway, "text/plain", "")
		}).client(t)
		_, err := client.Ping(context.Background(), aos.PingParams{})
		assertUnavailable(t, err, "HTTP status 502 Bad Gateway")
	})
}

func TestConcurrentCalls(t *testing.T) {
	// The guardian denies odd tools and allows even ones, naming the tool in
	// its message, so that each caller can tell it got its own answer.
	g := newGuardian(t, func(w http.ResponseWriter, c call) {
		var p struct {
			ToolCallRequest struct {
				ToolID string `json:"toolId"`
			} `json:"toolCallRequest"`
			ExecutionID string `json:"executionId"`
		}
		if err := json.Unmarshal(c.params, &p); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		tool := p.ToolCallRequest.ToolID
		if tool == "" {
			tool = p.ExecutionID
		}
		n, err := strconv.Atoi(tool)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		decision := aos.DecisionAllow
		if n%2 == 1 {
			decision = aos.DecisionDeny
		}
		time.Sleep(time.Duration(n%5) * time.Millisecond)
		answerResult(`{"decision":"`+decision+`","message":"`+tool+`"}`)(w, c)
	})
	client := g.client(t)

	const callers = 64
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for i := range callers {
		wg.Go(func() {
			tool := strconv.Itoa(i)
			var d aos.Decision
			var err error
			if i%4 == 0 {
				d, err = client.ToolCallResult(context.Background(), aos.ToolCallResultParams{ExecutionID: tool})
			} else {
				d, err = client.ToolCallRequest(context.Background(), aos.ToolCallRequestParams{
					ToolCallRequest: aos.ToolCallRequest{ToolID: tool},
				})
			}
			want := aos.DecisionAllow
			if i%2 == 1 {
				want = aos.DecisionDeny
			}
			switch {
			case err != nil:
				errs <- fmt.Errorf("call %d: %w", i, err)
			case d.Decision != want || d.Message != tool:
				errs <- fmt.Errorf("call %d got %s %q, want %s %q", i, d.Decision, d.Message, want, tool)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	ids := map[string]bool{}
	for _, c := range g.received() {
		ids[string(c.id)] = true
	}
	if len(ids) != callers {
		t.Errorf("%d distinct request ids in %d calls", len(ids), callers)
	}
}
