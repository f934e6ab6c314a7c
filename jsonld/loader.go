package jsonld

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/piprate/json-gold/ld"
)

//go:embed contexts/*.jsonld
var bundledFiles embed.FS

// bundled maps each URL served from contexts/ to its file. The aliases are
// URLs the W3C itself answers with the same document (see contexts/NOTICE.md).
var bundled = map[string]string{
	"https://www.w3.org/2022/wot/td/v1.1":                                  "td-context-1.1.jsonld",
	"https://www.w3.org/2019/wot/td/v1":                                    "td-context-1.1.jsonld",
	"https://www.w3.org/2022/wot/discovery":                                "discovery-context.jsonld",
	"https://w3c.github.io/wot-discovery/context/discovery-context.jsonld": "discovery-context.jsonld",
	"https://www.w3.org/2022/wot/discovery-did":                            "discovery-did-context.jsonld",
}

const (
	defaultTimeout  = 5 * time.Second
	defaultMaxBytes = 1 << 20
	// retryAfter keeps an allow-listed server that is down from costing a
	// full timeout on every registration that names it.
	retryAfter = time.Minute
)

// LoaderOptions configure where contexts come from. Nothing is fetched from
// the network unless its URL is in AllowRemote.
type LoaderOptions struct {
	// Dir is a folder of operator-provided context files with an index.json
	// (format in the package documentation); "" means none.
	Dir string
	// AllowRemote lists exact http(s) URLs that may be fetched once and then
	// served from memory; empty means no network at all. Redirects are
	// followed as Client allows. A URL already served offline is refused,
	// since it would never be fetched.
	AllowRemote []string
	// Timeout bounds each remote fetch, body included; 0 means 5s.
	Timeout time.Duration
	// MaxBytes caps each remote document; a larger one is an error, never
	// truncated. 0 means 1 MiB.
	MaxBytes int64
	// Client performs remote fetches; nil means a client with Timeout.
	Client *http.Client
}

// Loader serves JSON-LD contexts: the bundled W3C ones, the operator's
// folder, allow-listed remote URLs. Safe for concurrent use; read-only after
// construction except the remote cache, which mu guards.
type Loader struct {
	offline     map[string]map[string]any
	allowed     map[string]bool
	bundledList string
	client      *http.Client
	timeout     time.Duration
	maxBytes    int64
	now         func() time.Time

	mu     sync.Mutex
	remote map[string]*fetch
}

// fetch is one remote retrieval; callers that arrive while it runs wait on
// done instead of fetching again. doc, err and at are written before done is
// closed and never after.
type fetch struct {
	done chan struct{}
	doc  map[string]any
	err  *ContextError
	at   time.Time
}

// ContextError reports a context that could not be loaded. Reason completes
// the sentence "context <URL> …", so Error reads naturally when stored as the
// reason an expansion is incomplete.
type ContextError struct {
	URL    string
	Reason string
}

func (e *ContextError) Error() string {
	return "context " + e.URL + " " + e.Reason
}

// NewLoader reads and checks every offline context up front, so that a
// broken context folder or allow-list stops start-up rather than failing
// registrations later.
func NewLoader(opts LoaderOptions) (*Loader, error) {
	l := &Loader{
		offline:     make(map[string]map[string]any),
		allowed:     make(map[string]bool),
		bundledList: strings.Join(slices.Sorted(maps.Keys(bundled)), ", "),
		client:      opts.Client,
		timeout:     opts.Timeout,
		maxBytes:    opts.MaxBytes,
		now:         time.Now,
		remote:      make(map[string]*fetch),
	}
	if l.timeout <= 0 {
		l.timeout = defaultTimeout
	}
	if l.maxBytes <= 0 {
		l.maxBytes = defaultMaxBytes
	}
	if l.client == nil {
		l.client = &http.Client{Timeout: l.timeout}
	}
	for u, name := range bundled {
		b, err := bundledFiles.ReadFile("contexts/" + name)
		if err != nil {
			return nil, fmt.Errorf("jsonld: bundled context %s: %w", name, err)
		}
		doc, err := decodeContext(b)
		if err != nil {
			return nil, fmt.Errorf("jsonld: bundled context %s: %w", name, err)
		}
		l.offline[u] = doc
	}
	if opts.Dir != "" {
		if err := l.addFolder(opts.Dir); err != nil {
			return nil, fmt.Errorf("jsonld: context folder %s: %w", opts.Dir, err)
		}
	}
	for _, u := range opts.AllowRemote {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, fmt.Errorf("jsonld: allow-listed context %q is not an http(s) URL", u)
		}
		if _, ok := l.offline[u]; ok {
			return nil, fmt.Errorf("jsonld: allow-listed context %s is served offline; remove it from the allow-list", u)
		}
		l.allowed[u] = true
	}
	return l, nil
}

func (l *Loader) addFolder(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	b, err := root.ReadFile("index.json")
	if err != nil {
		return err
	}
	var index map[string]string
	if err := json.Unmarshal(b, &index); err != nil {
		return fmt.Errorf("index.json must be an object of URL to file name: %w", err)
	}
	for _, u := range slices.Sorted(maps.Keys(index)) {
		name := index[u]
		if p, err := url.Parse(u); err != nil || !p.IsAbs() {
			return fmt.Errorf("index.json: %q is not an absolute URL", u)
		}
		if _, ok := bundled[u]; ok {
			return fmt.Errorf("index.json: %s is bundled; remove it from index.json", u)
		}
		if name != filepath.Base(name) || !strings.HasSuffix(name, ".jsonld") {
			return fmt.Errorf("index.json: %s: %q is not a .jsonld file name in the folder", u, name)
		}
		b, err := root.ReadFile(name)
		if err != nil {
			return fmt.Errorf("index.json: %s: %w", u, err)
		}
		doc, err := decodeContext(b)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		l.offline[u] = doc
	}
	return nil
}

// decodeContext accepts only what json-gold can use as a remote context: a
// JSON object with an @context member.
func decodeContext(b []byte) (map[string]any, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	if _, ok := doc["@context"]; !ok {
		return nil, errors.New("has no @context member")
	}
	return doc, nil
}

// LoadDocument implements json-gold's ld.DocumentLoader. Failures are
// *ContextError.
func (l *Loader) LoadDocument(u string) (*ld.RemoteDocument, error) {
	doc, ok := l.offline[u]
	if !ok {
		if !l.allowed[u] {
			return nil, &ContextError{URL: u, Reason: "is not available offline (bundled: " + l.bundledList +
				"; add it to the context folder or the allow-list)"}
		}
		var cerr *ContextError
		if doc, cerr = l.fetchOnce(u); cerr != nil {
			return nil, cerr
		}
	}
	// json-gold merges an @import-ed context into the loaded document in
	// place, so every caller gets its own copy of the shared one.
	return &ld.RemoteDocument{DocumentURL: u, Document: ld.CloneDocument(doc)}, nil
}

func (l *Loader) fetchOnce(u string) (map[string]any, *ContextError) {
	l.mu.Lock()
	f, ok := l.remote[u]
	if ok {
		select {
		case <-f.done:
			ok = f.err == nil || l.now().Sub(f.at) < retryAfter
		default: // in flight: wait for it below
		}
	}
	if ok {
		l.mu.Unlock()
		<-f.done
		return f.doc, f.err
	}
	f = &fetch{done: make(chan struct{})}
	l.remote[u] = f
	l.mu.Unlock()
	f.doc, f.err = l.fetch(u)
	f.at = l.now()
	close(f.done)
	return f.doc, f.err
}

func (l *Loader) fetch(u string) (map[string]any, *ContextError) {
	fail := func(format string, args ...any) *ContextError {
		return &ContextError{URL: u, Reason: "could not be fetched: " + fmt.Sprintf(format, args...)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, http.NoBody)
	if err != nil {
		return nil, fail("%v", err)
	}
	req.Header.Set("Accept", "application/ld+json, application/json;q=0.9")
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, fail("%s", l.describe(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fail("HTTP %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !isJSON(ct) {
		return nil, fail("content type %q is not JSON", ct)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, l.maxBytes+1))
	if err != nil {
		return nil, fail("%s", l.describe(err))
	}
	if int64(len(body)) > l.maxBytes {
		return nil, fail("larger than %d bytes", l.maxBytes)
	}
	doc, err := decodeContext(body)
	if err != nil {
		return nil, fail("%v", err)
	}
	return doc, nil
}

// describe turns the several shapes a timeout takes (context deadline, client
// timeout, network timeout) into one message.
func (l *Loader) describe(err error) string {
	var nerr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &nerr) && nerr.Timeout()) {
		return fmt.Sprintf("no complete answer within %s", l.timeout)
	}
	return err.Error()
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || mt == "application/ld+json" || strings.HasSuffix(mt, "+json")
}
