package directory

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lmosdir/lmosdir/td"
)

// SearchLimits bound what one search may cost. Zero fields take the defaults.
type SearchLimits struct {
	// Timeout is the longest a /search or JSONPath query may run (default 5s).
	Timeout time.Duration
	// DefaultLimit and MaxLimit are the page sizes of /search (defaults 20 and 100).
	DefaultLimit, MaxLimit int
	// MaxTextBytes bounds the full-text query (default 1000).
	MaxTextBytes int
	// MaxQueryBytes bounds a JSONPath query (default 4096).
	MaxQueryBytes int
	// MaxResultBytes bounds the JSON answer of a JSONPath query (default 16 MiB).
	MaxResultBytes int
	// MaxWholeRoot is how many TDs a JSONPath query that must see all TDs at once (one
	// that refers to the root $ inside a filter) may load (default 10000).
	MaxWholeRoot int
}

func (l SearchLimits) withDefaults() SearchLimits {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if l.Timeout <= 0 {
		l.Timeout = 5 * time.Second
	}
	set(&l.DefaultLimit, 20)
	set(&l.MaxLimit, 100)
	set(&l.MaxTextBytes, 1000)
	set(&l.MaxQueryBytes, 4096)
	set(&l.MaxResultBytes, 16<<20)
	set(&l.MaxWholeRoot, 10000)
	l.DefaultLimit = min(l.DefaultLimit, l.MaxLimit)
	return l
}

// Limits returns the search limits in force.
func (s *Service) Limits() SearchLimits { return s.limits }

// LimitError is a query the directory refuses to finish because it would cost more than
// the configured limits. The client can narrow the query; repeating it will not help.
type LimitError struct{ Detail string }

func (e *LimitError) Error() string { return e.Detail }

// Kinds are the values of Index.Kind and of the kind filter.
var Kinds = []string{td.KindAgent, td.KindTool, td.KindDirectory, td.KindLink, td.KindThing}

// SearchPage is a page of search results with the cursor of the next page ("" if none).
type SearchPage struct {
	SearchResult
	Next string
}

// Search runs q, continuing after cursor unless it is empty. q.After is ignored; a zero
// q.Limit takes the default page size.
func (s *Service) Search(ctx context.Context, q SearchQuery, cursor string) (SearchPage, error) {
	if err := s.checkSearch(&q); err != nil {
		return SearchPage{}, err
	}
	fingerprint := q.fingerprint()
	q.After = nil
	if cursor != "" {
		after, err := decodeCursor(cursor, fingerprint)
		if err != nil {
			return SearchPage{}, err
		}
		q.After = &after
	}
	ctx, cancel := context.WithTimeout(ctx, s.limits.Timeout)
	defer cancel()
	res, err := s.store.Search(ctx, q, s.Now())
	if err != nil {
		return SearchPage{}, s.timeoutError(ctx, err)
	}
	page := SearchPage{SearchResult: res}
	if res.More && len(res.Hits) > 0 {
		page.Next = encodeCursor(res.Hits[len(res.Hits)-1].Cursor(), fingerprint)
	}
	return page, nil
}

func (s *Service) checkSearch(q *SearchQuery) error {
	switch {
	case q.Limit == 0:
		q.Limit = s.limits.DefaultLimit
	case q.Limit < 0 || q.Limit > s.limits.MaxLimit:
		return invalidf("limit", "limit must be between 1 and %d, got %d", s.limits.MaxLimit, q.Limit)
	}
	if len(q.Text) > s.limits.MaxTextBytes {
		return invalidf("q", "the text query is %d bytes long; the limit is %d", len(q.Text), s.limits.MaxTextBytes)
	}
	if q.Kind != "" && !slices.Contains(Kinds, q.Kind) {
		return invalidf("kind", "unknown kind %q: use one of %s", q.Kind, strings.Join(Kinds, ", "))
	}
	for _, f := range q.fields() {
		if !utf8.ValidString(f.value) || strings.ContainsRune(f.value, 0) {
			return invalidf(f.name, "%s must be UTF-8 text without NUL characters", f.name)
		}
	}
	return nil
}

type searchField struct{ name, value string }

// fields are the parameters that choose a query's results, by their /search names, in a
// fixed order.
func (q *SearchQuery) fields() [9]searchField {
	return [9]searchField{
		{"q", q.Text}, {"kind", q.Kind}, {"type", q.Type}, {"vendor", q.Vendor}, {"action", q.Action},
		{"property", q.Property}, {"event", q.Event}, {"capability", q.Capability}, {"protocol", q.Protocol},
	}
}

// fingerprint identifies the set and order of results a query has, so that a cursor is
// only used with the query it came from. The page size may change between pages.
func (q *SearchQuery) fingerprint() [8]byte {
	h := sha256.New()
	for _, f := range q.fields() {
		fmt.Fprintf(h, "%d:%s,", len(f.value), f.value)
	}
	return [8]byte(h.Sum(nil))
}

// A cursor is the query's fingerprint, the score's IEEE 754 bits and the id, in URL-safe
// base64: opaque to clients, and exact, since the store compares the very score it gave.
func encodeCursor(c SearchCursor, fingerprint [8]byte) string {
	b := make([]byte, 0, 16+len(c.ID))
	b = append(b, fingerprint[:]...)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(c.Score))
	b = append(b, c.ID...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, fingerprint [8]byte) (SearchCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 16 || !utf8.Valid(b[16:]) {
		return SearchCursor{}, invalidf("cursor", "the cursor is not one this directory gave out; use the next link of the previous page")
	}
	if [8]byte(b[:8]) != fingerprint {
		return SearchCursor{}, invalidf("cursor", "the cursor belongs to a search with other parameters; keep q and the filters of the page it came from")
	}
	return SearchCursor{Score: math.Float64frombits(binary.BigEndian.Uint64(b[8:16])), ID: string(b[16:])}, nil
}

// timeoutError turns a store error caused by the query's deadline into a LimitError.
func (s *Service) timeoutError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &LimitError{Detail: fmt.Sprintf("the query took longer than this directory's limit of %s; narrow it", s.limits.Timeout)}
	}
	return err
}
