package directory

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/td"
)

func TestCursorRoundTrip(t *testing.T) {
	q := SearchQuery{Text: "weather", Kind: td.KindAgent}
	fp := q.fingerprint()
	for _, c := range []SearchCursor{
		{Score: 0, ID: "urn:a"},
		{Score: 0.060792710632085800, ID: "urn:ü/🙂?#"},
		{Score: 1e-300, ID: ""},
	} {
		got, err := decodeCursor(encodeCursor(c, fp), fp)
		if err != nil || got != c {
			t.Errorf("%+v came back as %+v, %v", c, got, err)
		}
	}
	other := SearchQuery{Text: "weather", Kind: td.KindTool}
	if _, err := decodeCursor(encodeCursor(SearchCursor{ID: "urn:a"}, fp), other.fingerprint()); !isRequestError(err, "cursor") {
		t.Errorf("a cursor used with other filters: %v", err)
	}
	limited := q
	limited.Limit = 7
	if limited.fingerprint() != fp {
		t.Error("the page size changes the fingerprint; it must not, clients may change it between pages")
	}
	// Filters are told apart even when their concatenation is the same.
	a, b := SearchQuery{Text: "ab", Kind: ""}, SearchQuery{Text: "a", Kind: "b"}
	if a.fingerprint() == b.fingerprint() {
		t.Error("different queries share a fingerprint")
	}
	for _, bad := range []string{"", "!!", "AAAA", encodeCursor(SearchCursor{ID: "x"}, fp)[:10]} {
		if _, err := decodeCursor(bad, fp); !isRequestError(err, "cursor") {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
}

func isRequestError(err error, field string) bool {
	var re *RequestError
	return errors.As(err, &re) && re.Field == field
}

func TestCheckSearch(t *testing.T) {
	s := &Service{limits: SearchLimits{MaxTextBytes: 10}.withDefaults()}
	q := SearchQuery{}
	if err := s.checkSearch(&q); err != nil || q.Limit != 20 {
		t.Fatalf("defaults: limit %d, %v", q.Limit, err)
	}
	for _, tc := range []struct {
		q     SearchQuery
		field string
	}{
		{SearchQuery{Limit: 101}, "limit"},
		{SearchQuery{Limit: -1}, "limit"},
		{SearchQuery{Text: "01234567890"}, "q"},
		{SearchQuery{Kind: "robot"}, "kind"},
		{SearchQuery{Vendor: "a\x00b"}, "vendor"},
		{SearchQuery{Action: "\xff"}, "action"},
	} {
		if err := s.checkSearch(&tc.q); !isRequestError(err, tc.field) {
			t.Errorf("%+v: %v, want a request error on %s", tc.q, err, tc.field)
		}
	}
	for _, kind := range Kinds {
		q := SearchQuery{Kind: kind}
		if err := s.checkSearch(&q); err != nil {
			t.Errorf("kind %s: %v", kind, err)
		}
	}
}

// iriExpander expands "lmos:" to the LMOS namespace with a slash, like a remote LMOS
// context could, and fails for everything else.
type iriExpander struct{}

func (iriExpander) ExpandPartial([]byte) ([]byte, string, error) {
	return nil, "", errors.New("unused")
}

func (iriExpander) ExpandIRI(_ any, term string) (string, error) {
	if rest, ok := strings.CutPrefix(term, "lmos:"); ok {
		return "https://eclipse.dev/lmos/protocol/v1/" + rest, nil
	}
	return "", errors.New("no such term")
}

func TestIndexOf(t *testing.T) {
	raw := []byte(`{"@context": ["https://www.w3.org/2022/wot/td/v1.1", {"lmos": "https://eclipse.dev/lmos/protocol/v1"}],
	 "@type": ["lmos:Tool", "Thing"], "title": "Billing tool", "titles": {"de": "Rechnungswerkzeug"}, "description": "Invoices",
	 "lmos:metadata": {"lmos:vendor": {"lmos:name": "Globex", "lmos:url": "https://globex.example"},
	   "lmos:capabilities": [{"id": "billing", "version": "2.1"}, {"id": "tax"}]},
	 "base": "HTTPS://billing.example/",
	 "actions": {"createInvoice": {"forms": [{"href": "invoices"}, {"href": "wss://billing.example/ws", "subprotocol": "lmosprotocol"}]}},
	 "properties": {"currency": {"forms": [{"href": "currency"}]}},
	 "events": {"paid": {"forms": [{"href": "events/paid", "subprotocol": "sse"}]}}}`)
	decoded, err := td.DecodeJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	ix := indexOf(raw, decoded.(map[string]any), iriExpander{})
	check := func(name string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if ix.Kind != td.KindTool || ix.VendorName != "Globex" || ix.VendorURL != "https://globex.example" || ix.Title != "Billing tool" || ix.Description != "Invoices" {
		t.Errorf("index %+v", ix)
	}
	check("Types", ix.Types, []string{"lmos:Tool", "Thing"})
	check("TypeIRIs", ix.TypeIRIs, []string{"lmos:Tool", "Thing", "https://eclipse.dev/lmos/protocol/v1/Tool"})
	check("Actions", ix.Actions, []string{"createInvoice"})
	check("Properties", ix.Properties, []string{"currency"})
	check("Events", ix.Events, []string{"paid"})
	check("Capabilities", ix.Capabilities, []string{"billing", "billing@2.1", "tax"})
	check("Protocols", ix.Protocols, []string{"https", "wss", "lmosprotocol", "sse"})
	if !strings.Contains(ix.Text.Titles, "Rechnungswerkzeug") || !strings.Contains(ix.Text.Names, "invoice") {
		t.Errorf("text %+v", ix.Text)
	}
	without := indexOf(raw, decoded.(map[string]any), nil)
	check("TypeIRIs without an expander", without.TypeIRIs, []string{"lmos:Tool", "Thing"})
}

func TestEnrichedShowsExpansionProblem(t *testing.T) {
	th := Thing{ID: "urn:x", Document: []byte(`{"id":"urn:x"}`), Created: time.Unix(0, 0), Modified: time.Unix(0, 0),
		ExpansionProblem: `context https://x.example/<ctx> is "not" available`}
	var doc struct {
		Registration struct {
			Expansion struct {
				Complete *bool
				Reason   string
			}
		}
	}
	if err := json.Unmarshal(th.Enriched(time.Unix(0, 0)), &doc); err != nil {
		t.Fatal(err)
	}
	x := doc.Registration.Expansion
	if x.Complete == nil || *x.Complete || x.Reason != th.ExpansionProblem {
		t.Errorf("expansion %+v", x)
	}
	th.ExpansionProblem = ""
	if strings.Contains(string(th.Enriched(time.Unix(0, 0))), "expansion") {
		t.Error("a complete expansion is mentioned")
	}
}

func TestSearchWords(t *testing.T) {
	for text, want := range map[string][]string{
		"":                        nil,
		"  \t":                    nil,
		`"quoted" (x) -y* z:`:     {"quoted", "x", "y", "z"},
		"Robot robot ROBOT arm":   {"Robot", "arm"},
		"café-au-lait 4x4 ½ x²":   {"café", "au", "lait", "4x4", "½", "x²"},
		"日本語 テキスト":                {"日本語", "テキスト"},
		"under_score dot.ted a'b": {"under", "score", "dot", "ted", "a", "b"},
	} {
		if got := SearchWords(text); !slices.Equal(got, want) {
			t.Errorf("SearchWords(%q) = %q, want %q", text, got, want)
		}
	}
}
