package jsonld

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const exampleContext = `{"@context": {"ex": "https://example.org/ns#", "color": "ex:color"}}`

func TestBundledFilesAreTheW3CCopies(t *testing.T) {
	// sha256 prefixes from ../shared/w3c/README.md, which lists the source commits.
	want := map[string]string{
		"td-context-1.1.jsonld":        "9298ddacce1d023e",
		"discovery-context.jsonld":     "80ca174cbfdd30c1",
		"discovery-did-context.jsonld": "b7e26eaf28d465a1",
	}
	entries, err := fs.ReadDir(bundledFiles, "contexts")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(want) {
		t.Errorf("embedded %d files, want %d", len(entries), len(want))
	}
	for name, prefix := range want {
		b, err := bundledFiles.ReadFile("contexts/" + name)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:])[:16]; got != prefix {
			t.Errorf("%s: sha256 %s…, want %s…", name, got, prefix)
		}
	}
}

func TestBundledURLsLoad(t *testing.T) {
	l := newLoader(t, LoaderOptions{})
	for _, tc := range []struct{ url, file, term string }{
		{"https://www.w3.org/2022/wot/td/v1.1", "td-context-1.1.jsonld", "securityDefinitions"},
		{"https://www.w3.org/2019/wot/td/v1", "td-context-1.1.jsonld", "securityDefinitions"},
		{"https://www.w3.org/2022/wot/discovery", "discovery-context.jsonld", "ThingDirectory"},
		{"https://w3c.github.io/wot-discovery/context/discovery-context.jsonld", "discovery-context.jsonld", "ThingDirectory"},
		{"https://www.w3.org/2022/wot/discovery-did", "discovery-did-context.jsonld", "WotDirectory"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			rd, err := l.LoadDocument(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			if rd.DocumentURL != tc.url {
				t.Errorf("DocumentURL = %q", rd.DocumentURL)
			}
			b, err := bundledFiles.ReadFile("contexts/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			want, err := decodeContext(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rd.Document, any(want)) {
				t.Errorf("document differs from contexts/%s", tc.file)
			}
			ctx, _ := rd.Document.(map[string]any)["@context"].(map[string]any)
			if _, ok := ctx[tc.term]; !ok {
				t.Errorf("@context has no %q", tc.term)
			}
		})
	}
}

func TestUnknownURLIsNotAvailableOffline(t *testing.T) {
	l := newLoader(t, LoaderOptions{})
	const bundledList = "https://w3c.github.io/wot-discovery/context/discovery-context.jsonld, " +
		"https://www.w3.org/2019/wot/td/v1, https://www.w3.org/2022/wot/discovery, " +
		"https://www.w3.org/2022/wot/discovery-did, https://www.w3.org/2022/wot/td/v1.1"
	for _, u := range []string{
		"https://example.org/context",
		"https://www.w3.org/2022/wot/td/v1.1/", // near misses are other URLs
		"https://www.w3.org/2022/wot/td/v1.1.jsonld",
		"http://www.w3.org/2022/wot/td/v1.1",
		"https://www.w3.org/2019/wot/td/v1.1",
		"https://eclipse.dev/lmos/protocol/v1",
		"",
	} {
		rd, err := l.LoadDocument(u)
		if rd != nil {
			t.Errorf("%q: got a document", u)
		}
		cerr, ok := errors.AsType[*ContextError](err)
		if !ok {
			t.Fatalf("%q: error %v is not a *ContextError", u, err)
		}
		if cerr.URL != u {
			t.Errorf("URL = %q, want %q", cerr.URL, u)
		}
		want := "context " + u + " is not available offline (bundled: " + bundledList +
			"; add it to the context folder or the allow-list)"
		if err.Error() != want {
			t.Errorf("error\n%s\nwant\n%s", err, want)
		}
	}
}

func TestLoadDocumentHandsOutPrivateCopies(t *testing.T) {
	// json-gold writes into a loaded document when it processes @import.
	l := newLoader(t, LoaderOptions{})
	const u = "https://www.w3.org/2022/wot/discovery"
	rd, err := l.LoadDocument(u)
	if err != nil {
		t.Fatal(err)
	}
	ctx := rd.Document.(map[string]any)["@context"].(map[string]any)
	ctx["ThingDirectory"] = "https://attacker.example/"
	delete(ctx, "discovery")
	again, err := l.LoadDocument(u)
	if err != nil {
		t.Fatal(err)
	}
	ctx = again.Document.(map[string]any)["@context"].(map[string]any)
	if _, ok := ctx["discovery"]; !ok {
		t.Error("a caller's change to a loaded document reached the next caller")
	}
	if _, ok := ctx["ThingDirectory"].(map[string]any); !ok {
		t.Errorf("ThingDirectory = %v", ctx["ThingDirectory"])
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestOperatorFolder(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"index.json":    `{"https://example.org/contexts/color": "color.jsonld", "urn:example:lab": "lab.jsonld"}`,
		"color.jsonld":  exampleContext,
		"lab.jsonld":    `{"@context": {"lab": "https://lab.example/terms#"}}`,
		"unused.jsonld": `not even JSON, but not listed either`,
	})
	l := newLoader(t, LoaderOptions{Dir: dir})
	for u, term := range map[string]string{"https://example.org/contexts/color": "color", "urn:example:lab": "lab"} {
		rd, err := l.LoadDocument(u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if _, ok := rd.Document.(map[string]any)["@context"].(map[string]any)[term]; !ok {
			t.Errorf("%s: no %q in @context", u, term)
		}
	}
	// The bundled ones are still there.
	if _, err := l.LoadDocument("https://www.w3.org/2022/wot/td/v1.1"); err != nil {
		t.Error(err)
	}
	// A TD can use it.
	iri, err := NewExpander(l).ExpandIRI([]any{"https://www.w3.org/2022/wot/td/v1.1", "https://example.org/contexts/color"}, "color")
	if err != nil || iri != "https://example.org/ns#color" {
		t.Errorf("ExpandIRI = %q, %v", iri, err)
	}
}

func TestOperatorFolderErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string // substring of the error
	}{
		{"no index", map[string]string{"a.jsonld": exampleContext}, "index.json"},
		{"index not an object", map[string]string{"index.json": `["a.jsonld"]`}, "index.json must be an object of URL to file name"},
		{"relative URL", map[string]string{"index.json": `{"contexts/a": "a.jsonld"}`, "a.jsonld": exampleContext}, `"contexts/a" is not an absolute URL`},
		{"bundled URL", map[string]string{"index.json": `{"https://www.w3.org/2022/wot/td/v1.1": "a.jsonld"}`, "a.jsonld": exampleContext}, "https://www.w3.org/2022/wot/td/v1.1 is bundled"},
		{"path outside", map[string]string{"index.json": `{"https://example.org/a": "../a.jsonld"}`}, `"../a.jsonld" is not a .jsonld file name in the folder`},
		{"subfolder", map[string]string{"index.json": `{"https://example.org/a": "sub/a.jsonld"}`}, `"sub/a.jsonld" is not a .jsonld file name`},
		{"wrong suffix", map[string]string{"index.json": `{"https://example.org/a": "a.json"}`, "a.json": exampleContext}, `"a.json" is not a .jsonld file name`},
		{"missing file", map[string]string{"index.json": `{"https://example.org/a": "a.jsonld"}`}, "https://example.org/a: "},
		{"not JSON", map[string]string{"index.json": `{"https://example.org/a": "a.jsonld"}`, "a.jsonld": `{"@context": `}, "a.jsonld: not JSON"},
		{"not an object", map[string]string{"index.json": `{"https://example.org/a": "a.jsonld"}`, "a.jsonld": `[{"@context": {}}]`}, "a.jsonld: not a JSON object"},
		{"no @context", map[string]string{"index.json": `{"https://example.org/a": "a.jsonld"}`, "a.jsonld": `{"ex": "https://example.org/ns#"}`}, "a.jsonld: has no @context member"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, tc.files)
			l, err := NewLoader(LoaderOptions{Dir: dir, Client: guardedClient(t)})
			if err == nil {
				t.Fatal("NewLoader accepted the folder")
			}
			if l != nil {
				t.Error("NewLoader returned a loader with its error")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not name the folder and %q", err, tc.want)
			}
		})
	}
	if _, err := NewLoader(LoaderOptions{Dir: filepath.Join(t.TempDir(), "missing")}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing folder: %v", err)
	}
}

func TestAllowRemoteMustBeFetchableAndNew(t *testing.T) {
	for u, want := range map[string]string{
		"ftp://example.org/ctx":               "is not an http(s) URL",
		"/contexts/a":                         "is not an http(s) URL",
		"https://":                            "is not an http(s) URL",
		"https://www.w3.org/2022/wot/td/v1.1": "is served offline",
	} {
		_, err := NewLoader(LoaderOptions{AllowRemote: []string{u}, Client: guardedClient(t)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", u, err, want)
		}
	}
}

// contextServer serves exampleContext at every path and counts requests.
func contextServer(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

func serveJSON(contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write([]byte(body))
	}
}

func TestRemoteFetchedOnceForConcurrentCallers(t *testing.T) {
	srv, requests := contextServer(t, func(w http.ResponseWriter, r *http.Request) {
		if accept := r.Header.Get("Accept"); !strings.HasPrefix(accept, "application/ld+json") {
			t.Errorf("Accept = %q", accept)
		}
		time.Sleep(100 * time.Millisecond) // let every caller arrive while the first fetch runs
		serveJSON("application/ld+json", exampleContext)(w, r)
	})
	u := srv.URL + "/contexts/color"
	l := newLoader(t, LoaderOptions{AllowRemote: []string{u}}, srv)

	const callers = 16
	var wg sync.WaitGroup
	start := make(chan struct{})
	docs := make([]any, callers)
	for i := range callers {
		wg.Go(func() {
			<-start
			rd, err := l.LoadDocument(u)
			if err != nil {
				t.Error(err)
				return
			}
			docs[i] = rd.Document
		})
	}
	close(start)
	wg.Wait()
	if n := requests.Load(); n != 1 {
		t.Errorf("%d concurrent callers made %d requests, want 1", callers, n)
	}
	want, _ := decodeContext([]byte(exampleContext))
	for i, doc := range docs {
		if !reflect.DeepEqual(doc, any(want)) {
			t.Errorf("caller %d got %v", i, doc)
		}
	}
	if _, err := l.LoadDocument(u); err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("a later call fetched again (%d requests)", n)
	}
}

func TestRemoteDefaultClient(t *testing.T) {
	srv, requests := contextServer(t, serveJSON("application/ld+json", exampleContext))
	allowDefaultDial(t, srv)
	l, err := NewLoader(LoaderOptions{AllowRemote: []string{srv.URL + "/ctx"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.LoadDocument(srv.URL + "/ctx"); err != nil {
		t.Fatal(err)
	}
	if requests.Load() != 1 {
		t.Errorf("%d requests", requests.Load())
	}
}

func wantReason(t *testing.T, err error, u, reason string) {
	t.Helper()
	cerr, ok := errors.AsType[*ContextError](err)
	if !ok {
		t.Fatalf("error %v is not a *ContextError", err)
	}
	if cerr.URL != u || cerr.Reason != reason {
		t.Errorf("got URL %q reason %q, want %q %q", cerr.URL, cerr.Reason, u, reason)
	}
	// Unwrapped, so that the message can be stored as the reason as it is.
	if err.Error() != cerr.Error() {
		t.Errorf("error %q wraps the *ContextError", err)
	}
}

func TestRemoteTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"no headers", func(_ http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}},
		{"slow body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/ld+json")
			_, _ = w.Write([]byte(`{"@context": `))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := contextServer(t, tc.handler)
			u := srv.URL + "/slow"
			l := newLoader(t, LoaderOptions{AllowRemote: []string{u}, Timeout: 100 * time.Millisecond}, srv)
			start := time.Now()
			_, err := l.LoadDocument(u)
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Errorf("took %s with a 100ms timeout", elapsed)
			}
			wantReason(t, err, u, "could not be fetched: no complete answer within 100ms")
		})
	}
}

func TestRemoteSizeCap(t *testing.T) {
	const limit = 64
	exact := `{"@context": {"ex": "https://example.org/ns#"}}`
	exact += strings.Repeat(" ", limit-len(exact))
	srv, _ := contextServer(t, func(w http.ResponseWriter, r *http.Request) {
		body := exact
		if r.URL.Path == "/over" {
			body += " "
		}
		serveJSON("application/ld+json", body)(w, r)
	})
	l := newLoader(t, LoaderOptions{AllowRemote: []string{srv.URL + "/exact", srv.URL + "/over"}, MaxBytes: limit}, srv)
	if _, err := l.LoadDocument(srv.URL + "/exact"); err != nil {
		t.Errorf("a document of exactly MaxBytes: %v", err)
	}
	_, err := l.LoadDocument(srv.URL + "/over")
	wantReason(t, err, srv.URL+"/over", "could not be fetched: larger than 64 bytes")
}

func TestRemoteDefaultSizeCap(t *testing.T) {
	huge := `{"@context": {}}` + strings.Repeat(" ", 1<<20)
	srv, _ := contextServer(t, serveJSON("application/json", huge))
	l := newLoader(t, LoaderOptions{AllowRemote: []string{srv.URL}}, srv)
	_, err := l.LoadDocument(srv.URL)
	wantReason(t, err, srv.URL, "could not be fetched: larger than 1048576 bytes")
}

func TestRemoteResponses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		reason  string // "" means accepted
	}{
		{"ld+json", serveJSON("application/ld+json", exampleContext), ""},
		{"json with charset", serveJSON("application/json; charset=utf-8", exampleContext), ""},
		{"vendor +json", serveJSON("application/vnd.example.context+json", exampleContext), ""},
		{"html", serveJSON("text/html; charset=utf-8", exampleContext), `could not be fetched: content type "text/html; charset=utf-8" is not JSON`},
		{"no content type", func(w http.ResponseWriter, _ *http.Request) {
			w.Header()["Content-Type"] = nil // stop net/http from sniffing one
			_, _ = w.Write([]byte(exampleContext))
		}, `could not be fetched: content type "" is not JSON`},
		{"javascript", serveJSON("application/javascript", exampleContext), `could not be fetched: content type "application/javascript" is not JSON`},
		{"not found", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, "could not be fetched: HTTP 404 Not Found"},
		{"broken JSON", serveJSON("application/ld+json", `{"@context": {`), "could not be fetched: not JSON: unexpected end of JSON input"},
		{"array", serveJSON("application/ld+json", `[`+exampleContext+`]`), "could not be fetched: not a JSON object"},
		{"no @context", serveJSON("application/ld+json", `{"ex": "https://example.org/ns#"}`), "could not be fetched: has no @context member"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := contextServer(t, tc.handler)
			l := newLoader(t, LoaderOptions{AllowRemote: []string{srv.URL + "/ctx"}}, srv)
			rd, err := l.LoadDocument(srv.URL + "/ctx")
			if tc.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				if rd.DocumentURL != srv.URL+"/ctx" {
					t.Errorf("DocumentURL = %q", rd.DocumentURL)
				}
				return
			}
			wantReason(t, err, srv.URL+"/ctx", tc.reason)
		})
	}
}

func TestRemoteFailureIsRetriedAfterAWhile(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	srv, requests := contextServer(t, func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		serveJSON("application/ld+json", exampleContext)(w, r)
	})
	u := srv.URL + "/ctx"
	l := newLoader(t, LoaderOptions{AllowRemote: []string{u}}, srv)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }

	_, err := l.LoadDocument(u)
	wantReason(t, err, u, "could not be fetched: HTTP 503 Service Unavailable")
	fail.Store(false)
	now = now.Add(retryAfter - time.Second)
	_, err = l.LoadDocument(u)
	wantReason(t, err, u, "could not be fetched: HTTP 503 Service Unavailable")
	if n := requests.Load(); n != 1 {
		t.Fatalf("%d requests before retryAfter passed, want 1", n)
	}
	now = now.Add(time.Second)
	if _, err := l.LoadDocument(u); err != nil {
		t.Fatalf("after retryAfter: %v", err)
	}
	if _, err := l.LoadDocument(u); err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}
