package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// SearchQuery is the arguments of GET /search; empty strings and a zero Limit are left out,
// so the directory applies its defaults.
type SearchQuery struct {
	// Text is words that must all occur in a Thing's titles, affordance names, vendor or
	// descriptions; it also ranks the results. The other fields filter, and all that are
	// given must hold (see the directory's /openapi.yaml for each).
	Text       string
	Kind       string
	Type       string
	Vendor     string
	Action     string
	Property   string
	Event      string
	Capability string
	Protocol   string
	// Limit is the page size, 1 to 100 (the directory's default: 20).
	Limit int
	// Cursor continues a search at the page after the one whose SearchPage.Next it is.
	Cursor string
}

// SearchItem is one Thing found by a search. The JSON names are those of the directory's
// answer, so items encode back to the same form.
type SearchItem struct {
	ID          string  `json:"id"`
	Kind        string  `json:"kind"`
	Title       string  `json:"title,omitempty"`
	Description string  `json:"description,omitempty"`
	Vendor      *Vendor `json:"vendor,omitempty"`
	// Score is the relevance to the query's text, higher is better; 0 without text.
	Score float64 `json:"score"`
	// TD is the whole Thing Description as the directory serves it.
	TD json.RawMessage `json:"td"`
}

// Vendor is who provides a Thing.
type Vendor struct {
	Name string `json:"name,omitempty"`
	URL  string `json:"url,omitempty"`
}

// FacetCount is how many Things of a whole search result have one value.
type FacetCount struct {
	Value string
	Count int
}

// Facets summarize a whole search result, not only the page; each list comes largest count
// first, as the directory sends it.
type Facets struct {
	Kind   []FacetCount
	Vendor []FacetCount
	Type   []FacetCount
}

// SearchPage is one page of a search result.
type SearchPage struct {
	Items  []SearchItem
	Facets Facets
	// Next is the cursor of the next page for SearchQuery.Cursor, "" on the last page.
	Next string
}

// Search returns one page of the Things matching q.
func (c *Client) Search(ctx context.Context, q SearchQuery) (SearchPage, error) {
	_, body, err := c.do(ctx, http.MethodGet, c.base+"/search?"+q.values().Encode(), nil, nil)
	if err != nil {
		return SearchPage{}, err
	}
	var answer struct {
		Items  []SearchItem `json:"items"`
		Facets struct {
			Kind   facetCounts `json:"kind"`
			Vendor facetCounts `json:"vendor"`
			Type   facetCounts `json:"type"`
		} `json:"facets"`
		Next *string `json:"next"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return SearchPage{}, fmt.Errorf("reading the search answer: %w", err)
	}
	page := SearchPage{
		Items:  answer.Items,
		Facets: Facets{Kind: answer.Facets.Kind, Vendor: answer.Facets.Vendor, Type: answer.Facets.Type},
	}
	if answer.Next != nil {
		// The link repeats the query, which the caller has; only its cursor is new.
		next, err := url.Parse(*answer.Next)
		if err != nil {
			return SearchPage{}, fmt.Errorf("reading the search answer: next link %q: %w", *answer.Next, err)
		}
		if page.Next = next.Query().Get("cursor"); page.Next == "" {
			return SearchPage{}, fmt.Errorf("reading the search answer: next link %q has no cursor", *answer.Next)
		}
	}
	return page, nil
}

// SearchAll returns every Thing matching q, fetching page after page as the sequence is
// consumed; q.Limit is the page size. An error ends the sequence.
func (c *Client) SearchAll(ctx context.Context, q SearchQuery) iter.Seq2[SearchItem, error] {
	return func(yield func(SearchItem, error) bool) {
		for {
			page, err := c.Search(ctx, q)
			if err != nil {
				yield(SearchItem{}, err)
				return
			}
			for _, item := range page.Items {
				if !yield(item, nil) {
					return
				}
			}
			if page.Next == "" {
				return
			}
			// A server that hands back the cursor it was given would page forever.
			if page.Next == q.Cursor {
				yield(SearchItem{}, fmt.Errorf("the directory answered cursor %q with the same cursor as the next page", q.Cursor))
				return
			}
			q.Cursor = page.Next
		}
	}
}

func (q SearchQuery) values() url.Values {
	v := url.Values{}
	for name, value := range map[string]string{
		"q": q.Text, "kind": q.Kind, "type": q.Type, "vendor": q.Vendor, "action": q.Action,
		"property": q.Property, "event": q.Event, "capability": q.Capability, "protocol": q.Protocol,
		"cursor": q.Cursor,
	} {
		if value != "" {
			v.Set(name, value)
		}
	}
	// Zero means "not given"; anything else goes out so the directory can refuse it.
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// facetCounts decodes a facet object into a list, keeping the member order the directory
// sorted by count, which a map would lose.
type facetCounts []FacetCount

func (f *facetCounts) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	start, err := dec.Token()
	if err != nil {
		return err
	}
	if start == nil {
		*f = nil
		return nil
	}
	if start != json.Delim('{') {
		return fmt.Errorf("a facet must be an object of counts, not %s", data)
	}
	counts := facetCounts{}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		fc := FacetCount{Value: key.(string)} // object member names are always strings
		if err := dec.Decode(&fc.Count); err != nil {
			return fmt.Errorf("facet value %q: %w", fc.Value, err)
		}
		counts = append(counts, fc)
	}
	*f = counts
	return nil
}

// JSONPath runs an RFC 9535 JSONPath query over all registered TDs and returns the
// directory's answer: a JSON array of the nodes selected.
func (c *Client) JSONPath(ctx context.Context, query string) (json.RawMessage, error) {
	_, body, err := c.do(ctx, http.MethodGet, c.base+"/search/jsonpath?"+url.Values{"query": {query}}.Encode(), nil, nil)
	if err != nil {
		return nil, err
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("the JSONPath answer is not JSON: %q", truncate(body))
	}
	return body, nil
}
