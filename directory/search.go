package directory

import (
	"strings"
	"unicode"

	"github.com/lmosdir/lmosdir/td"
)

// Index is what a store indexes of a Thing for search. The directory derives it from the
// TD on every write, so stores need no knowledge of TDs.
type Index struct {
	Kind string // td.KindAgent, td.KindTool, …
	// Types are the @type values as written; facets count these.
	Types []string
	// TypeIRIs are Types followed by their expansions with the TD's own context, without
	// repeats; the type filter matches any of them.
	TypeIRIs    []string
	VendorName  string
	VendorURL   string
	Title       string // in the TD's default language, for result lists
	Description string
	Actions     []string
	Properties  []string
	Events      []string
	// Capabilities are the LMOS capability ids, each followed by "id@version" when the
	// capability names a version.
	Capabilities []string
	// Protocols are the lower-case URI schemes of the form hrefs and the forms' subprotocols.
	Protocols []string
	Text      td.TextFields
}

// SearchQuery selects Things for Store.Search. Empty fields do not filter; the filters that
// are set must all hold.
type SearchQuery struct {
	// Text is full-text search over titles, affordance names, vendor and descriptions, in
	// that order of weight; every word must occur. Words are runs of letters and digits; a
	// store may ignore words it does not index (stop words), and a text without any word
	// it indexes does not filter.
	Text string
	// Kind is compared with Index.Kind.
	Kind string
	// Type matches any of Index.TypeIRIs exactly.
	Type string
	// Vendor matches the vendor name ignoring case, or the vendor URL exactly.
	Vendor string
	// Action, Property, Event and Capability match one entry of the list of that name.
	Action, Property, Event, Capability string
	// Protocol matches one of Index.Protocols ignoring case.
	Protocol string
	// Limit is the most items to return; it is always positive.
	Limit int
	// After continues a search after the item the cursor names; nil: from the start.
	After *SearchCursor
}

// SearchCursor is the position of a search item in the order of results: score descending,
// then id in code-point order.
type SearchCursor struct {
	Score float64
	ID    string
}

// SearchResult is one page of search results.
type SearchResult struct {
	Hits []SearchHit
	// More reports that there are results after the last hit.
	More bool
	// Facets count all the Things the query matches, regardless of Limit and After.
	Facets Facets
}

// SearchHit is one matching Thing. Index holds Kind, VendorName, VendorURL, Title and
// Description; the other Index fields are not filled.
type SearchHit struct {
	Thing Thing
	Index Index
	// Score is the relevance of the Thing to SearchQuery.Text, higher is better; 0 when the
	// query has no text. It depends only on the Thing and the query, never on the other
	// Things (as corpus statistics such as bm25's would), so that a cursor taken from one
	// page finds its place on the next however the directory changed in between.
	Score float64
}

// Cursor is the position of h, to continue after it.
func (h SearchHit) Cursor() SearchCursor {
	return SearchCursor{Score: h.Score, ID: h.Thing.ID}
}

// Facets count matching Things by kind, vendor name and @type as written. Each list holds
// at most MaxFacetValues entries, the largest counts first, equal counts by value; Things
// without a vendor are not counted under vendor.
type Facets struct {
	Kind   []FacetCount
	Vendor []FacetCount
	Type   []FacetCount
}

// FacetCount is how many matching Things have Value.
type FacetCount struct {
	Value string
	Count int
}

// MaxFacetValues bounds every facet list.
const MaxFacetValues = 20

// Expansion is the stored JSON-LD expansion of a Thing's document.
type Expansion struct {
	// Done reports that the expansion was attempted for the current document.
	Done bool
	// Expanded is the expanded form; nil when the document could not be expanded at all.
	Expanded []byte
	// Problem says why Expanded is incomplete or missing; empty when it is complete.
	Problem string
}

// SearchWords splits a full-text query into the words that must all occur: maximal runs of
// letters and numbers, each once (ignoring case). Everything else separates words, so no
// query syntax ever reaches a store's text search.
func SearchWords(text string) []string {
	fields := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	seen := make(map[string]bool, len(fields))
	words := fields[:0]
	for _, w := range fields {
		if lower := strings.ToLower(w); !seen[lower] {
			seen[lower] = true
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return nil
	}
	return words
}
