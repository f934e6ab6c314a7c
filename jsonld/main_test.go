package jsonld

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
)

// defaultDials records what went through http.DefaultTransport, which
// TestMain replaces: a path that falls back to a default client (ours when
// Client is nil, or json-gold's own loader) must reach no host a test did not
// start.
var defaultDials struct {
	sync.Mutex
	allowed map[string]bool
	refused []string
}

func TestMain(m *testing.M) {
	defaultDials.allowed = make(map[string]bool)
	var dialer net.Dialer
	http.DefaultTransport = &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			defaultDials.Lock()
			ok := defaultDials.allowed[addr]
			if !ok {
				defaultDials.refused = append(defaultDials.refused, addr)
			}
			defaultDials.Unlock()
			if !ok {
				return nil, fmt.Errorf("test: dial %s refused", addr)
			}
			return dialer.DialContext(ctx, network, addr)
		},
	}
	code := m.Run()
	if len(defaultDials.refused) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the default transport dialed %v\n", defaultDials.refused)
		code = 1
	}
	os.Exit(code)
}

// allowDefaultDial lets http.DefaultTransport reach srv for the rest of t.
func allowDefaultDial(t *testing.T, srv *httptest.Server) {
	t.Helper()
	addr := srv.Listener.Addr().String()
	defaultDials.Lock()
	defaultDials.allowed[addr] = true
	defaultDials.Unlock()
	t.Cleanup(func() {
		defaultDials.Lock()
		delete(defaultDials.allowed, addr)
		defaultDials.Unlock()
	})
}

// guardedClient returns a client that may only connect to the given test
// servers; dialing anything else fails t.
func guardedClient(t *testing.T, servers ...*httptest.Server) *http.Client {
	t.Helper()
	allowed := make([]string, 0, len(servers))
	for _, srv := range servers {
		allowed = append(allowed, srv.Listener.Addr().String())
	}
	var dialer net.Dialer
	transport := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if !slices.Contains(allowed, addr) {
				t.Errorf("loader dialed %s %s", network, addr)
				return nil, fmt.Errorf("test: dial %s refused", addr)
			}
			return dialer.DialContext(ctx, network, addr)
		},
	}
	t.Cleanup(transport.CloseIdleConnections)
	return &http.Client{Transport: transport}
}

// newLoader builds a Loader whose client fails t on any dial outside servers.
func newLoader(t *testing.T, opts LoaderOptions, servers ...*httptest.Server) *Loader {
	t.Helper()
	if opts.Client == nil {
		opts.Client = guardedClient(t, servers...)
	}
	l, err := NewLoader(opts)
	if err != nil {
		t.Fatalf("NewLoader: %v", err)
	}
	return l
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
