package bench

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

func TestGatewayScenario(t *testing.T) {
	cfg := Config{
		Target: directoryURL(t), Scenarios: []string{"gateway"}, Concurrency: 3, Duration: 300 * time.Millisecond,
		N: 1, GatewayPace: 5 * time.Millisecond,
	}
	results := collect(t, cfg)
	want := []struct {
		name  string
		conns int
	}{{"gateway-direct-1", 1}, {"gateway-1", 1}, {"gateway-direct", 3}, {"gateway", 3}}
	if len(results) != len(want) {
		t.Fatalf("results: %+v", results)
	}
	for i, r := range results {
		if r.Scenario != want[i].name || r.Concurrency != want[i].conns {
			t.Errorf("result %d is %s with %d connections, want %s with %d", i, r.Scenario, r.Concurrency, want[i].name, want[i].conns)
		}
		if r.Requests == 0 || r.Errors != 0 {
			t.Errorf("%s: %d request-replies, %d errors %v", r.Scenario, r.Requests, r.Errors, r.ErrorKinds)
		}
		if !(r.P50ms > 0 && r.P50ms <= r.P99ms && r.P99ms <= r.Maxms) {
			t.Errorf("%s: percentiles out of order: %+v", r.Scenario, r)
		}
	}
	// Paced at 5 ms, one connection sends at most one request per pace.
	if paced := results[1]; paced.Requests > int(cfg.Duration/cfg.GatewayPace)+1 {
		t.Errorf("%d paced requests in %s", paced.Requests, cfg.Duration)
	}
}

func TestEchoAgentProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	listener, err := new(net.ListenConfig).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	served := make(chan error, 1)
	go func() { served <- ServeEchoAgent(ctx, listener, &out) }()
	c, err := dialLMOS(ctx, "ws://"+listener.Addr().String()+"/agent")
	if err != nil {
		t.Fatal(err)
	}
	if s := requestReply(ctx, c); s.failure != "" {
		t.Errorf("request-reply failed: %s", s.failure)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("serving ended with %v", err)
	}
	if got := strings.TrimSpace(out.String()); got != "ws://"+listener.Addr().String()+"/agent" {
		t.Errorf("the agent announced %q", got)
	}
}
