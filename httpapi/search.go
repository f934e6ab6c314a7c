package httpapi

import (
	"bytes"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/labstack/echo/v5"

	"github.com/lmosdir/lmosdir/directory"
)

// searchParameters are the arguments of GET /search, in the order next links repeat them.
var searchParameters = []string{"q", "kind", "type", "vendor", "action", "property", "event", "capability", "protocol", "limit", "cursor"}

func (s *Server) search(c *echo.Context) error {
	params := c.QueryParams()
	if err := checkParameters(params, "/search", searchParameters); err != nil {
		return err
	}
	q := directory.SearchQuery{
		Text: params.Get("q"), Kind: params.Get("kind"), Type: params.Get("type"), Vendor: params.Get("vendor"),
		Action: params.Get("action"), Property: params.Get("property"), Event: params.Get("event"),
		Capability: params.Get("capability"), Protocol: params.Get("protocol"),
	}
	if params.Has("limit") {
		n, err := strconv.Atoi(params.Get("limit"))
		if err != nil || n < 1 {
			return errorf(http.StatusBadRequest, "limit must be a positive integer, got %q", params.Get("limit"))
		}
		q.Limit = n
	}
	page, err := s.dir.Search(c.Request().Context(), q, params.Get("cursor"))
	if err != nil {
		return err
	}
	var next string
	if page.Next != "" {
		next = s.searchURL(params, page.Next)
		c.Response().Header().Add("Link", "<"+next+`>; rel="next"`)
	}
	return writeBody(c, http.StatusOK, mediaJSON, s.searchBody(page, next))
}

// checkParameters refuses parameters an endpoint does not know and repeated ones.
func checkParameters(params url.Values, endpoint string, known []string) error {
	for name, values := range params {
		if !slices.Contains(known, name) {
			return errorf(http.StatusBadRequest, "unknown query parameter %q; %s accepts %s", name, endpoint, joinNames(known))
		}
		if len(values) > 1 {
			return errorf(http.StatusBadRequest, "query parameter %q is given %d times; give it once", name, len(values))
		}
	}
	return nil
}

func joinNames(names []string) string {
	var b bytes.Buffer
	for i, n := range names {
		switch {
		case i == len(names)-1 && i > 0:
			b.WriteString(" and ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString(n)
	}
	return b.String()
}

// searchURL is the URL of the page after the current one: every argument as given, with
// the new cursor.
func (s *Server) searchURL(params url.Values, cursor string) string {
	next := url.Values{}
	for _, name := range searchParameters {
		if v := params.Get(name); v != "" && name != "cursor" {
			next.Set(name, v)
		}
	}
	next.Set("cursor", cursor)
	return s.basePath + "/search?" + next.Encode()
}

// searchBody writes the answer by hand so that each TD goes out as its stored bytes.
func (s *Server) searchBody(page directory.SearchPage, next string) []byte {
	retrieved := s.dir.Now()
	b := []byte(`{"items":[`)
	for i, h := range page.Hits {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = append(b, jsonString(h.Thing.ID)...)
		b = append(b, `,"kind":`...)
		b = append(b, jsonString(h.Index.Kind)...)
		b = appendOptionalString(b, "title", h.Index.Title)
		b = appendOptionalString(b, "description", h.Index.Description)
		if h.Index.VendorName != "" || h.Index.VendorURL != "" {
			b = append(b, `,"vendor":{`...)
			b = appendOptionalString(b, "name", h.Index.VendorName)
			b = appendOptionalString(b, "url", h.Index.VendorURL)
			b = append(b, '}')
		}
		b = append(b, `,"score":`...)
		b = strconv.AppendFloat(b, h.Score, 'g', -1, 64)
		b = append(b, `,"td":`...)
		b = h.Thing.AppendEnriched(b, retrieved)
		b = append(b, '}')
	}
	b = append(b, `],"facets":{"kind":`...)
	b = appendFacet(b, page.Facets.Kind)
	b = append(b, `,"vendor":`...)
	b = appendFacet(b, page.Facets.Vendor)
	b = append(b, `,"type":`...)
	b = appendFacet(b, page.Facets.Type)
	b = append(b, `},"next":`...)
	if next == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, jsonString(next)...)
	}
	return append(b, '}')
}

// appendOptionalString appends ,"name":"value" when value is not empty; after an opening
// brace the comma is left out.
func appendOptionalString(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, `":`...)
	return append(b, jsonString(value)...)
}

// appendFacet writes counts as an object whose members come in the facet's order: largest
// count first.
func appendFacet(b []byte, counts []directory.FacetCount) []byte {
	b = append(b, '{')
	for i, fc := range counts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, jsonString(fc.Value)...)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(fc.Count), 10)
	}
	return append(b, '}')
}

// unsupportedQueryLanguage answers the WoT Discovery search endpoints this directory does
// not implement.
func unsupportedQueryLanguage(language string) echo.HandlerFunc {
	return func(*echo.Context) error {
		return errorf(http.StatusNotFound, "%s search is not supported by this directory; it supports JSONPath at /search/jsonpath?query= and its own search at /search", language)
	}
}

func (s *Server) searchJSONPath(c *echo.Context) error {
	params := c.QueryParams()
	if err := checkParameters(params, "/search/jsonpath", []string{"query"}); err != nil {
		return err
	}
	if !params.Has("query") {
		return errorf(http.StatusBadRequest, "the query parameter is missing; give an RFC 9535 JSONPath query, for example query=$[?@.title=='Lamp']")
	}
	result, stats, err := s.dir.SearchJSONPath(c.Request().Context(), params.Get("query"))
	if err != nil {
		return err
	}
	if stats.Failed > 0 {
		s.log.Warn("JSONPath query failed on some TDs; they contribute nothing", "query", params.Get("query"), "failed", stats.Failed)
	}
	return writeBody(c, http.StatusOK, mediaJSON, result)
}
