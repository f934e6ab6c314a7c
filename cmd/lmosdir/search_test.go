package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/lmosdir/lmosdir/client"
)

const (
	billingSearchTD = `{"@context":"https://www.w3.org/2022/wot/td/v1.1","id":"urn:acme:billing","@type":"lmos:Tool","title":"Billing tool",` +
		`"securityDefinitions":{"nosec_sc":{"scheme":"nosec"}},"security":"nosec_sc","registration":{"created":"2025-01-02T03:04:05.000000Z"}}`
	plannerSearchTD = `{"@context":"https://www.w3.org/2022/wot/td/v1.1","id":"urn:zeta:planner","@type":"lmos:Agent","title":"Trip\nplanner",` +
		`"securityDefinitions":{"nosec_sc":{"scheme":"nosec"}},"security":"nosec_sc","registration":{"created":"2025-01-02T03:04:05.000000Z"}}`
	anonymousSearchTD = `{"@context":"https://www.w3.org/2022/wot/td/v1.1","id":"urn:x","securityDefinitions":{"nosec_sc":{"scheme":"nosec"}},"security":"nosec_sc"}`
)

// searchPage1 and searchPage2 are a search result of two pages in the directory's format;
// the directory is served under /dir.
const (
	searchPage1 = `{"items":[` +
		`{"id":"urn:acme:billing","kind":"tool","title":"Billing tool","vendor":{"name":"Acme","url":"https://acme.example"},"score":0.6079,"td":` + billingSearchTD + `},` +
		`{"id":"urn:zeta:planner","kind":"agent","title":"Trip\nplanner","vendor":{"url":"https://zeta.example"},"score":0.25,"td":` + plannerSearchTD + `}],` +
		`"facets":{"kind":{"tool":2,"agent":1},"vendor":{"Acme":2,"https://zeta.example":1},"type":{"lmos:Tool":2,"lmos:Agent":1}},` +
		`"next":"/dir/search?limit=2&q=invoice&cursor=c%2B2"}`
	searchPage2 = `{"items":[{"id":"urn:x","kind":"tool","score":0,"td":` + anonymousSearchTD + `}],` +
		`"facets":{"kind":{"tool":2,"agent":1},"vendor":{"Acme":2,"https://zeta.example":1},"type":{"lmos:Tool":2,"lmos:Agent":1}},` +
		`"next":null}`
)

// searchDirectory serves the two pages at /dir/search and records the queries it gets.
func searchDirectory(t *testing.T, queries *[]url.Values) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*queries = append(*queries, r.URL.Query())
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path != "/dir/search":
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"type":"about:blank","title":"Not Found","status":404,"detail":"there is no such endpoint; see /openapi.yaml for the API"}`)
		case r.URL.Query().Get("cursor") == "c+2":
			_, _ = io.WriteString(w, searchPage2)
		default:
			_, _ = io.WriteString(w, searchPage1)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/dir"
}

func runCommand(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestSearchTable(t *testing.T) {
	var queries []url.Values
	base := searchDirectory(t, &queries)
	stdout, _, err := runCommand(t, "search", "--url", base, "--limit=2", "invoice")
	if err != nil {
		t.Fatal(err)
	}
	want := `KIND   ID                TITLE         VENDOR                SCORE
tool   urn:acme:billing  Billing tool  Acme                  0.608
agent  urn:zeta:planner  Trip planner  https://zeta.example  0.250

kind: tool 2, agent 1
vendor: Acme 2, https://zeta.example 1
type: lmos:Tool 2, lmos:Agent 1

more results: add --all
`
	if stdout != want {
		t.Errorf("output\n%s\nwant\n%s", stdout, want)
	}
}

func TestSearchAll(t *testing.T) {
	var queries []url.Values
	t.Setenv("LMOSDIR_URL", searchDirectory(t, &queries))
	stdout, _, err := runCommand(t, "search", "--all", "--limit=2", "invoice")
	if err != nil {
		t.Fatal(err)
	}
	want := `KIND   ID                TITLE         VENDOR                SCORE
tool   urn:acme:billing  Billing tool  Acme                  0.608
agent  urn:zeta:planner  Trip planner  https://zeta.example  0.250
tool   urn:x

kind: tool 2, agent 1
vendor: Acme 2, https://zeta.example 1
type: lmos:Tool 2, lmos:Agent 1
`
	if stdout != want {
		t.Errorf("output\n%s\nwant\n%s", stdout, want)
	}
	wantQueries := []url.Values{
		{"q": {"invoice"}, "limit": {"2"}},
		{"q": {"invoice"}, "limit": {"2"}, "cursor": {"c+2"}},
	}
	if !reflect.DeepEqual(queries, wantQueries) {
		t.Errorf("queries\n got %v\nwant %v", queries, wantQueries)
	}
}

func TestSearchJSON(t *testing.T) {
	var queries []url.Values
	base := searchDirectory(t, &queries)
	stdout, stderr, err := runCommand(t, "search", "--url", base, "--json", "invoice")
	if err != nil {
		t.Fatal(err)
	}
	var items []client.SearchItem
	if err := json.Unmarshal([]byte(stdout), &items); err != nil {
		t.Fatalf("output is no JSON array of items: %v\n%s", err, stdout)
	}
	if len(items) != 2 || items[0].ID != "urn:acme:billing" || items[1].ID != "urn:zeta:planner" ||
		items[0].Vendor == nil || items[0].Vendor.Name != "Acme" || items[0].Score != 0.6079 {
		t.Fatalf("items %+v", items)
	}
	var td, want any
	if err := json.Unmarshal(items[1].TD, &td); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(plannerSearchTD), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(td, want) {
		t.Errorf("td %s, want %s", items[1].TD, plannerSearchTD)
	}
	if stderr != "more results: add --all\n" {
		t.Errorf("stderr %q, want the hint about more results", stderr)
	}
}

func TestSearchJSONEmpty(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"items":[],"facets":{"kind":{},"vendor":{},"type":{}},"next":null}`)
	}))
	defer srv.Close()
	stdout, _, err := runCommand(t, "search", "--url", srv.URL, "--json", "nothing")
	if err != nil || stdout != "[]\n" {
		t.Errorf("output %q, error %v; want an empty array", stdout, err)
	}
	stdout, _, err = runCommand(t, "search", "--url", srv.URL, "nothing")
	if err != nil || stdout != "no Things match\n" {
		t.Errorf("output %q, error %v", stdout, err)
	}
}

func TestSearchFlagsBecomeQueryParameters(t *testing.T) {
	var queries []url.Values
	base := searchDirectory(t, &queries)
	t.Setenv("LMOSDIR_CAPABILITY", "billing@2")
	_, _, err := runCommand(t, "search", "--url", base, "create", "--kind", "tool", "invoice",
		"--type=lmos:Tool", "--vendor", "Acme Corp", "--action", "createInvoice", "--property", "status",
		"--event", "overdue", "--protocol", "https", "--limit", "5", "--", "--pdf")
	if err != nil {
		t.Fatal(err)
	}
	want := []url.Values{{
		"q": {"create invoice --pdf"}, "kind": {"tool"}, "type": {"lmos:Tool"}, "vendor": {"Acme Corp"},
		"action": {"createInvoice"}, "property": {"status"}, "event": {"overdue"}, "capability": {"billing@2"},
		"protocol": {"https"}, "limit": {"5"},
	}}
	if !reflect.DeepEqual(queries, want) {
		t.Errorf("queries\n got %v\nwant %v", queries, want)
	}
}

func TestSearchJSONPath(t *testing.T) {
	const query = "$[?@.title == 'Billing tool'].id"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search/jsonpath" || r.URL.Query().Get("query") != query {
			t.Errorf("request %s", r.URL)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `["urn:acme:billing",{"href":"https://acme.example/invoices"}]`)
	}))
	defer srv.Close()
	stdout, _, err := runCommand(t, "search", "--url", srv.URL+"/", "--jsonpath", query)
	if err != nil {
		t.Fatal(err)
	}
	want := `[
  "urn:acme:billing",
  {
    "href": "https://acme.example/invoices"
  }
]
`
	if stdout != want {
		t.Errorf("output\n%s\nwant\n%s", stdout, want)
	}
}

func TestSearchErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"type":"urn:lmosdir:problem:bad-request","title":"Bad Request","status":400,`+
			`"detail":"limit must be between 1 and 100","instance":"/search?limit=500","validationErrors":[{"field":"limit","description":"limit must be between 1 and 100"}]}`)
	}))
	defer srv.Close()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--url", srv.URL, "--limit", "500"}, "400 Bad Request: limit must be between 1 and 100 (limit: limit must be between 1 and 100)"},
		{[]string{"--url", srv.URL, "--jsonpath", "$..id", "--kind", "tool"}, "--jsonpath runs instead of a search"},
		{[]string{"--url", "localhost:8080"}, "absolute http or https URL"},
		{[]string{"--timeout", "-1s"}, "timeout must not be negative"},
		{[]string{"--no-such-flag"}, "no-such-flag"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			stdout, _, err := runCommand(t, append([]string{"search"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
			if stdout != "" {
				t.Errorf("printed %q despite the error", stdout)
			}
		})
	}
}

func TestCell(t *testing.T) {
	if got := cell("  Trip\tplanner\n\x1b[31mred\x1b[0m  "); got != "Trip planner [31mred[0m" {
		t.Errorf("cell = %q", got)
	}
}
