package integration

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchCommand loads a served directory with `lmosdir bench` from a second process,
// as `make bench` does.
func TestBenchCommand(t *testing.T) {
	p := serve(t, "sqlite://"+filepath.Join(t.TempDir(), "lmosdir.db"))
	p.waitHealthy(t)
	out, err := lmosdir(t, nil, "bench", "--target", p.url, "--n", "40", "--concurrency", "4",
		"--duration", "300ms", "--scenario", "get,patch-heartbeat", "--label", "itest", "--json")
	if err != nil {
		t.Fatalf("lmosdir bench: %v\n%s", err, out)
	}
	var scenarios []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct {
			Label, Scenario string
			Requests        int
			Errors          int
			RPS             float64
			ServerCPU       float64 `json:"server_cpu_percent"`
			ServerRSS       float64 `json:"server_rss_mib"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not a JSON result line: %q: %v", line, err)
		}
		if r.Label != "itest" || r.Requests == 0 || r.Errors != 0 || r.RPS <= 0 || r.ServerRSS <= 0 {
			t.Errorf("result %+v", r)
		}
		scenarios = append(scenarios, r.Scenario)
	}
	if got := strings.Join(scenarios, " "); got != "preload get patch-heartbeat" {
		t.Errorf("scenarios %q", got)
	}
	if out, err := lmosdir(t, nil, "bench", "--target", "http://192.0.2.1:8080", "--duration", "1s"); err == nil || !strings.Contains(out, "--allow-remote") {
		t.Errorf("remote target not refused: %v %q", err, out)
	}
}
