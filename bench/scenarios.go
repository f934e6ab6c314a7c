package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/lmosdir/lmosdir/internal/tdgen"
)

// scenarios are the workloads by name. Each addresses the N preloaded Things, picked by a
// hash of the worker and request number, so runs with the same seed are repeatable.
var scenarios = map[string]scenario{
	"put": {name: "put", next: func(b *bench, worker, i int) request {
		// Half replace a preloaded Thing with the bytes it has (a re-registration), half
		// create a new one beyond N.
		j := b.pick(worker, i)
		if i%2 == 1 {
			j = b.cfg.N + i
		}
		return request{method: http.MethodPut, path: b.thingPath(j), contentType: "application/td+json", body: b.gen.TD(j), expect: []int{http.StatusCreated, http.StatusNoContent}}
	}},
	"get": {name: "get", next: func(b *bench, worker, i int) request {
		return request{method: http.MethodGet, path: b.thingPath(b.pick(worker, i)), expect: []int{http.StatusOK}}
	}},
	"list-page": {name: "list-page", next: func(b *bench, worker, i int) request {
		offset := b.pick(worker, i) / listPage * listPage
		return request{method: http.MethodGet, path: fmt.Sprintf("/things?offset=%d&limit=%d", offset, listPage), expect: []int{http.StatusOK}}
	}},
	"list-stream": {name: "list-stream", next: func(*bench, int, int) request {
		return request{method: http.MethodGet, path: "/things", expect: []int{http.StatusOK}}
	}},
	"list": {name: "list", subsets: []string{"list-page", "list-stream"}},
	"search": {name: "search", next: func(b *bench, worker, i int) request {
		// What a catalog user types: a word of a title, narrowed to a kind and a vendor.
		p := b.probe(worker, i)
		v := url.Values{"q": {firstWord(p.Title)}, "kind": {p.Kind}, "vendor": {p.Vendor}}
		return request{method: http.MethodGet, path: "/search?" + v.Encode(), expect: []int{http.StatusOK}}
	}},
	"search-text": {name: "search-text", next: func(b *bench, worker, i int) request {
		p := b.probe(worker, i)
		return request{method: http.MethodGet, path: "/search?" + url.Values{"q": {p.Title}}.Encode(), expect: []int{http.StatusOK}}
	}},
	"jsonpath-title": {name: "jsonpath-title", next: func(b *bench, worker, i int) request {
		p := b.probe(worker, i)
		query := "$[?@.title==" + jsonPathString(p.Title) + "]"
		return request{method: http.MethodGet, path: "/search/jsonpath?" + url.Values{"query": {query}}.Encode(), expect: []int{http.StatusOK}}
	}},
	"jsonpath-type-vendor": {name: "jsonpath-type-vendor", next: func(b *bench, worker, i int) request {
		p := b.probe(worker, i)
		query := "$[?@['@type']=='lmos:" + strings.ToUpper(p.Kind[:1]) + p.Kind[1:] + "' && @['lmos:metadata']['lmos:vendor']['lmos:name']==" + jsonPathString(p.Vendor) + "].id"
		return request{method: http.MethodGet, path: "/search/jsonpath?" + url.Values{"query": {query}}.Encode(), expect: []int{http.StatusOK}}
	}},
	// Not a concurrent load but paced writes and event subscribers; see runEvents.
	"events": {name: "events", run: runEvents},
	// An echo agent of its own, reached directly and through the LMOS gateway; see runGateway.
	"gateway": {name: "gateway", run: runGateway},
	"patch-heartbeat": {name: "patch-heartbeat", next: func(b *bench, worker, i int) request {
		return request{method: http.MethodPatch, path: b.thingPath(b.pick(worker, i)), contentType: "application/merge-patch+json", body: []byte("{}"), expect: []int{http.StatusNoContent}}
	}},
}

// probeCount is how many preloaded Things the search scenarios look for.
const probeCount = 1000

// probe describes one of probeCount preloaded Things, spread over all N.
func (b *bench) probe(worker, i int) tdgen.Info {
	probes := b.probes()
	return probes[b.pick(worker, i)%len(probes)]
}

func (b *bench) describeProbes() []tdgen.Info {
	n := min(b.cfg.N, probeCount)
	probes := make([]tdgen.Info, n)
	for k := range probes {
		probes[k] = b.gen.Info(k * b.cfg.N / n)
	}
	return probes
}

func firstWord(s string) string {
	word, _, _ := strings.Cut(s, " ")
	return word
}

// jsonPathString quotes s as a JSONPath string literal; generated titles and vendors
// contain no quotes or backslashes, but nothing else should reach a query unquoted.
func jsonPathString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// listPage is the page size of the list-page scenario.
const listPage = 100

// Standard is the suite `make bench` runs.
var Standard = []string{"put", "get", "list", "patch-heartbeat", "search", "search-text", "jsonpath-title", "jsonpath-type-vendor"}

// ScenarioNames lists the scenarios, for help texts.
func ScenarioNames() string {
	names := make([]string, 0, len(scenarios))
	for name := range scenarios {
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func (b *bench) thingPath(i int) string {
	return "/things/" + url.PathEscape(b.gen.ID(i))
}

// pick maps (worker, i) to one of the N preloaded Things with a fixed hash (splitmix64).
func (b *bench) pick(worker, i int) int {
	x := uint64(worker)<<32 ^ uint64(i) + 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return int(x % uint64(b.cfg.N))
}

// preloadTimeout bounds the preload, which must finish however large N is.
const preloadTimeout = 30 * time.Minute

// preloadScenario registers Thing i as the i-th request.
var preloadScenario = scenario{name: "preload", next: func(b *bench, _, i int) request {
	return request{method: http.MethodPut, path: b.thingPath(i), contentType: "application/td+json", body: b.gen.TD(i), expect: []int{http.StatusCreated, http.StatusNoContent}}
}}

// preload registers Things 0..N-1 with PUT from all workers and reports it as the
// "preload" scenario: the directory's throughput for new registrations.
func (b *bench) preload(ctx context.Context) (Result, error) {
	r := b.drive(ctx, preloadScenario, preloadTimeout, b.cfg.N)
	if r.Requests < b.cfg.N {
		return r, fmt.Errorf("preloading %d Things: only %d were sent within %v", b.cfg.N, r.Requests, preloadTimeout)
	}
	return r, nil
}

func bytesReader(body []byte) io.Reader {
	if body == nil {
		return http.NoBody
	}
	return bytes.NewReader(body)
}
