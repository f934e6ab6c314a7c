package tdgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lmosdir/lmosdir/td"
)

func TestIDs(t *testing.T) {
	g := New(42)
	for _, c := range []struct {
		i    int
		want string
	}{
		{0, "urn:lmosdir:gen:42:0000000"},
		{7, "urn:lmosdir:gen:42:0000007"},
		{1234, "urn:lmosdir:gen:42:0001234"},
		{9999999, "urn:lmosdir:gen:42:9999999"},
		{12345678, "urn:lmosdir:gen:42:12345678"},
	} {
		if got := g.ID(c.i); got != c.want {
			t.Errorf("ID(%d) = %q, want %q", c.i, got, c.want)
		}
	}
	if got := New(-3).ID(5); got != "urn:lmosdir:gen:-3:0000005" {
		t.Errorf("ID of a negative seed = %q", got)
	}

	const n = 20000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = g.ID(i)
	}
	if !slices.IsSorted(ids) {
		t.Error("ids are not sorted in index order")
	}
	if len(slices.Compact(slices.Clone(ids))) != n {
		t.Error("ids are not unique")
	}
	for _, i := range []int{0, 1, 99, 4321} {
		var doc struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(g.TD(i), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.ID != g.ID(i) {
			t.Errorf("TD(%d) has id %q, ID(%d) is %q", i, doc.ID, i, g.ID(i))
		}
	}
}

func TestNegativeIndexPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("TD(-1) did not panic")
		}
	}()
	New(1).TD(-1)
}

func TestDeterministic(t *testing.T) {
	const n = 2000
	want := make([][]byte, n)
	a := New(7)
	for i := range want {
		want[i] = a.TD(i)
	}

	// Another generator, visiting the indexes backwards and twice, so every TD follows
	// other TDs than it did above and the pooled buffers hold leftovers of bigger ones.
	b := New(7)
	for i := n - 1; i >= 0; i-- {
		b.TD((i * 7919) % n)
		if got := b.TD(i); !bytes.Equal(got, want[i]) {
			t.Fatalf("TD(%d) differs between generators or call orders", i)
		}
	}

	// One generator shared by goroutines working on interleaved indexes.
	c := New(7)
	workers := max(4, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				if got := c.TD(i); !bytes.Equal(got, want[i]) {
					errs <- fmt.Sprintf("TD(%d) differs when generated concurrently", i)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestSeedsDiffer(t *testing.T) {
	a, b := New(1), New(2)
	const n = 200
	same := 0
	for i := range n {
		x, y := a.Info(i), b.Info(i)
		if x.ID == y.ID {
			t.Fatalf("seeds 1 and 2 share id %q", x.ID)
		}
		if x.Title == y.Title && x.Vendor == y.Vendor && slices.Equal(x.Actions, y.Actions) {
			same++
		}
	}
	// Two random picks out of 40 brands × 12 domains × 2 kinds × 25 vendors collide rarely.
	if same > n/50 {
		t.Errorf("%d of %d TDs have the same title, vendor and actions under seeds 1 and 2", same, n)
	}
}

func TestValid(t *testing.T) {
	const n = 3000
	v, err := td.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	g := New(20250101)
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	failures := make(chan string, n)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				if _, err := v.Validate(g.TD(i)); err != nil {
					failures <- fmt.Sprintf("TD(%d): %v", i, err)
				}
			}
		})
	}
	wg.Wait()
	close(failures)
	count := 0
	for f := range failures {
		if count++; count <= 5 {
			t.Error(f)
		}
	}
	if count > 5 {
		t.Errorf("and %d more invalid TDs", count-5)
	}
}

func TestSizeAndKindMix(t *testing.T) {
	const n = 10000
	g := New(99)
	var classes [4]int
	agents := 0
	smallest, largest := 1<<30, 0
	for i := range n {
		size := len(g.TD(i))
		smallest, largest = min(smallest, size), max(largest, size)
		switch {
		case size >= 1000 && size <= 2048:
			classes[0]++
		case size >= 3072 && size <= 5120:
			classes[1]++
		case size >= 6144 && size <= 10240:
			classes[2]++
		case size >= 12288 && size <= 16384:
			classes[3]++
		default:
			t.Errorf("TD(%d) has %d bytes, outside every size class", i, size)
		}
		if g.Info(i).Kind == "agent" {
			agents++
		}
	}
	for k, want := range [4]float64{0.40, 0.30, 0.20, 0.10} {
		if got := float64(classes[k]) / n; got < want-0.02 || got > want+0.02 {
			t.Errorf("size class %d holds %.3f of the TDs, want %.2f ± 0.02", k, got, want)
		}
	}
	if smallest < 1000 || largest > 16384 {
		t.Errorf("sizes range from %d to %d bytes, want 1000 to 16384", smallest, largest)
	}
	if got := float64(agents) / n; got < 0.57 || got > 0.63 {
		t.Errorf("%.3f of the TDs are agents, want 0.60 ± 0.03", got)
	}
	t.Logf("sizes %d..%d bytes, classes %v, agents %d of %d", smallest, largest, classes, agents, n)
}

// parsed is what TestInfoMatchesTD reads back from a TD.
type parsed struct {
	ID       string          `json:"id"`
	Type     json.RawMessage `json:"@type"`
	Title    string          `json:"title"`
	Titles   json.RawMessage `json:"titles"`
	Descs    json.RawMessage `json:"descriptions"`
	Metadata struct {
		Vendor struct {
			Name string `json:"lmos:name"`
			URL  string `json:"lmos:url"`
		} `json:"lmos:vendor"`
		Capabilities []struct {
			ID       string   `json:"id"`
			Name     string   `json:"name"`
			Version  string   `json:"version"`
			Examples []string `json:"examples"`
		} `json:"lmos:capabilities"`
	} `json:"lmos:metadata"`
	Properties json.RawMessage `json:"properties"`
	Actions    json.RawMessage `json:"actions"`
	Events     json.RawMessage `json:"events"`
}

// keys returns the member names of a JSON object in document order (nil for no object).
func keys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	if raw == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

func TestInfoMatchesTD(t *testing.T) {
	g := New(5)
	for i := range 1000 {
		doc := g.TD(i)
		info := g.Info(i)
		var p parsed
		if err := json.Unmarshal(doc, &p); err != nil {
			t.Fatalf("TD(%d): %v", i, err)
		}
		var types []string
		if err := json.Unmarshal(p.Type, &types); err != nil {
			var one string
			if err := json.Unmarshal(p.Type, &one); err != nil {
				t.Fatalf("TD(%d) @type: %v", i, err)
			}
			types = []string{one}
		}
		kind := map[string]string{"lmos:Agent": "agent", "lmos:Tool": "tool"}[types[0]]
		var capIDs []string
		for _, c := range p.Metadata.Capabilities {
			capIDs = append(capIDs, c.ID)
			if c.Name == "" || c.Version == "" || len(c.Examples) == 0 {
				t.Errorf("TD(%d) capability %q lacks name, version or examples", i, c.ID)
			}
		}
		languages := keys(t, p.Titles)
		if languages == nil {
			languages = []string{"en"}
		}
		for _, c := range []struct {
			what      string
			got, want any
		}{
			{"id", info.ID, p.ID},
			{"kind", info.Kind, kind},
			{"types", info.Types, types},
			{"title", info.Title, p.Title},
			{"vendor", info.Vendor, p.Metadata.Vendor.Name},
			{"capabilities", info.Capabilities, capIDs},
			{"languages", info.Languages, languages},
			{"actions", info.Actions, keys(t, p.Actions)},
			{"properties", info.Properties, keys(t, p.Properties)},
			{"events", info.Events, keys(t, p.Events)},
			{"size", info.Size, len(doc)},
		} {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("TD(%d): Info %s is %v, the TD has %v", i, c.what, c.got, c.want)
			}
		}
		if p.Descs != nil && !slices.Equal(keys(t, p.Descs), languages) {
			t.Errorf("TD(%d): descriptions in %v, titles in %v", i, keys(t, p.Descs), languages)
		}
		if len(info.Actions) == 0 {
			t.Errorf("TD(%d) has no action", i)
		}
		if !strings.HasPrefix(p.Metadata.Vendor.URL, "https://") {
			t.Errorf("TD(%d) vendor URL %q", i, p.Metadata.Vendor.URL)
		}
	}
}

// TestVariety checks that a corpus exercises what the directory indexes and the gateway
// reads: both kinds, every security scheme, every transport, translations, capabilities.
func TestVariety(t *testing.T) {
	const n = 3000
	g := New(3)
	features := map[string]string{
		"two @types":          `"@type":["lmos:`,
		"schema prefix":       `"schema":"https://schema.org/"`,
		"lmosprotocol":        `"subprotocol":"lmosprotocol"`,
		"wss":                 `"href":"wss://`,
		"mqtt":                `"href":"mqtt://`,
		"coap":                `"href":"coap://`,
		"relative href":       `"href":"actions/`,
		"absolute https href": `"href":"https://agents.`,
		"sse":                 `"subprotocol":"sse"`,
		"nosec":               `"scheme":"nosec"`,
		"basic":               `"scheme":"basic"`,
		"bearer":              `"scheme":"bearer"`,
		"apikey":              `"scheme":"apikey"`,
		"oauth2 client":       `"flow":"client"`,
		"oauth2 code":         `"flow":"code"`,
		"security array":      `"security":["`,
		"form security":       `"security":"nosec_sc"}`,
		"service-doc":         `"rel":"service-doc"`,
		"version":             `"version":{"instance":`,
		"created":             `"created":"20`,
		"capabilities":        `"lmos:capabilities":[`,
		"titles":              `"titles":{"en":`,
		"japanese":            `"ja":"`,
		"safe action":         `"safe":true`,
		"synchronous":         `"synchronous":true`,
		"observable":          `"observable":true`,
		"writable property":   `"op":"writeproperty"`,
		"nested required":     `"required":["description","quantity","unitPrice"]`,
		"array items":         `"items":{"type":`,
		"enum":                `"enum":["`,
		"minimum":             `"minimum":`,
		"field description":   `"description":"Point in time (RFC 3339)."`,
		"affordance title":    `"title":"Get `,
	}
	seen := map[string]int{}
	for i := range n {
		doc := g.TD(i)
		for name, s := range features {
			if bytes.Contains(doc, []byte(s)) {
				seen[name]++
			}
		}
	}
	for name := range features {
		if seen[name] == 0 {
			t.Errorf("no TD among %d has %s", n, name)
		}
	}
	for _, name := range []string{"relative href", "absolute https href", "sse", "capabilities", "titles"} {
		if seen[name] < n/5 {
			t.Errorf("only %d of %d TDs have %s", seen[name], n, name)
		}
	}
}

// TestVocabulary checks the assumptions the writer makes about the tables.
func TestVocabulary(t *testing.T) {
	// Strings are appended unescaped.
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			if strings.ContainsAny(v.String(), "\"\\") || strings.ContainsFunc(v.String(), func(r rune) bool { return r < 0x20 }) {
				t.Errorf("%s = %q needs escaping", path, v.String())
			}
		case reflect.Pointer:
			if !v.IsNil() {
				walk(path, v.Elem())
			}
		case reflect.Slice, reflect.Array:
			for k := range v.Len() {
				walk(fmt.Sprintf("%s[%d]", path, k), v.Index(k))
			}
		case reflect.Struct:
			for k := range v.NumField() {
				// A default is a JSON literal, written as it is; the TDs that carry it parse.
				if name := v.Type().Field(k).Name; name != "def" {
					walk(path+"."+name, v.Field(k))
				}
			}
		}
	}
	for name, table := range map[string]any{
		"languages": languages, "kindWords": kindWords, "vendors": vendors, "brands": brands,
		"otherTypes": otherTypes, "agentAffordances": agentAffordances,
		"commonAffordances": commonAffordances, "domains": domains,
	} {
		walk(name, reflect.ValueOf(table))
	}

	// A TD takes affordances from every table, so names must be unique across all of them;
	// they also become URL path segments and titles.
	seen := map[string]bool{}
	check := func(affs []affordance) {
		for _, a := range affs {
			if seen[a.name] {
				t.Errorf("affordance name %q is used twice", a.name)
			}
			seen[a.name] = true
			if strings.ContainsFunc(a.name, func(r rune) bool { return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') }) {
				t.Errorf("affordance name %q is not a plain camelCase word", a.name)
			}
			if a.desc == "" || a.data == nil || (a.sec == actionSec) != (a.output != nil) {
				t.Errorf("affordance %q is incomplete", a.name)
			}
		}
	}
	check(agentAffordances)
	check(commonAffordances)
	domainKeys := map[string]bool{}
	for _, d := range domains {
		check(d.aff)
		if domainKeys[d.key] {
			t.Errorf("domain %q is listed twice", d.key)
		}
		domainKeys[d.key] = true
		if d.aff[0].sec != actionSec {
			t.Errorf("domain %q does not start with an action", d.key)
		}
		if len(d.caps) == 0 {
			t.Errorf("domain %q has no capabilities", d.key)
		}
	}
	for _, b := range brands {
		if b == "" || b[0] < 'A' || b[0] > 'Z' || strings.ToLower(b[1:]) != b[1:] {
			t.Errorf("brand %q is not a capitalized ASCII word", b)
		}
	}
}

func BenchmarkTD(b *testing.B) {
	g := New(1)
	// Indexes of each size class, by the position of the class in sizeClassOf.
	for _, c := range []struct {
		name  string
		first int
	}{{"1-2KB", 0}, {"3-5KB", 1}, {"6-10KB", 3}, {"12-16KB", 6}} {
		b.Run(c.name, func(b *testing.B) {
			bytes, i := 0, c.first
			for b.Loop() {
				bytes += len(g.TD(i))
				i += 10
			}
			b.ReportMetric(float64(bytes)/float64(b.N), "B/TD")
		})
	}
	b.Run("mix", func(b *testing.B) {
		i := 0
		for b.Loop() {
			g.TD(i)
			i++
		}
	})
	b.Run("mix-parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				g.TD(i)
				i++
			}
		})
	})
}
