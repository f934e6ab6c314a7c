package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v5"

	"github.com/lmosdir/lmosdir/directory"
)

const (
	mediaTD         = "application/td+json"
	mediaLDJSON     = "application/ld+json"
	mediaJSON       = "application/json"
	mediaMergePatch = "application/merge-patch+json"

	profileExpanded = "http://www.w3.org/ns/json-ld#expanded"
	mediaExpanded   = mediaLDJSON + `; profile="` + profileExpanded + `"`
)

// tdMediaTypes are accepted for registrations: the TD media type, and the two that
// clients in the wild send for the same documents.
var tdMediaTypes = []string{mediaTD, mediaJSON, mediaLDJSON}

func (s *Server) getThing(c *echo.Context) error {
	id, err := thingID(c)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderVary, "Accept")
	if wantsExpanded(c.Request().Header.Values("Accept")) {
		x, err := s.dir.Expanded(c.Request().Context(), id)
		if err != nil {
			return err
		}
		if x.Expanded == nil {
			return errorf(http.StatusUnprocessableEntity, "the TD cannot be expanded as JSON-LD: %s", x.Problem)
		}
		return writeBody(c, http.StatusOK, mediaExpanded, x.Expanded)
	}
	t, err := s.dir.Get(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return writeBody(c, http.StatusOK, mediaTD, t.Enriched(s.dir.Now()))
}

// wantsExpanded reports whether an Accept header asks for JSON-LD in expanded form, which
// the client says with the profile parameter (JSON-LD 1.1, section 9).
func wantsExpanded(accept []string) bool {
	for _, header := range accept {
		for _, item := range strings.Split(header, ",") {
			media, params, err := mime.ParseMediaType(strings.TrimSpace(item))
			if err != nil || media != mediaLDJSON || params["q"] == "0" {
				continue
			}
			for _, profile := range strings.Fields(params["profile"]) {
				if profile == profileExpanded {
					return true
				}
			}
		}
	}
	return false
}

func (s *Server) putThing(c *echo.Context) error {
	id, err := thingID(c)
	if err != nil {
		return err
	}
	body, err := s.readBody(c, tdMediaTypes...)
	if err != nil {
		return err
	}
	created, err := s.dir.Put(c.Request().Context(), id, body)
	if err != nil {
		return err
	}
	if created {
		return c.NoContent(http.StatusCreated)
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) createAnonymousThing(c *echo.Context) error {
	body, err := s.readBody(c, tdMediaTypes...)
	if err != nil {
		return err
	}
	id, err := s.dir.Create(c.Request().Context(), body)
	if err != nil {
		return err
	}
	// The Location is the id itself, as WoT Discovery specifies, not the URL of the Thing.
	c.Response().Header().Set(echo.HeaderLocation, id)
	return c.NoContent(http.StatusCreated)
}

func (s *Server) patchThing(c *echo.Context) error {
	id, err := thingID(c)
	if err != nil {
		return err
	}
	body, err := s.readBody(c, mediaMergePatch)
	if err != nil {
		return err
	}
	if err := s.dir.Patch(c.Request().Context(), id, body); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) deleteThing(c *echo.Context) error {
	id, err := thingID(c)
	if err != nil {
		return err
	}
	if err := s.dir.Delete(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// thingID takes the id from the escaped request path, so ids holding '/', '%', '#', '?' or
// spaces (percent-encoded by the client) arrive exactly as registered.
func thingID(c *echo.Context) (string, error) {
	// net/http has already checked the escapes when it parsed the request line.
	id, _ := url.PathUnescape(strings.TrimPrefix(c.Request().URL.EscapedPath(), "/things/"))
	if id == "" {
		return "", errorf(http.StatusNotFound, "the path names no Thing id; use /things/{id}")
	}
	return id, nil
}

// readBody reads a request body of one of the accepted media types within the size limit.
// A missing Content-Type is taken as the first accepted type.
func (s *Server) readBody(c *echo.Context, accepted ...string) ([]byte, error) {
	req := c.Request()
	if ct := req.Header.Get(echo.HeaderContentType); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !slices.Contains(accepted, mt) {
			return nil, errorf(http.StatusUnsupportedMediaType, "Content-Type %q is not accepted here; send %s", ct, strings.Join(accepted, " or "))
		}
	}
	if req.ContentLength > s.cfg.MaxBodyBytes {
		return nil, &http.MaxBytesError{Limit: s.cfg.MaxBodyBytes}
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, err
		}
		return nil, errorf(http.StatusBadRequest, "reading the request body failed: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errorf(http.StatusBadRequest, "the request body is empty; send a JSON object")
	}
	return body, nil
}

// listQuery is a parsed GET /things request.
type listQuery struct {
	page       directory.Page
	paged      bool
	collection bool
	format     string
}

var listParameters = []string{"offset", "limit", "format"}

func (s *Server) parseListQuery(c *echo.Context) (listQuery, error) {
	var q listQuery
	params := c.QueryParams()
	if err := checkParameters(params, "/things", listParameters); err != nil {
		return q, err
	}
	var err error
	if q.page.Offset, err = nonNegative(params, "offset", 0); err != nil {
		return q, err
	}
	if params.Has("limit") {
		if q.page.Limit, err = nonNegative(params, "limit", 0); err != nil {
			return q, err
		}
		if q.page.Limit == 0 {
			return q, errorf(http.StatusBadRequest, "limit must be at least 1")
		}
		q.paged = true
	} else if params.Has("offset") {
		q.page.Limit, q.paged = s.cfg.DefaultPageSize, true
	}
	if q.paged && q.page.Limit > s.cfg.MaxPageSize {
		q.page.Limit = s.cfg.MaxPageSize
	}
	switch q.format = params.Get("format"); q.format {
	case "", "array":
	case "collection":
		q.collection = true
	default:
		return q, errorf(http.StatusBadRequest, "format %q is not supported; use array or collection", q.format)
	}
	return q, nil
}

func nonNegative(params url.Values, name string, fallback int) (int, error) {
	if !params.Has(name) {
		return fallback, nil
	}
	n, err := strconv.Atoi(params.Get(name))
	if err != nil || n < 0 {
		return 0, errorf(http.StatusBadRequest, "%s must be a non-negative integer, got %q", name, params.Get(name))
	}
	return n, nil
}

// listURL builds a /things URL with the arguments of q at offset, in a fixed order.
func (s *Server) listURL(q listQuery, offset int) string {
	v := url.Values{}
	v.Set("offset", strconv.Itoa(offset))
	v.Set("limit", strconv.Itoa(q.page.Limit))
	if q.format != "" {
		v.Set("format", q.format)
	}
	return s.basePath + "/things?" + v.Encode()
}

func (s *Server) listThings(c *echo.Context) error {
	q, err := s.parseListQuery(c)
	if err != nil {
		return err
	}
	var membership directory.Membership
	if q.paged || q.collection {
		if membership, err = s.dir.Membership(c.Request().Context()); err != nil {
			return err
		}
	}
	var next string
	if q.paged {
		h := c.Response().Header()
		if q.page.Offset+q.page.Limit < membership.Total {
			next = s.listURL(q, q.page.Offset+q.page.Limit)
			h.Add("Link", "<"+next+`>; rel="next"`)
		}
		h.Add("Link", "<"+s.basePath+`/things>; rel="canonical"; etag="`+membership.Tag+`"`)
	}
	write := func(w io.Writer) error {
		if q.collection {
			if _, err := io.WriteString(w, s.collectionHead(q, membership.Total, next)); err != nil {
				return err
			}
		}
		if err := s.writeArray(c, w, q.page); err != nil {
			return err
		}
		if q.collection {
			_, err = io.WriteString(w, "}")
		}
		return err
	}
	if !q.paged {
		return s.stream(c, write)
	}
	// A page is bounded by the maximum page size, so it is built whole and sent with its
	// length: HEAD then gets the same headers as GET.
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	return writeBody(c, http.StatusOK, mediaLDJSON, buf.Bytes())
}

// collectionHead opens a ThingCollection up to its members array.
func (s *Server) collectionHead(q listQuery, total int, next string) string {
	var b strings.Builder
	b.WriteString(`{"@context":"` + directoryContext + `","@type":"ThingCollection","total":`)
	b.WriteString(strconv.Itoa(total))
	if q.paged {
		b.WriteString(`,"@id":` + jsonString(s.listURL(q, q.page.Offset)))
		if next != "" {
			b.WriteString(`,"next":` + jsonString(next))
		}
	}
	b.WriteString(`,"members":`)
	return b.String()
}

func (s *Server) writeArray(c *echo.Context, w io.Writer, page directory.Page) error {
	retrieved := s.dir.Now()
	first := true
	var scratch []byte
	err := s.dir.List(c.Request().Context(), page, func(t directory.Thing) error {
		scratch = scratch[:0]
		if first {
			scratch = append(scratch, '[')
			first = false
		} else {
			scratch = append(scratch, ',')
		}
		scratch = t.AppendEnriched(scratch, retrieved)
		_, err := w.Write(scratch)
		return err
	})
	if err != nil {
		return err
	}
	if first {
		_, err = io.WriteString(w, "[]")
	} else {
		_, err = io.WriteString(w, "]")
	}
	return err
}

// stream sends a whole listing as it is read, in constant memory. Once the first byte is
// out the status cannot change, so a failure mid-stream aborts the connection: the client
// sees a broken response rather than a short, valid-looking list.
func (s *Server) stream(c *echo.Context, write func(io.Writer) error) error {
	c.Response().Header().Set(echo.HeaderContentType, mediaLDJSON)
	c.Response().WriteHeader(http.StatusOK)
	if c.Request().Method == http.MethodHead {
		return nil
	}
	w := bufio.NewWriterSize(c.Response(), 32<<10)
	if err := write(w); err != nil {
		if c.Request().Context().Err() == nil {
			s.log.Error("listing things failed mid-stream", "error", err)
		}
		panic(http.ErrAbortHandler)
	}
	return w.Flush()
}

// jsonString quotes s as a JSON string, leaving &, < and > as they are: the output is no
// HTML page, and URLs read better with a plain &.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err) // a Go string always encodes
	}
	return strings.TrimSuffix(b.String(), "\n")
}
