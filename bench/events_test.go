package bench

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestEventsScenario(t *testing.T) {
	const subscribers, writes = 20, 30
	cfg := Config{
		Target: directoryURL(t), Scenarios: []string{"events"}, Concurrency: 4, Duration: time.Minute,
		Requests: writes, N: 10, Seed: 7, ServerPID: os.Getpid(), Label: "embedded",
		Subscribers: subscribers, WriteInterval: 5 * time.Millisecond,
	}
	results := collect(t, cfg)
	if len(results) != 2 || results[0].Scenario != "events-baseline" || results[1].Scenario != "events" {
		t.Fatalf("results: %+v", results)
	}
	for _, r := range results {
		if r.Requests != writes || r.Errors != 0 || r.Concurrency != 1 {
			t.Errorf("%s: %d writes, %d errors %v, %d writers", r.Scenario, r.Requests, r.Errors, r.ErrorKinds, r.Concurrency)
		}
		if !(r.P50ms > 0 && r.P50ms <= r.P99ms && r.P99ms <= r.Maxms) {
			t.Errorf("%s: write percentiles out of order: %+v", r.Scenario, r)
		}
	}
	if base := results[0]; base.Subscribers != 0 || base.Deliveries != 0 || base.DeliveryP99ms != 0 {
		t.Errorf("the baseline has deliveries: %+v", base)
	}
	r := results[1]
	if r.Subscribers != subscribers || r.Deliveries != writes*subscribers || r.Missed != 0 {
		t.Errorf("%d subscribers, %d deliveries, %d missed; want %d, %d, 0", r.Subscribers, r.Deliveries, r.Missed, subscribers, writes*subscribers)
	}
	if !(r.DeliveryP50ms > 0 && r.DeliveryP50ms <= r.DeliveryP99ms && r.DeliveryP99ms <= r.DeliveryMaxms) {
		t.Errorf("delivery percentiles: %+v", r)
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
	if err != nil || !reflect.DeepEqual(read, results) {
		t.Fatalf("read back %+v %v, want %+v", read, err, results)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, read, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| delivery p99 ms |", "| embedded | events-baseline | 0 | 30 |", "| embedded | events | 20 | 30 |", "| 600 | 0 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

// fakeDirectory accepts every write and serves /events with events.
func fakeDirectory(t *testing.T, events http.HandlerFunc) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /things/{id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusCreated) })
	mux.HandleFunc("GET /events", events)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestEventsFailures(t *testing.T) {
	const subscribers, writes = 5, 3
	tests := []struct {
		name         string
		events       http.HandlerFunc
		kind         string
		wantRequests int
		wantMissed   int
	}{
		{
			name:   "subscribers cannot open",
			events: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) },
			kind:   "subscribe: status 503",
		},
		{
			name: "streams end early",
			events: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
			},
			kind: "event stream ended early", wantRequests: writes, wantMissed: writes * subscribers,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Target: fakeDirectory(t, tt.events), Scenarios: []string{"events"}, Concurrency: 1, Duration: time.Minute, Requests: writes, N: 1, Subscribers: subscribers, WriteInterval: time.Millisecond}
			results := collect(t, cfg)
			if base := results[0]; base.Requests != writes || base.Errors != 0 {
				t.Errorf("baseline: %+v", base)
			}
			r := results[1]
			if r.Errors != subscribers || r.ErrorKinds[tt.kind] != subscribers || r.Requests != tt.wantRequests || r.Missed != tt.wantMissed || r.Deliveries != 0 {
				t.Errorf("result: %+v", r)
			}
		})
	}
}

func TestEventThingID(t *testing.T) {
	for line, want := range map[string]string{
		"data: {\"id\":\"urn:lmosdir:gen:1:1\"}\n":          "urn:lmosdir:gen:1:1",
		"data: {\"id\":\"urn:x\",\"title\":\"Lamp\"}\n":     "urn:x",
		"data: {\"title\":\"no id\"}\n":                     "",
		"data: {\"id\":\"cut off":                           "",
		"data: {\"@context\":\"x\",\"id\":\"urn:later\"}\n": "urn:later",
	} {
		if got := string(eventThingID([]byte(line))); got != want {
			t.Errorf("eventThingID(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestEventsReport(t *testing.T) {
	results := []Result{
		{Label: "sqlite", Scenario: "events-baseline", Requests: 200, P50ms: 1, P99ms: 2},
		{Label: "sqlite", Scenario: "events", Requests: 200, P50ms: 1.05, P99ms: 2.2, Subscribers: 1000, Deliveries: 199990, Missed: 10, DeliveryP50ms: 3, DeliveryP99ms: 9.5, DeliveryMaxms: 20},
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, results, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| sqlite | events-baseline | 0 | 200 | 1.00 | 2.00 | – | – | – | – | – |",
		"| sqlite | events | 1000 | 200 | 1.05 (+5%) | 2.20 (+10%) | 199990 | **10** | 3.00 | 9.50 | 20.00 |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}
