package bench

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/httpapi"
	"github.com/lmosdir/lmosdir/internal/dirtest"
	"github.com/lmosdir/lmosdir/lmos/gateway"
)

// directoryURL serves a real lmosdir (embedded store, real socket) for the tool to load.
func directoryURL(t *testing.T) string {
	t.Helper()
	dir := dirtest.NewEmbedded(t, directory.Options{ReadCacheBytes: 1 << 20})
	gw, err := gateway.New(gateway.Config{SelfID: "http://localhost/lmos"}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{BaseURL: "http://localhost", MaxBodyBytes: 1 << 20, DefaultPageSize: 100, MaxPageSize: 1000, Gateway: gw}, dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	dirtest.StartEvents(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); gw.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-stopped })
	return srv.URL
}

func collect(t *testing.T, cfg Config) []Result {
	t.Helper()
	var results []Result
	if err := Run(context.Background(), cfg, func(r Result) error {
		results = append(results, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return results
}

func TestRunScenarios(t *testing.T) {
	cfg := Config{
		Target: directoryURL(t), Scenarios: []string{"put", "get", "list", "patch-heartbeat"},
		Concurrency: 4, Duration: 400 * time.Millisecond, N: 60, Seed: 7, Preload: true,
		ServerPID: os.Getpid(), Label: "embedded",
	}
	results := collect(t, cfg)
	var names []string
	for _, r := range results {
		names = append(names, r.Scenario)
		if r.Requests == 0 || r.Errors != 0 {
			t.Errorf("%s: %d requests, %d errors %v", r.Scenario, r.Requests, r.Errors, r.ErrorKinds)
		}
		if !(r.P50ms > 0 && r.P50ms <= r.P90ms && r.P90ms <= r.P99ms && r.P99ms <= r.Maxms) {
			t.Errorf("%s: percentiles out of order: %+v", r.Scenario, r)
		}
		if r.RPS <= 0 || r.ServerRSSMiB <= 0 || r.Label != "embedded" || r.Concurrency != 4 || r.N != 60 {
			t.Errorf("%s: incomplete result %+v", r.Scenario, r)
		}
	}
	if got := strings.Join(names, " "); got != "preload put get list-page list-stream patch-heartbeat" {
		t.Errorf("scenarios run: %s", got)
	}
	if results[0].Requests != 60 {
		t.Errorf("preload sent %d requests, want N=60", results[0].Requests)
	}
}

func TestErrorsAreCounted(t *testing.T) {
	// Without a preload every GET names a Thing the directory does not have.
	results := collect(t, Config{Target: directoryURL(t), Scenarios: []string{"get"}, Concurrency: 2, Duration: time.Minute, Requests: 25, N: 10})
	r := results[0]
	if r.Requests != 25 || r.Errors != 25 || r.ErrorKinds["status 404"] != 25 {
		t.Errorf("errors not counted: %+v", r)
	}
}

func TestConfigChecks(t *testing.T) {
	base := Config{Target: "http://127.0.0.1:1", Scenarios: []string{"get"}, Concurrency: 1, Duration: time.Second, N: 1}
	tests := []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Target = "http://192.0.2.10:8080" }, "--allow-remote"},
		{func(c *Config) { c.Scenarios = []string{"nope"} }, "unknown scenario"},
		{func(c *Config) { c.Duration = 0 }, "bounded in time"},
		{func(c *Config) { c.Concurrency = 0 }, "concurrency"},
		{func(c *Config) { c.Target = "ftp://x" }, "http"},
		{func(c *Config) { c.Scenarios = []string{"events"}; c.WriteInterval = time.Millisecond }, "subscribers"},
		{func(c *Config) { c.Scenarios = []string{"events"}; c.Subscribers = 1 }, "write interval"},
	}
	for _, tt := range tests {
		cfg := base
		tt.change(&cfg)
		err := Run(context.Background(), cfg, func(Result) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("error %v, want one mentioning %q", err, tt.want)
		}
	}
}

func TestFindServerByPort(t *testing.T) {
	url := directoryURL(t)
	p := findServer(Config{Target: url})
	if p == nil || p.pid != os.Getpid() {
		t.Fatalf("the process listening on %s was not found: %+v", url, p)
	}
	if s := p.snapshot(); !s.ok || s.rssBytes <= 0 || s.cpu <= 0 {
		t.Errorf("snapshot of this process: %+v", s)
	}
}

func TestPercentile(t *testing.T) {
	var sorted []time.Duration
	for i := 1; i <= 100; i++ {
		sorted = append(sorted, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{0.5: 50 * time.Millisecond, 0.9: 90 * time.Millisecond, 0.99: 99 * time.Millisecond, 1: 100 * time.Millisecond} {
		if got := percentile(sorted, p); got != want {
			t.Errorf("p%v = %v, want %v", p*100, got, want)
		}
	}
	if percentile(nil, 0.5) != 0 {
		t.Error("percentile of nothing")
	}
}

func TestReportRoundTrip(t *testing.T) {
	results := []Result{
		{Label: "embedded", Scenario: "get", Concurrency: 32, N: 10, Requests: 1000, RPS: 2000, P50ms: 1, P90ms: 2, P99ms: 3, Maxms: 4},
		{Label: "embedded", Scenario: "put", Concurrency: 32, N: 10, Requests: 10, Errors: 2, ErrorKinds: map[string]int{"status 500": 2}, RPS: 20},
	}
	var buf bytes.Buffer
	for _, r := range results {
		if err := WriteJSON(&buf, r); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	read, err := ReadJSON(path)
	if err != nil || len(read) != 2 || read[1].ErrorKinds["status 500"] != 2 {
		t.Fatalf("read back %+v %v", read, err)
	}
	previous := []Result{{Label: "embedded", Scenario: "get", RPS: 1000}}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, read, previous); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{"| embedded | get | 32 | 10 | 1000 | 0 | 2000 | 1000 (+100%) |", "**2** (status 500 ×2)"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "deliveries") {
		t.Errorf("a table of deliveries without an events result:\n%s", out)
	}
	if missing, err := ReadJSON(filepath.Join(t.TempDir(), "none.jsonl")); err != nil || missing != nil {
		t.Errorf("a missing results file: %v %v", missing, err)
	}
}

func TestPreloadOnlyForScenariosThatAddressThings(t *testing.T) {
	for names, want := range map[string]bool{
		"gateway": false, "events": false, "gateway,events": false,
		"get": true, "events,put": true, "jsonpath-title": true,
	} {
		if got := addressesThings(strings.Split(names, ",")); got != want {
			t.Errorf("addressesThings(%s) = %t", names, got)
		}
	}
}
