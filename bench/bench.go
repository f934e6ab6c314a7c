// Package bench measures a running lmosdir over HTTP, from a separate process, the way its
// clients load it: it preloads generated Things, then runs timed scenarios with many
// concurrent clients and reports throughput, latency percentiles, errors and, when the
// server runs on the same machine, its CPU and memory.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lmosdir/lmosdir/internal/tdgen"
)

// Config is one benchmark run.
type Config struct {
	// Target is the base URL of the directory, e.g. http://127.0.0.1:8080.
	Target string
	// Scenarios to run, in order; see Scenarios for the names.
	Scenarios []string
	// Concurrency is the number of clients sending requests at once.
	Concurrency int
	// Duration bounds each scenario.
	Duration time.Duration
	// Requests, when positive, ends a scenario after that many requests (Duration still
	// bounds it).
	Requests int
	// N is the number of Things preloaded and addressed by the scenarios.
	N int
	// Seed selects the generated Things.
	Seed int64
	// Preload registers the N Things before the scenarios run, when one of them addresses
	// them (events and gateway do not).
	Preload bool
	// AllowRemote permits a target that is not on this machine's loopback.
	AllowRemote bool
	// ServerPID is the directory's process for CPU and memory figures; 0 looks for the
	// process listening on the target's port, when it runs on this machine.
	ServerPID int
	// Label names the run in reports, e.g. the store it ran on.
	Label string
	// Subscribers is the number of event streams the events scenario opens.
	Subscribers int
	// WriteInterval paces the one writer of the events scenario.
	WriteInterval time.Duration
	// EchoAgent is the command that runs the gateway scenario's echo agent in a process
	// of its own (lmosdir bench echo-agent); empty: in this process.
	EchoAgent []string
	// GatewayPace spaces the requests of the gateway scenario's one-connection runs; 0
	// sends them back to back (the directory's --gateway-rate must then allow it).
	GatewayPace time.Duration
}

// Result is the outcome of one scenario. Errors counts every request that failed, by
// transport or by an unexpected status; ErrorKinds says which. The events scenario adds
// the deliveries of its writes' events to its subscribers, timed from the sending of the
// write; Missed are those not received within 5 s of the last write.
type Result struct {
	Label        string         `json:"label,omitempty"`
	Scenario     string         `json:"scenario"`
	Concurrency  int            `json:"concurrency"`
	N            int            `json:"n"`
	Seconds      float64        `json:"seconds"`
	Requests     int            `json:"requests"`
	Errors       int            `json:"errors"`
	ErrorKinds   map[string]int `json:"error_kinds,omitempty"`
	RPS          float64        `json:"rps"`
	P50ms        float64        `json:"p50_ms"`
	P90ms        float64        `json:"p90_ms"`
	P99ms        float64        `json:"p99_ms"`
	Maxms        float64        `json:"max_ms"`
	MBps         float64        `json:"mb_per_s,omitempty"`
	ServerCPU    float64        `json:"server_cpu_percent,omitempty"`
	ServerRSSMiB float64        `json:"server_rss_mib,omitempty"`

	Subscribers   int     `json:"subscribers,omitempty"`
	Deliveries    int     `json:"deliveries,omitempty"`
	Missed        int     `json:"missed,omitempty"`
	DeliveryP50ms float64 `json:"delivery_p50_ms,omitempty"`
	DeliveryP99ms float64 `json:"delivery_p99_ms,omitempty"`
	DeliveryMaxms float64 `json:"delivery_max_ms,omitempty"`
}

// Run preloads if asked and runs every scenario of cfg, calling report after each.
func Run(ctx context.Context, cfg Config, report func(Result) error) error {
	if err := cfg.check(ctx); err != nil {
		return err
	}
	b := &bench{
		cfg:    cfg,
		gen:    tdgen.New(cfg.Seed),
		client: newClient(cfg.Concurrency),
		base:   trimSlash(cfg.Target),
	}
	b.probes = sync.OnceValue(b.describeProbes)
	b.server = findServer(cfg)
	if cfg.Preload && (len(cfg.Scenarios) == 0 || addressesThings(cfg.Scenarios)) {
		r, err := b.preload(ctx)
		if err != nil {
			return err
		}
		if err := report(r); err != nil {
			return err
		}
	}
	for _, name := range cfg.Scenarios {
		for _, s := range scenarios[name].expand() {
			if err := b.run(ctx, s, report); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *bench) run(ctx context.Context, s scenario, report func(Result) error) error {
	if s.run != nil {
		return s.run(ctx, b, report)
	}
	return report(b.drive(ctx, s, b.cfg.Duration, b.cfg.Requests))
}

func (cfg Config) check(ctx context.Context) error {
	switch {
	case cfg.Concurrency <= 0:
		return errors.New("concurrency must be positive")
	case cfg.Duration <= 0:
		return errors.New("duration must be positive: every run is bounded in time")
	case cfg.N <= 0:
		return errors.New("n must be positive")
	case len(cfg.Scenarios) == 0 && !cfg.Preload:
		return errors.New("no scenario to run")
	}
	for _, name := range cfg.Scenarios {
		if _, ok := scenarios[name]; !ok {
			return fmt.Errorf("unknown scenario %q; available: %s", name, ScenarioNames())
		}
	}
	if err := cfg.checkEvents(); err != nil {
		return err
	}
	u, err := url.Parse(cfg.Target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("target %q is not an http(s) URL", cfg.Target)
	}
	if !cfg.AllowRemote {
		return checkLoopback(ctx, u.Hostname())
	}
	return nil
}

// checkLoopback refuses targets off this machine: a load test sends a lot of traffic, and
// pointing it elsewhere must be a decision, not a typo.
func checkLoopback(ctx context.Context, host string) error {
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return fmt.Errorf("resolving target host %q: %w", host, err)
	}
	for _, addr := range addrs {
		if !addr.IP.IsLoopback() {
			return fmt.Errorf("target host %q is not a loopback address (%s); pass --allow-remote to load another machine", host, addr.IP)
		}
	}
	return nil
}

func newClient(concurrency int) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			MaxIdleConns:        concurrency * 2,
			MaxIdleConnsPerHost: concurrency * 2,
			IdleConnTimeout:     time.Minute,
		},
		Timeout: time.Minute,
	}
}

type bench struct {
	cfg    Config
	gen    *tdgen.Generator
	client *http.Client
	base   string
	server *serverProcess
	// probes describe some preloaded Things, for search scenarios that look for them.
	probes func() []tdgen.Info
}

// request is what one client sends; expect lists the statuses that count as success.
type request struct {
	method, path, contentType string
	body                      []byte
	expect                    []int
}

// scenario produces the i-th request of a worker; it must be safe for concurrent use.
type scenario struct {
	name    string
	next    func(b *bench, worker, i int) request
	subsets []string // a name that stands for several scenarios
	// run replaces the concurrent clients of next for a scenario that drives its own load;
	// it reports each result it produces.
	run func(ctx context.Context, b *bench, report func(Result) error) error
}

// addressesThings reports whether one of the named scenarios addresses the preloaded
// Things. Those that drive a load of their own do not: preloading for them would only
// leave the directory expanding the Things' TDs while they measure.
func addressesThings(names []string) bool {
	for _, name := range names {
		for _, s := range scenarios[name].expand() {
			if s.run == nil {
				return true
			}
		}
	}
	return false
}

func (s scenario) expand() []scenario {
	if len(s.subsets) == 0 {
		return []scenario{s}
	}
	var out []scenario
	for _, name := range s.subsets {
		out = append(out, scenarios[name])
	}
	return out
}

// sample is one finished request.
type sample struct {
	latency time.Duration
	bytes   int64
	failure string // empty on success
}

// drive runs s with cfg.Concurrency workers for at most timeout and, when requests is
// positive, for at most that many requests.
func (b *bench) drive(ctx context.Context, s scenario, timeout time.Duration, requests int) Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var issued atomic.Int64
	take := func() (int, bool) {
		i := int(issued.Add(1) - 1)
		return i, requests <= 0 || i < requests
	}
	before := b.server.snapshot()
	start := time.Now()
	results := make([][]sample, b.cfg.Concurrency)
	var wg sync.WaitGroup
	for w := range b.cfg.Concurrency {
		wg.Go(func() {
			for ctx.Err() == nil {
				i, ok := take()
				if !ok {
					return
				}
				smp := b.do(ctx, s.next(b, w, i))
				if ctx.Err() != nil && smp.failure != "" {
					return // cut off by the end of the run, not a failure of the server
				}
				results[w] = append(results[w], smp)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	return b.summarize(s.name, elapsed, slices.Concat(results...), before)
}

func (b *bench) do(ctx context.Context, r request) sample {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, r.method, b.base+r.path, bytesReader(r.body))
	if err != nil {
		return sample{latency: time.Since(start), failure: "bad request: " + err.Error()}
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	res, err := b.client.Do(req)
	if err != nil {
		return sample{latency: time.Since(start), failure: "transport error"}
	}
	n, err := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	smp := sample{latency: time.Since(start), bytes: n}
	switch {
	case err != nil:
		smp.failure = "body read error"
	case !slices.Contains(r.expect, res.StatusCode):
		smp.failure = fmt.Sprintf("status %d", res.StatusCode)
	}
	return smp
}

func (b *bench) summarize(name string, elapsed time.Duration, samples []sample, before procSnapshot) Result {
	r := Result{Label: b.cfg.Label, Scenario: name, Concurrency: b.cfg.Concurrency, N: b.cfg.N, Seconds: round(elapsed.Seconds(), 2), Requests: len(samples)}
	latencies := make([]time.Duration, 0, len(samples))
	var bytes int64
	for _, s := range samples {
		latencies = append(latencies, s.latency)
		bytes += s.bytes
		if s.failure != "" {
			r.addErrors(s.failure, 1)
		}
	}
	slices.Sort(latencies)
	r.RPS = round(float64(len(samples))/elapsed.Seconds(), 0)
	r.MBps = round(float64(bytes)/elapsed.Seconds()/1e6, 1)
	r.P50ms = millis(percentile(latencies, 0.50))
	r.P90ms = millis(percentile(latencies, 0.90))
	r.P99ms = millis(percentile(latencies, 0.99))
	if len(latencies) > 0 {
		r.Maxms = millis(latencies[len(latencies)-1])
	}
	if after := b.server.snapshot(); after.ok && before.ok {
		r.ServerCPU = round(100*(after.cpu-before.cpu).Seconds()/elapsed.Seconds(), 0)
		r.ServerRSSMiB = round(float64(after.rssBytes)/(1<<20), 1)
	}
	return r
}

func (r *Result) addErrors(kind string, n int) {
	r.Errors += n
	if r.ErrorKinds == nil {
		r.ErrorKinds = map[string]int{}
	}
	r.ErrorKinds[kind] += n
}

// percentile of sorted latencies, by the nearest-rank method.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(rank, len(sorted)-1))]
}

func millis(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 3) }

func round(x float64, digits int) float64 {
	scale := 1.0
	for range digits {
		scale *= 10
	}
	return float64(int64(x*scale+0.5)) / scale
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}
