package jsonld

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/piprate/json-gold/ld"
)

const (
	tdContext   = "https://www.w3.org/2022/wot/td/v1.1"
	tdNS        = "https://www.w3.org/2019/wot/td#"
	lmosNS      = "https://eclipse.dev/lmos/protocol/v1"
	weatherPath = "../td/testdata/corpus/lmos/weather-agent.json"
	agent4kPath = "../td/testdata/agent-4k.json"
	corpusValid = "../td/testdata/corpus/valid"
)

func newExpander(t *testing.T) *Expander {
	t.Helper()
	return NewExpander(newLoader(t, LoaderOptions{}))
}

// expandNode expands doc and returns its single top-level node.
func expandNode(t *testing.T, e *Expander, doc []byte) map[string]any {
	t.Helper()
	out, err := e.Expand(doc)
	if err != nil {
		t.Fatal(err)
	}
	return singleNode(t, out)
}

func singleNode(t *testing.T, out []byte) map[string]any {
	t.Helper()
	var nodes []map[string]any
	if err := json.Unmarshal(out, &nodes); err != nil {
		t.Fatalf("output is not an array of nodes: %v", err)
	}
	if len(nodes) != 1 {
		t.Fatalf("%d top-level nodes, want 1", len(nodes))
	}
	return nodes[0]
}

// values returns the @value or @id members of an expanded property.
func values(node map[string]any, iri string) []any {
	var out []any
	items, _ := node[iri].([]any)
	for _, item := range items {
		m, _ := item.(map[string]any)
		if v, ok := m["@value"]; ok {
			out = append(out, v)
		} else if id, ok := m["@id"]; ok {
			out = append(out, id)
		}
	}
	return out
}

func TestExpandWeatherAgent(t *testing.T) {
	node := expandNode(t, newExpander(t), readFile(t, weatherPath))
	// Under JSON-LD 1.1 "lmos" is no prefix (its IRI does not end in / or #),
	// so "lmos:Agent" is an absolute IRI with the scheme "lmos:".
	if got := node["@type"]; !reflect.DeepEqual(got, []any{"lmos:Agent"}) {
		t.Errorf("@type = %v, want [lmos:Agent]", got)
	}
	if node["@id"] != "urn:uuid:6f1d3a7a-1f97-4e6b-b45f-f3c2e1c84c77" {
		t.Errorf("@id = %v", node["@id"])
	}
	if got := values(node, tdNS+"title"); !reflect.DeepEqual(got, []any{"WeatherAgent"}) {
		t.Errorf("title = %v", got)
	}
	metadata, _ := node["lmos:metadata"].([]any)
	if len(metadata) != 1 {
		t.Fatalf("lmos:metadata = %v", node["lmos:metadata"])
	}
	vendor, _ := metadata[0].(map[string]any)["lmos:vendor"].([]any)
	if len(vendor) != 1 || !reflect.DeepEqual(values(vendor[0].(map[string]any), "lmos:name"), []any{"Deutsche Telekom AG"}) {
		t.Errorf("lmos:vendor = %v", vendor)
	}
	actions, _ := node[tdNS+"hasActionAffordance"].([]any)
	if len(actions) != 1 {
		t.Fatalf("actions = %v", node[tdNS+"hasActionAffordance"])
	}
	forms, _ := actions[0].(map[string]any)[tdNS+"hasForm"].([]any)
	if len(forms) != 1 || !reflect.DeepEqual(values(forms[0].(map[string]any), "http://www.w3.org/2011/http#methodName"), []any{"POST"}) {
		t.Errorf("action forms = %v", forms)
	}
}

func TestExpandLMOSExamplesAndAgent4k(t *testing.T) {
	e := newExpander(t)
	for path, wantTypes := range map[string][]any{
		"../td/testdata/corpus/lmos/agent-description-minimal.json": nil,
		"../td/testdata/corpus/lmos/tool-description-minimal.json":  nil,
		agent4kPath: {"lmos:Agent", tdNS + "Thing"},
	} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			node := expandNode(t, e, readFile(t, path))
			if len(values(node, tdNS+"title")) == 0 {
				t.Error("no td:title")
			}
			if wantTypes != nil && !reflect.DeepEqual(node["@type"], wantTypes) {
				t.Errorf("@type = %v, want %v", node["@type"], wantTypes)
			}
		})
	}
}

// contextURLs returns the URLs a document's top-level @context names.
func contextURLs(doc map[string]any) []string {
	var urls []string
	switch c := doc["@context"].(type) {
	case string:
		urls = append(urls, c)
	case []any:
		for _, item := range c {
			if s, ok := item.(string); ok {
				urls = append(urls, s)
			}
		}
	}
	return urls
}

// referenceExpand is json-gold's JsonLdProcessor.Expand, which Expander
// avoids for top-level strings but must otherwise agree with.
func referenceExpand(t *testing.T, l *Loader, doc []byte) []byte {
	t.Helper()
	var input any
	if err := json.Unmarshal(doc, &input); err != nil {
		t.Fatal(err)
	}
	opts := ld.NewJsonLdOptions("")
	opts.ProcessingMode = ld.JsonLd_1_1
	opts.DocumentLoader = l
	out, err := ld.NewJsonLdProcessor().Expand(input, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sameJSON(a, b []byte) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && reflect.DeepEqual(va, vb)
}

// corpusFiles lists the valid TDs of the test corpus.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(corpusValid, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".json") || strings.HasSuffix(path, ".jsonld")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestExpandCorpus(t *testing.T) {
	l := newLoader(t, LoaderOptions{})
	e := NewExpander(l)
	var expanded int
	var notBundled []string
	for _, path := range corpusFiles(t) {
		doc := readFile(t, path)
		var m map[string]any
		if err := json.Unmarshal(doc, &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if slices.ContainsFunc(contextURLs(m), func(u string) bool { _, ok := bundled[u]; return !ok }) {
			notBundled = append(notBundled, path)
			continue
		}
		t.Run(strings.TrimPrefix(path, corpusValid+"/"), func(t *testing.T) {
			out, err := e.Expand(doc)
			if err != nil {
				t.Fatal(err)
			}
			if len(values(singleNode(t, out), tdNS+"title")) == 0 {
				t.Error("no td:title: the TD context was not applied")
			}
			if want := referenceExpand(t, l, doc); !sameJSON(out, want) {
				t.Errorf("differs from json-gold's own expansion\n got %s\nwant %s", out, want)
			}
		})
		expanded++
	}
	// Every valid corpus TD names bundled contexts only; a new one that does
	// not must be looked at, not skipped.
	if len(notBundled) != 0 {
		t.Errorf("TDs with contexts that are not bundled: %v", notBundled)
	}
	if expanded != 132 {
		t.Errorf("expanded %d corpus TDs, want 132", expanded)
	}
}

func TestExpandMatchesJSONGoldOnContextFeatures(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"index.json":      `{"https://example.org/base": "base.jsonld", "https://example.org/importer": "importer.jsonld"}`,
		"base.jsonld":     `{"@context": {"ex": "https://example.org/ns#"}}`,
		"importer.jsonld": `{"@context": {"@version": 1.1, "@import": "https://example.org/base", "color": "ex:color"}}`,
	})
	l := newLoader(t, LoaderOptions{Dir: dir})
	e := NewExpander(l)
	for name, doc := range map[string]string{
		"no propagation":    `{"@context": {"@propagate": false, "ex": "https://example.org/"}, "ex:a": "x", "ex:b": {"ex:c": "y"}}`,
		"type-scoped":       `{"@context": {"@version": 1.1, "ex": "https://example.org/", "Lamp": {"@id": "ex:Lamp", "@context": {"on": "ex:on"}}}, "@type": "Lamp", "on": true}`,
		"property-scoped":   `{"@context": ["` + tdContext + `", {"ex": "https://example.org/"}], "title": "t", "properties": {"p": {"type": "string", "forms": [{"href": "/p"}]}}}`,
		"nested context":    `{"@context": "` + tdContext + `", "title": "t", "links": [{"@context": {"href": "https://example.org/other"}, "href": "x"}]}`,
		"import":            `{"@context": ["` + tdContext + `", "https://example.org/importer"], "title": "t", "color": "red"}`,
		"import, again":     `{"@context": ["https://example.org/importer"], "color": "blue", "ex:size": 3}`,
		"null context":      `{"@context": null, "https://example.org/p": 1}`,
		"graph":             `{"@context": {"ex": "https://example.org/"}, "@graph": [{"@id": "ex:a", "ex:p": 1}, {"@id": "ex:b"}]}`,
		"array of TDs":      `[{"@context": "` + tdContext + `", "title": "a"}, {"@context": "` + tdContext + `", "title": "b"}]`,
		"base in context":   `{"@context": {"@base": "https://example.org/things/", "ex": "https://example.org/"}, "@id": "lamp", "ex:p": {"@id": "switch"}}`,
		"language in array": `{"@context": ["` + tdContext + `", {"@language": "de"}], "title": "Lampe"}`,
	} {
		t.Run(name, func(t *testing.T) {
			for range 2 { // processing @import must leave the loaded context as it was
				got, err := e.Expand([]byte(doc))
				if err != nil {
					t.Fatal(err)
				}
				if want := referenceExpand(t, l, []byte(doc)); !sameJSON(got, want) {
					t.Errorf("\n got %s\nwant %s", got, want)
				}
			}
		})
	}
}

func TestExpandUnavailableContext(t *testing.T) {
	e := newExpander(t)
	const missing = "https://example.org/contexts/missing"
	for name, doc := range map[string]string{
		"top level":  `{"@context": ["` + tdContext + `", "` + missing + `"], "title": "x"}`,
		"alone":      `{"@context": "` + missing + `", "title": "x"}`,
		"nested":     `{"@context": "` + tdContext + `", "title": "x", "links": [{"@context": "` + missing + `", "href": "https://example.org/"}]}`,
		"in an item": `[{"@context": "` + missing + `"}]`,
	} {
		t.Run(name, func(t *testing.T) {
			out, err := e.Expand([]byte(doc))
			if out != nil {
				t.Errorf("output %s with an error", out)
			}
			cerr, ok := errors.AsType[*ContextError](err)
			if !ok {
				t.Fatalf("error %v is not a *ContextError", err)
			}
			if cerr.URL != missing || !strings.HasPrefix(cerr.Reason, "is not available offline") {
				t.Errorf("ContextError %+v", cerr)
			}
			if err.Error() != cerr.Error() {
				t.Errorf("error %q wraps the *ContextError", err)
			}
		})
	}
}

func TestExpandWithAllowListedContext(t *testing.T) {
	srv, requests := contextServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down" {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		serveJSON("application/ld+json", exampleContext)(w, r)
	})
	e := NewExpander(newLoader(t, LoaderOptions{AllowRemote: []string{srv.URL + "/ctx", srv.URL + "/down"}}, srv))
	doc := []byte(`{"@context": ["` + tdContext + `", "` + srv.URL + `/ctx"], "title": "Lamp", "color": "red"}`)
	for range 3 {
		node := expandNode(t, e, doc)
		if got := values(node, "https://example.org/ns#color"); !reflect.DeepEqual(got, []any{"red"}) {
			t.Errorf("color = %v in %v", got, node)
		}
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests for one context", n)
	}

	_, err := e.Expand([]byte(`{"@context": ["` + tdContext + `", "` + srv.URL + `/down"], "title": "Lamp"}`))
	wantReason(t, err, srv.URL+"/down", "could not be fetched: HTTP 500 Internal Server Error")
}

func TestExpandRegistrationNeedsTheTDContextFirst(t *testing.T) {
	// The discovery context uses xsd: without defining it. json-gold does not
	// fail on it: under JSON-LD 1.1 "xsd:dateTime" is an absolute IRI of its
	// own, so the datatype is only right after the TD context.
	e := newExpander(t)
	const created = "https://www.w3.org/2022/wot/discovery-ontology#dateCreated"
	for ctx, wantType := range map[string]string{
		`["` + tdContext + `", "https://www.w3.org/2022/wot/discovery"]`: "http://www.w3.org/2001/XMLSchema#dateTime",
		`"https://www.w3.org/2022/wot/discovery"`:                        "xsd:dateTime",
	} {
		node := expandNode(t, e, []byte(`{"@context": `+ctx+`, "@id": "urn:x", "registration": {"created": "2025-01-01T00:00:00Z"}}`))
		reg, _ := node["https://www.w3.org/2022/wot/discovery-ontology#hasRegistrationInformation"].([]any)
		if len(reg) != 1 {
			t.Fatalf("%s: registration = %v", ctx, node)
		}
		value, _ := reg[0].(map[string]any)[created].([]any)
		if len(value) != 1 || value[0].(map[string]any)["@type"] != wantType {
			t.Errorf("%s: created = %v, want @type %s", ctx, value, wantType)
		}
	}
}

// jsonGoldPanics are inputs on which json-gold v0.9.1 panics (found by
// fuzzing); Expand must turn them into errors.
var jsonGoldPanics = []string{
	`{"": [0]}`, // a member named "" is read as @type
	`{"@context": ["` + tdContext + `"], "0": {"0": {"": false}}}`,
	`{"@context": {"@protected": 5, "a": "https://example.org/a"}}`,
	`{"@context": {"lmos": null}, "@type": "lmos:Agent"}`, // a term defined as null used as a prefix
}

func TestExpandErrors(t *testing.T) {
	e := newExpander(t)
	for _, doc := range append([]string{
		`{"@context": `,
		`{"@id": 5}`,
		`{"@context": {"@vocab": 5}, "a": 1}`,
		`{"@context": "` + tdContext + `", "@type": 5}`,
	}, jsonGoldPanics...) {
		out, err := e.Expand([]byte(doc))
		if err == nil || out != nil {
			t.Errorf("%s: got %s, %v", doc, out, err)
			continue
		}
		if _, ok := errors.AsType[*ContextError](err); ok {
			t.Errorf("%s: %v is a *ContextError, but every context was available", doc, err)
		}
	}
}

func TestExpandTopLevelShapes(t *testing.T) {
	e := newExpander(t)
	for doc, want := range map[string]string{
		`{}`:                  `[]`,
		`null`:                `[]`,
		`[]`:                  `[]`,
		`"text"`:              `[]`,
		`"` + tdContext + `"`: `[]`, // not a URL to load
		`{"@context": {"ex": "https://example.org/"}, "@graph": [{"@id": "urn:a", "ex:p": "<&>"}]}`:       `[{"@id":"urn:a","https://example.org/p":[{"@value":"<&>"}]}]`,
		`[{"@id": "urn:a", "https://example.org/p": 1}, {"@id": "urn:b", "https://example.org/p": true}]`: `[{"@id":"urn:a","https://example.org/p":[{"@value":1}]},{"@id":"urn:b","https://example.org/p":[{"@value":true}]}]`,
	} {
		out, err := e.Expand([]byte(doc))
		if err != nil || string(out) != want {
			t.Errorf("%s: got %s, %v; want %s", doc, out, err, want)
		}
	}
}

func TestExpandIRI(t *testing.T) {
	e := newExpander(t)
	lmos := []any{tdContext, map[string]any{"lmos": lmosNS}}
	for _, tc := range []struct {
		name    string
		context any
		term    string
		want    string
	}{
		{"TD term", tdContext, "title", tdNS + "title"},
		{"TD 1.0 URL", "https://www.w3.org/2019/wot/td/v1", "title", tdNS + "title"},
		{"TD class", lmos, "Thing", tdNS + "Thing"},
		{"unknown term falls to @vocab", lmos, "weather", tdNS + "weather"},
		{"TD prefix", lmos, "htv:methodName", "http://www.w3.org/2011/http#methodName"},
		{"discovery after TD", []any{tdContext, "https://www.w3.org/2022/wot/discovery"}, "ThingDirectory", "https://www.w3.org/2022/wot/discovery-ontology#ThingDirectory"},
		{"legacy discovery URL", "https://w3c.github.io/wot-discovery/context/discovery-context.jsonld", "ThingDirectory", "https://www.w3.org/2022/wot/discovery-ontology#ThingDirectory"},
		{"discovery DID", []any{tdContext, "https://www.w3.org/2022/wot/discovery-did"}, "WotDirectory", "https://www.w3.org/2022/wot/discovery-ontology#WotDirectoryDIDService"},
		// "lmos" is no JSON-LD 1.1 prefix: its IRI does not end in / or #.
		{"LMOS agent", lmos, "lmos:Agent", "lmos:Agent"},
		{"LMOS agent, no context", nil, "lmos:Agent", "lmos:Agent"},
		{"LMOS with @prefix", []any{tdContext, map[string]any{"lmos": map[string]any{"@id": lmosNS, "@prefix": true}}}, "lmos:Agent", lmosNS + "Agent"},
		{"LMOS namespace with slash", map[string]any{"lmos": lmosNS + "/"}, "lmos:Agent", lmosNS + "/Agent"},
		{"full IRI", lmos, lmosNS + "/Agent", lmosNS + "/Agent"},
		{"full IRI of TD", lmos, tdNS + "Thing", tdNS + "Thing"},
		{"keyword", lmos, "@type", "@type"},
		{"term without @vocab", nil, "title", "title"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.ExpandIRI(tc.context, tc.term)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("ExpandIRI(%v, %q) = %q, want %q", tc.context, tc.term, got, tc.want)
			}
		})
	}
}

func TestExpandIRIErrors(t *testing.T) {
	e := newExpander(t)
	_, err := e.ExpandIRI([]any{tdContext, "https://example.org/missing"}, "title")
	if cerr, ok := errors.AsType[*ContextError](err); !ok || cerr.URL != "https://example.org/missing" {
		t.Errorf("unknown context: %v", err)
	}
	for _, ctx := range []any{
		map[string]any{"@vocab": 5.0},
		[]any{5.0},
		map[string]any{"@protected": 5.0, "a": "https://example.org/a"}, // panics inside json-gold
		map[string]any{"a": nil},       // panics inside json-gold when "a" is used as a prefix
		map[string]any{"f": func() {}}, // not JSON at all
	} {
		if _, err := e.ExpandIRI(ctx, "a:b"); err == nil {
			t.Errorf("%v: no error", ctx)
		} else if _, ok := errors.AsType[*ContextError](err); ok {
			t.Errorf("%v: %v is a *ContextError", ctx, err)
		}
	}
}

func TestExpandIRICachesByCanonicalJSON(t *testing.T) {
	e := newExpander(t)
	var a, b any
	if err := json.Unmarshal([]byte(`{"ex": "https://example.org/a#", "@version": 1.1}`), &a); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(`{"@version": 1.1, "ex": "https://example.org/a#"}`))
	dec.UseNumber() // json-gold compares @version with a float64
	if err := dec.Decode(&b); err != nil {
		t.Fatal(err)
	}
	for _, ctx := range []any{a, b} {
		if got, err := e.ExpandIRI(ctx, "ex:x"); err != nil || got != "https://example.org/a#x" {
			t.Errorf("ExpandIRI(%v) = %q, %v", ctx, got, err)
		}
	}
	if n := e.contexts.lru.Len(); n != 1 {
		t.Errorf("%d cached contexts for one context written twice", n)
	}
	// The cache holds its own copy: changing the caller's value changes the key.
	a.(map[string]any)["ex"] = "https://example.org/b#"
	if got, _ := e.ExpandIRI(a, "ex:x"); got != "https://example.org/b#x" {
		t.Errorf("after the change: %q", got)
	}
	if got, _ := e.ExpandIRI(b, "ex:x"); got != "https://example.org/a#x" {
		t.Errorf("the cached context changed with the caller's value: %q", got)
	}
}

func TestExpandIRIIsCheapOnceCached(t *testing.T) {
	e := newExpander(t)
	ctx := []any{tdContext, map[string]any{"lmos": lmosNS}}
	if _, err := e.ExpandIRI(ctx, "title"); err != nil {
		t.Fatal(err)
	}
	// Processing the TD context takes over a thousand allocations.
	if n := testing.AllocsPerRun(100, func() { _, _ = e.ExpandIRI(ctx, "title") }); n > 20 {
		t.Errorf("a cached ExpandIRI allocates %v times", n)
	}
}

func TestContextCacheIsBounded(t *testing.T) {
	e := newExpander(t)
	ctx := func(i int) any { return map[string]any{"ex": fmt.Sprintf("https://example.org/%d#", i)} }
	for i := range maxContexts + 10 {
		if _, err := e.ExpandIRI(ctx(i), "ex:x"); err != nil {
			t.Fatal(err)
		}
	}
	if n, m := e.contexts.lru.Len(), len(e.contexts.byKey); n != maxContexts || m != maxContexts {
		t.Errorf("cache holds %d (index %d), want %d", n, m, maxContexts)
	}
	key := func(i int) string { b, _ := json.Marshal(ctx(i)); return string(b) }
	if _, ok := e.contexts.get(key(0)); ok {
		t.Error("the oldest context survived")
	}
	if _, ok := e.contexts.get(key(maxContexts + 9)); !ok {
		t.Error("the newest context was evicted")
	}
}

func TestExpandConcurrently(t *testing.T) {
	docs := [][]byte{readFile(t, weatherPath), readFile(t, agent4kPath)}
	for _, path := range corpusFiles(t)[:6] {
		docs = append(docs, readFile(t, path))
	}
	docs = append(docs, []byte(`{"@context": ["`+tdContext+`", "https://www.w3.org/2022/wot/discovery"], "@type": "ThingDirectory", "title": "dir", "registration": {"ttl": 60}}`))
	sequential := newExpander(t)
	want := make([][]byte, len(docs))
	for i, doc := range docs {
		var err error
		if want[i], err = sequential.Expand(doc); err != nil {
			t.Fatal(err)
		}
	}
	// A fresh Expander, so that filling the context cache races too.
	e := newExpander(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 3 * len(docs) {
				n := (g + i) % len(docs)
				got, err := e.Expand(docs[n])
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(got, want[n]) {
					t.Errorf("goroutine %d, document %d: output differs", g, n)
				}
				if iri, err := e.ExpandIRI([]any{tdContext, map[string]any{"lmos": lmosNS}}, "title"); err != nil || iri != tdNS+"title" {
					t.Errorf("ExpandIRI = %q, %v", iri, err)
				}
			}
		})
	}
	wg.Wait()
}

func FuzzExpand(f *testing.F) {
	l, err := NewLoader(LoaderOptions{Client: &http.Client{Transport: refuseAll{}}})
	if err != nil {
		f.Fatal(err)
	}
	e := NewExpander(l)
	f.Add(readFile(f, weatherPath))
	for _, doc := range jsonGoldPanics {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, err := e.Expand(doc)
		if err != nil {
			if out != nil {
				t.Errorf("output with error %v", err)
			}
			return
		}
		var nodes []any
		if err := json.Unmarshal(out, &nodes); err != nil {
			t.Errorf("output %s is not a JSON array: %v", out, err)
		}
	})
}

// refuseAll is a transport for the fuzzer, which has no *testing.T to fail
// when the loader is built.
type refuseAll struct{}

func (refuseAll) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("test: request to %s refused", r.URL)
}

func BenchmarkExpand(b *testing.B) {
	l, err := NewLoader(LoaderOptions{Client: &http.Client{Transport: refuseAll{}}})
	if err != nil {
		b.Fatal(err)
	}
	e := NewExpander(l)
	doc := readFile(b, agent4kPath)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := e.Expand(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExpandIRI(b *testing.B) {
	l, err := NewLoader(LoaderOptions{Client: &http.Client{Transport: refuseAll{}}})
	if err != nil {
		b.Fatal(err)
	}
	e := NewExpander(l)
	var ctx any
	if err := json.Unmarshal(readFile(b, agent4kPath), &ctx); err != nil {
		b.Fatal(err)
	}
	ctx = ctx.(map[string]any)["@context"]
	for b.Loop() {
		if iri, err := e.ExpandIRI(ctx, "lmos:Agent"); err != nil || iri != "lmos:Agent" {
			b.Fatal(iri, err)
		}
	}
}

func TestExpandPartialLeavesOutUnavailableContexts(t *testing.T) {
	e := newExpander(t)
	const missing = "https://example.org/contexts/missing"
	const other = "https://example.org/contexts/other"
	for name, tc := range map[string]struct {
		doc     string
		reasons int
	}{
		"top level": {`{"@context": ["` + tdContext + `", "` + missing + `"], "title": "x", "ex:kept": "y"}`, 1},
		"alone":     {`{"@context": "` + missing + `", "https://www.w3.org/2019/wot/td#title": "x"}`, 1},
		"nested":    {`{"@context": "` + tdContext + `", "title": "x", "links": [{"@context": "` + missing + `", "href": "https://example.org/"}]}`, 1},
		"two":       {`{"@context": ["` + tdContext + `", "` + missing + `", {"x": "` + other + `"}, "` + other + `"], "title": "x"}`, 2},
	} {
		t.Run(name, func(t *testing.T) {
			out, incomplete, err := e.ExpandPartial([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(incomplete, "is not available offline"); got != tc.reasons || !strings.Contains(incomplete, missing) {
				t.Errorf("incomplete = %q, want %d reasons naming %s", incomplete, tc.reasons, missing)
			}
			node := singleNode(t, out)
			if got := values(node, tdNS+"title"); len(got) != 1 || got[0] != "x" {
				t.Errorf("title expanded to %v, want [x]: the loadable contexts still apply", got)
			}
		})
	}
}

func TestExpandPartialComplete(t *testing.T) {
	e := newExpander(t)
	doc := readFile(t, weatherPath)
	out, incomplete, err := e.ExpandPartial(doc)
	if err != nil || incomplete != "" {
		t.Fatalf("ExpandPartial: %q, %v", incomplete, err)
	}
	want, err := e.Expand(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want) {
		t.Error("ExpandPartial of a complete document differs from Expand")
	}
	if _, _, err := e.ExpandPartial([]byte(`{"@context": {"@protected": "yes"}}`)); err == nil {
		t.Error("a document that is not JSON-LD expanded without an error")
	}
}
