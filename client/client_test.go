package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// billingTD is a registered TD as the directory serves it, registration information included.
const billingTD = `{"@context":["https://www.w3.org/2022/wot/td/v1.1",{"lmos":"https://eclipse.dev/lmos/protocol/v1#"}],` +
	`"id":"urn:acme:billing","@type":"lmos:Tool","title":"Billing tool","description":"Creates and looks up invoices",` +
	`"securityDefinitions":{"nosec_sc":{"scheme":"nosec"}},"security":"nosec_sc",` +
	`"actions":{"createInvoice":{"forms":[{"href":"https://acme.example/invoices"}]}},` +
	`"registration":{"created":"2025-01-02T03:04:05.000000Z","modified":"2025-01-02T03:04:05.000000Z","retrieved":"2025-01-03T00:00:00.000000Z"}}`

const weatherTD = `{"@context":"https://www.w3.org/2022/wot/td/v1.1","id":"urn:zeta:weather","@type":"lmos:Agent",` +
	`"securityDefinitions":{"nosec_sc":{"scheme":"nosec"}},"security":"nosec_sc",` +
	`"registration":{"created":"2025-01-02T03:04:05.000000Z","retrieved":"2025-01-03T00:00:00.000000Z"}}`

// searchAnswer is a first page as the directory writes it: facet members largest count
// first (not alphabetical), optional members left out, and a next link under the base path.
const searchAnswer = `{"items":[` +
	`{"id":"urn:acme:billing","kind":"tool","title":"Billing tool","description":"Creates and looks up invoices",` +
	`"vendor":{"name":"Acme","url":"https://acme.example"},"score":0.6079,"td":` + billingTD + `},` +
	`{"id":"urn:zeta:weather","kind":"agent","score":0,"td":` + weatherTD + `}],` +
	`"facets":{"kind":{"tool":2,"agent":1},"vendor":{"Zeta":3,"Acme":1},"type":{"lmos:Tool":2,"lmos:Agent":1}},` +
	`"next":"/dir/search?kind=tool&limit=2&q=invoice&cursor=AbC%2B%2F%3D"}`

// newDirectory serves handler under /dir, where the returned client expects the directory.
func newDirectory(t *testing.T, handler http.HandlerFunc) *Client {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL + "/dir/")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, body)
}

func writeProblem(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func TestNew(t *testing.T) {
	for _, base := range []string{"http://localhost:8080", "https://dir.example/lmos/", "http://[::1]:8080/a/b"} {
		if _, err := New(base); err != nil {
			t.Errorf("New(%q): %v", base, err)
		}
	}
	for _, base := range []string{"", "localhost:8080", "/dir", "ftp://h/", "http://", "http://h/dir?x=1", "http://h/#top", "http://h/%zz"} {
		if _, err := New(base); err == nil {
			t.Errorf("New(%q) accepted an unusable directory URL", base)
		}
	}
}

func TestSearch(t *testing.T) {
	var got url.Values
	c := newDirectory(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/dir/search" {
			t.Errorf("path %q, want /dir/search", r.URL.Path)
		}
		got = r.URL.Query()
		writeJSON(w, searchAnswer)
	})
	page, err := c.Search(context.Background(), SearchQuery{
		Text: "invoice pdf", Kind: "tool", Type: "lmos:Tool", Vendor: "Acme", Action: "createInvoice",
		Property: "status", Event: "overdue", Capability: "billing", Protocol: "http", Limit: 2, Cursor: "c1",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{
		"q": {"invoice pdf"}, "kind": {"tool"}, "type": {"lmos:Tool"}, "vendor": {"Acme"}, "action": {"createInvoice"},
		"property": {"status"}, "event": {"overdue"}, "capability": {"billing"}, "protocol": {"http"},
		"limit": {"2"}, "cursor": {"c1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("query\n got %v\nwant %v", got, want)
	}

	if len(page.Items) != 2 {
		t.Fatalf("%d items, want 2", len(page.Items))
	}
	billing := page.Items[0]
	if billing.ID != "urn:acme:billing" || billing.Kind != "tool" || billing.Title != "Billing tool" ||
		billing.Description != "Creates and looks up invoices" || billing.Score != 0.6079 ||
		billing.Vendor == nil || *billing.Vendor != (Vendor{Name: "Acme", URL: "https://acme.example"}) {
		t.Errorf("first item %+v", billing)
	}
	if string(billing.TD) != billingTD {
		t.Errorf("the TD is not passed on as sent:\n%s", billing.TD)
	}
	weather := page.Items[1]
	if weather.Vendor != nil || weather.Title != "" || weather.Score != 0 || string(weather.TD) != weatherTD {
		t.Errorf("second item %+v", weather)
	}
	wantFacets := Facets{
		Kind:   []FacetCount{{"tool", 2}, {"agent", 1}},
		Vendor: []FacetCount{{"Zeta", 3}, {"Acme", 1}},
		Type:   []FacetCount{{"lmos:Tool", 2}, {"lmos:Agent", 1}},
	}
	if !reflect.DeepEqual(page.Facets, wantFacets) {
		t.Errorf("facets in the directory's order\n got %v\nwant %v", page.Facets, wantFacets)
	}
	if page.Next != "AbC+/=" {
		t.Errorf("next cursor %q, want the unescaped cursor parameter of the link", page.Next)
	}
}

func TestSearchLeavesOutEmptyArguments(t *testing.T) {
	c := newDirectory(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "" {
			t.Errorf("query %q, want none", r.URL.RawQuery)
		}
		writeJSON(w, `{"items":[],"facets":{"kind":{},"vendor":{},"type":{}},"next":null}`)
	})
	page, err := c.Search(context.Background(), SearchQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 0 || page.Next != "" || len(page.Facets.Kind) != 0 {
		t.Errorf("empty result read as %+v", page)
	}
}

func TestSearchRejectsBrokenAnswers(t *testing.T) {
	for _, answer := range []string{
		`<html>`,
		`{"items":[],"facets":{"kind":[1,2]},"next":null}`,
		`{"items":[],"facets":{"kind":{"tool":"many"}},"next":null}`,
		`{"items":[],"facets":{},"next":"/search?kind=tool"}`,
	} {
		c := newDirectory(t, func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, answer) })
		if _, err := c.Search(context.Background(), SearchQuery{}); err == nil {
			t.Errorf("answer %s accepted", answer)
		}
	}
}

// pagedDirectory answers /dir/search with three pages of one item each, and counts requests.
func pagedDirectory(t *testing.T, requests *int) *Client {
	return newDirectory(t, func(w http.ResponseWriter, r *http.Request) {
		*requests++
		if r.URL.Query().Get("kind") != "tool" || r.URL.Query().Get("limit") != "1" {
			t.Errorf("a page lost the query: %s", r.URL.RawQuery)
		}
		item := func(id string) string { return `{"id":"` + id + `","kind":"tool","score":0,"td":{"id":"` + id + `"}}` }
		switch r.URL.Query().Get("cursor") {
		case "":
			writeJSON(w, `{"items":[`+item("urn:a")+`],"facets":{},"next":"/dir/search?kind=tool&limit=1&cursor=p2"}`)
		case "p2":
			writeJSON(w, `{"items":[`+item("urn:b")+`],"facets":{},"next":"/dir/search?kind=tool&limit=1&cursor=p3"}`)
		case "p3":
			writeJSON(w, `{"items":[`+item("urn:c")+`],"facets":{},"next":null}`)
		default:
			writeProblem(w, http.StatusBadRequest, `{"type":"urn:lmosdir:problem:bad-request","title":"Bad Request","status":400,"detail":"the cursor is not valid"}`)
		}
	})
}

func TestSearchAllFollowsCursors(t *testing.T) {
	var requests int
	c := pagedDirectory(t, &requests)
	var ids []string
	for item, err := range c.SearchAll(context.Background(), SearchQuery{Kind: "tool", Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, item.ID)
	}
	if strings.Join(ids, " ") != "urn:a urn:b urn:c" || requests != 3 {
		t.Errorf("items %v in %d requests, want urn:a urn:b urn:c in 3", ids, requests)
	}
}

func TestSearchAllFetchesOnlyWhatIsConsumed(t *testing.T) {
	var requests int
	c := pagedDirectory(t, &requests)
	for item, err := range c.SearchAll(context.Background(), SearchQuery{Kind: "tool", Limit: 1}) {
		if err != nil || item.ID != "urn:a" {
			t.Fatalf("first item %q, error %v", item.ID, err)
		}
		break
	}
	if requests != 1 {
		t.Errorf("%d requests for the first item, want 1", requests)
	}
}

func TestSearchAllEndsWithTheError(t *testing.T) {
	var requests int
	c := pagedDirectory(t, &requests)
	var (
		ids  []string
		errs []error
	)
	for item, err := range c.SearchAll(context.Background(), SearchQuery{Kind: "tool", Limit: 1, Cursor: "p3"}) {
		ids = append(ids, item.ID)
		errs = append(errs, err)
	}
	if len(ids) != 1 || ids[0] != "urn:c" || errs[0] != nil {
		t.Errorf("starting at a cursor: items %v, errors %v", ids, errs)
	}

	ids, errs = nil, nil
	for item, err := range c.SearchAll(context.Background(), SearchQuery{Kind: "tool", Limit: 1, Cursor: "stale"}) {
		ids = append(ids, item.ID)
		errs = append(errs, err)
	}
	var problem *ProblemError
	if len(errs) != 1 || !errors.As(errs[0], &problem) || problem.Status != http.StatusBadRequest {
		t.Errorf("a refused cursor: items %v, errors %v", ids, errs)
	}
}

func TestSearchAllStopsAtARepeatedCursor(t *testing.T) {
	var requests int
	c := newDirectory(t, func(w http.ResponseWriter, _ *http.Request) {
		requests++
		writeJSON(w, `{"items":[],"facets":{},"next":"/dir/search?cursor=same"}`)
	})
	var last error
	for _, err := range c.SearchAll(context.Background(), SearchQuery{}) {
		last = err
	}
	if last == nil || requests != 2 {
		t.Errorf("after %d requests: error %v, want one about the cursor after 2", requests, last)
	}
}

func TestProblemAnswers(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		status      int
		body        string
		want        ProblemError
		wantText    string
	}{{
		name:        "problem details",
		contentType: "application/problem+json",
		status:      http.StatusBadRequest,
		body: `{"type":"urn:lmosdir:problem:bad-request","title":"Bad Request","status":400,"detail":"kind must be agent or tool",` +
			`"instance":"/dir/search?kind=robot","validationErrors":[{"field":"kind","description":"unknown kind \"robot\""},{"field":"","description":"see /openapi.yaml"}]}`,
		want: ProblemError{
			Status: 400, Type: "urn:lmosdir:problem:bad-request", Title: "Bad Request", Detail: "kind must be agent or tool",
			Instance: "/dir/search?kind=robot", ValidationErrors: []FieldProblem{{"kind", `unknown kind "robot"`}, {"", "see /openapi.yaml"}},
		},
		wantText: `400 Bad Request: kind must be agent or tool (kind: unknown kind "robot"; see /openapi.yaml)`,
	}, {
		name:        "query limit",
		contentType: "application/problem+json",
		status:      http.StatusUnprocessableEntity,
		body:        `{"type":"urn:lmosdir:problem:query-limit","title":"Unprocessable Entity","status":422,"detail":"the query ran longer than 5s","instance":"/search/jsonpath?query=%24..%2A"}`,
		want: ProblemError{
			Status: 422, Type: "urn:lmosdir:problem:query-limit", Title: "Unprocessable Entity",
			Detail: "the query ran longer than 5s", Instance: "/search/jsonpath?query=%24..%2A",
		},
		wantText: "422 Unprocessable Entity: the query ran longer than 5s",
	}, {
		name:        "proxy page",
		contentType: "text/html",
		status:      http.StatusBadGateway,
		body:        "<html><body>" + strings.Repeat("é", 150) + "</body></html>",
		want:        ProblemError{Status: 502, Title: "Bad Gateway", Detail: "<html><body>" + strings.Repeat("é", 94)},
		wantText:    "502 Bad Gateway: <html><body>" + strings.Repeat("é", 94),
	}, {
		name:        "JSON that is no problem",
		contentType: "application/json",
		status:      http.StatusServiceUnavailable,
		body:        `{"error":"overloaded"}`,
		want:        ProblemError{Status: 503, Title: "Service Unavailable", Detail: `{"error":"overloaded"}`},
		wantText:    `503 Service Unavailable: {"error":"overloaded"}`,
	}, {
		name:     "no body",
		status:   http.StatusNotFound,
		want:     ProblemError{Status: 404, Title: "Not Found"},
		wantText: "404 Not Found",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newDirectory(t, func(w http.ResponseWriter, _ *http.Request) {
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			})
			_, err := c.Search(context.Background(), SearchQuery{Kind: "robot"})
			var problem *ProblemError
			if !errors.As(err, &problem) {
				t.Fatalf("error %v is no *ProblemError", err)
			}
			if !reflect.DeepEqual(*problem, tt.want) {
				t.Errorf("problem\n got %#v\nwant %#v", *problem, tt.want)
			}
			if err.Error() != tt.wantText {
				t.Errorf("Error()\n got %s\nwant %s", err, tt.wantText)
			}
		})
	}
}

func TestAnswerSizeLimit(t *testing.T) {
	c := newDirectory(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `["`+strings.Repeat("x", 1<<20)+`"]`)
	})
	c.maxResponseBytes = 1 << 20
	_, err := c.JSONPath(context.Background(), "$..*")
	if err == nil || !strings.Contains(err.Error(), "larger than the client's limit of 1 MiB") {
		t.Errorf("error %v, want one about the size limit", err)
	}
	c.maxResponseBytes = 2 << 20
	if _, err := c.JSONPath(context.Background(), "$..*"); err != nil {
		t.Errorf("an answer within the limit was refused: %v", err)
	}
}

func TestJSONPath(t *testing.T) {
	const query = `$[?@.title == 'Billing & more']..href`
	c := newDirectory(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/dir/search/jsonpath" || r.URL.Query().Get("query") != query || len(r.URL.Query()) != 1 {
			t.Errorf("request %s", r.URL)
		}
		writeJSON(w, `["https://acme.example/invoices",{"href":"x"}]`)
	})
	nodes, err := c.JSONPath(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	if string(nodes) != `["https://acme.example/invoices",{"href":"x"}]` {
		t.Errorf("nodes %s", nodes)
	}

	c = newDirectory(t, func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, "[1,") })
	if _, err := c.JSONPath(context.Background(), "$"); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("a broken answer: error %v", err)
	}
}

func TestThings(t *testing.T) {
	// An id with every character that must not be taken for path structure.
	const id = "urn:acme:billing/v1?x=1#frag 50%"
	const escapedPath = "/dir/things/urn:acme:billing%2Fv1%3Fx=1%23frag%2050%25"
	registered := map[string][]byte{}
	c := newDirectory(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.EscapedPath() != escapedPath {
			t.Errorf("path %s, want %s", r.URL.EscapedPath(), escapedPath)
		}
		switch r.Method {
		case http.MethodGet:
			td, ok := registered[id]
			if !ok {
				writeProblem(w, http.StatusNotFound, `{"type":"about:blank","title":"Not Found","status":404,"detail":"no Thing with this id is registered (or its registration expired)","instance":"`+escapedPath+`"}`)
				return
			}
			w.Header().Set("Content-Type", "application/td+json")
			_, _ = w.Write(td)
		case http.MethodPut:
			if ct := r.Header.Get("Content-Type"); ct != "application/td+json" {
				t.Errorf("Content-Type %q", ct)
			}
			body, _ := io.ReadAll(r.Body)
			_, replaced := registered[id]
			registered[id] = body
			if replaced {
				w.WriteHeader(http.StatusNoContent)
			} else {
				w.WriteHeader(http.StatusCreated)
			}
		case http.MethodDelete:
			delete(registered, id)
			w.WriteHeader(http.StatusNoContent)
		}
	})
	ctx := context.Background()

	_, err := c.Get(ctx, id)
	var problem *ProblemError
	if !errors.As(err, &problem) || problem.Status != http.StatusNotFound || !strings.Contains(problem.Detail, "no Thing") {
		t.Errorf("Get before Put: error %v", err)
	}
	if created, err := c.Put(ctx, id, []byte(billingTD)); err != nil || !created {
		t.Errorf("first Put: created %v, error %v", created, err)
	}
	if created, err := c.Put(ctx, id, []byte(billingTD)); err != nil || created {
		t.Errorf("second Put: created %v, error %v", created, err)
	}
	td, err := c.Get(ctx, id)
	if err != nil || !bytes.Equal(td, []byte(billingTD)) {
		t.Errorf("Get: %s, error %v", td, err)
	}
	if err := c.Delete(ctx, id); err != nil {
		t.Errorf("Delete: %v", err)
	}
	if len(registered) != 0 {
		t.Error("Delete did not reach the directory")
	}
}

func TestWithHTTPClient(t *testing.T) {
	var sent bool
	hc := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		sent = true
		return &http.Response{
			StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader("[]")), Request: r,
		}, nil
	})}
	c, err := New("http://directory.invalid", WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	if nodes, err := c.JSONPath(context.Background(), "$"); err != nil || !sent || string(nodes) != "[]" {
		t.Errorf("nodes %s, error %v, sent through the given client: %v", nodes, err, sent)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The items of a search encode back to the directory's own form, which lmosdir search
// --json relies on.
func TestSearchItemEncodesLikeTheDirectory(t *testing.T) {
	item := `{"id":"urn:acme:billing","kind":"tool","title":"Billing tool","vendor":{"name":"Acme"},"score":0.5,"td":{"id":"urn:acme:billing"}}`
	var decoded SearchItem
	if err := json.Unmarshal([]byte(item), &decoded); err != nil {
		t.Fatal(err)
	}
	encoded, err := json.Marshal(decoded)
	if err != nil {
		t.Fatal(err)
	}
	if string(encoded) != item {
		t.Errorf("encoded\n got %s\nwant %s", encoded, item)
	}
}
