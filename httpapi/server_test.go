package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/directory/postgres"
	"github.com/lmosdir/lmosdir/directory/sqlite"
	"github.com/lmosdir/lmosdir/internal/dirtest"
	"github.com/lmosdir/lmosdir/internal/pgtest"
	"github.com/lmosdir/lmosdir/jsonld"
	"github.com/lmosdir/lmosdir/lmos/gateway"
	"github.com/lmosdir/lmosdir/td"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type fixture struct {
	t      *testing.T
	url    string
	clock  *dirtest.Clock
	server *Server
	dir    *directory.Service
}

// fixtureOptions are what tests vary in a fixture beyond the HTTP configuration.
type fixtureOptions struct {
	limits directory.SearchLimits
	// withoutExpansion leaves the background expansion off, for tests that register many
	// TDs and do not look at their expansion: under the race detector it would take most
	// of the CPU.
	withoutExpansion bool
	// eventBuffer and maxSubscribers are the directory's EventBuffer and MaxSubscribers
	// (0: its defaults).
	eventBuffer, maxSubscribers int
	// gateway, when set, runs an LMOS gateway with this configuration.
	gateway *gateway.Config
}

var validator = sync.OnceValues(td.NewValidator)

// expander is the JSON-LD processing of lmosdir serve without a context folder or
// allow-list: only the bundled contexts load.
var expander = sync.OnceValues(func() (*jsonld.Expander, error) {
	loader, err := jsonld.NewLoader(jsonld.LoaderOptions{})
	if err != nil {
		return nil, err
	}
	return jsonld.NewExpander(loader), nil
})

// forEachStore runs test once on each store: what the API shows must not depend on it.
func forEachStore(t *testing.T, test func(t *testing.T, store string)) {
	for _, store := range []string{"postgres", "sqlite"} {
		t.Run(store, func(t *testing.T) { test(t, store) })
	}
}

func openStore(t *testing.T, kind string) directory.Store {
	t.Helper()
	ctx := context.Background()
	var (
		store directory.Store
		err   error
	)
	switch kind {
	case "postgres":
		store, err = postgres.Open(ctx, pgtest.NewDatabase(t), postgres.Options{MigrateOnOpen: true})
	case "sqlite":
		store, err = sqlite.Open(ctx, filepath.Join(t.TempDir(), "lmosdir.db"), sqlite.Options{MigrateOnOpen: true})
	default:
		t.Fatalf("unknown store %q", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Error(err)
		}
	})
	return store
}

func newFixture(t *testing.T, storeKind string, tune ...func(*Config)) *fixture {
	t.Helper()
	return newFixtureWith(t, storeKind, fixtureOptions{}, tune...)
}

// newFixtureWith is newFixture with options. Unless told otherwise the fixture runs the
// background expansion, as lmosdir serve does.
func newFixtureWith(t *testing.T, storeKind string, opts fixtureOptions, tune ...func(*Config)) *fixture {
	t.Helper()
	store := openStore(t, storeKind)
	var cacheBytes int
	if storeKind == "sqlite" { // as lmosdir serve runs it
		cacheBytes = 1 << 20
	}
	v, err := validator()
	if err != nil {
		t.Fatal(err)
	}
	expander, err := expander()
	if err != nil {
		t.Fatal(err)
	}
	clk := dirtest.NewClock(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	dir := directory.NewService(store, v, directory.Options{
		MaxTTL: 24 * time.Hour, Clock: clk.Now, ReadCacheBytes: cacheBytes, Expander: expander, Search: opts.limits,
		EventBuffer: opts.eventBuffer, MaxSubscribers: opts.maxSubscribers,
	})
	if !opts.withoutExpansion {
		ctx, cancel := context.WithCancel(context.Background())
		expanding := make(chan struct{})
		go func() {
			defer close(expanding)
			dir.RunExpansion(ctx, 2, time.Second, slog.New(slog.DiscardHandler))
		}()
		t.Cleanup(func() { cancel(); <-expanding })
	}
	cfg := Config{BaseURL: "http://dir.example:8080", MaxBodyBytes: 1 << 20, DefaultPageSize: 5, MaxPageSize: 50, Version: "test"}
	if opts.gateway != nil {
		cfg.Gateway = startGateway(t, dir, *opts.gateway)
	}
	for _, f := range tune {
		f(&cfg)
	}
	srv, err := New(cfg, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	dirtest.StartEvents(t, dir)
	return &fixture{t: t, url: hs.URL, clock: clk, server: srv, dir: dir}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request with a raw (already escaped) path, so tests control the exact bytes.
func (f *fixture) do(method, path, contentType, body string) response {
	f.t.Helper()
	header := http.Header{}
	if contentType != "" {
		header.Set("Content-Type", contentType)
	}
	return f.send(method, path, header, body)
}

// doAccept sends a request without a body with the given Accept header.
func (f *fixture) doAccept(method, path, accept string) response {
	f.t.Helper()
	return f.send(method, path, http.Header{"Accept": {accept}}, "")
}

func (f *fixture) send(method, path string, header http.Header, body string) response {
	f.t.Helper()
	req, err := http.NewRequestWithContext(f.t.Context(), method, f.url, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	// Opaque puts the path on the request line byte for byte, even when it is not a valid
	// escape, as a misbehaving client would send it.
	req.URL.Opaque = "//" + req.URL.Host + path
	for name, values := range header {
		req.Header[name] = values
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: data}
}

func (f *fixture) put(path, body string) response { return f.do(http.MethodPut, path, mediaTD, body) }
func (f *fixture) get(path string) response       { return f.do(http.MethodGet, path, "", "") }

func (r response) want(t *testing.T, status int) response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body: %s", r.status, status, r.body)
	}
	return r
}

func (r response) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// problem checks that r is RFC 7807 problem details for its status and returns them.
func (r response) problem(t *testing.T) Problem {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json; body: %s", ct, r.body)
	}
	var p Problem
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("problem body: %v: %s", err, r.body)
	}
	if p.Status != r.status || p.Title != http.StatusText(r.status) || p.Type == "" || p.Detail == "" || p.Instance == "" {
		t.Fatalf("incomplete problem details for %d: %+v", r.status, p)
	}
	return p
}

// minimalTD is a valid TD with the given id and title.
func minimalTD(id, title string) string {
	idMember := ""
	if id != "" {
		b, _ := json.Marshal(id)
		idMember = `"id": ` + string(b) + `, `
	}
	return `{"@context": "https://www.w3.org/2022/wot/td/v1.1", ` + idMember + `"title": "` + title + `", ` +
		`"securityDefinitions": {"nosec_sc": {"scheme": "nosec"}}, "security": "nosec_sc"}`
}

func readCorpus(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile("../td/testdata/corpus/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
