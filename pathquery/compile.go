package pathquery

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/theory/jsonpath"
	"github.com/theory/jsonpath/registry"
	"github.com/theory/jsonpath/spec"
)

// ErrTooLong is returned, wrapped with the limit, by Compile for a query longer than allowed.
var ErrTooLong = errors.New("JSONPath query too long")

// SyntaxError is a query the JSONPath parser rejects. Err wraps jsonpath.ErrPathParse.
type SyntaxError struct {
	Query string
	Err   error
}

func (e *SyntaxError) Error() string {
	return "invalid JSONPath query: " + strings.TrimPrefix(e.Err.Error(), jsonpath.ErrPathParse.Error()+": ")
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// Query is a compiled JSONPath query. It is safe for concurrent use.
type Query struct {
	text   string
	path   *spec.PathQuery
	passes []Pass
	// rest is the query after its first segment, relative: what a pass applies to a TD.
	rest *spec.PathQuery
}

// Compile parses query, which may be at most maxLen bytes long (maxLen <= 0: any length).
func Compile(query string, maxLen int) (*Query, error) {
	if maxLen > 0 && len(query) > maxLen {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLong, len(query), maxLen)
	}
	return compile(query, newRegistry())
}

// compile parses query with the functions of reg, which must hold the guarded functions
// under their prefixed names.
func compile(query string, reg *registry.Registry) (*Query, error) {
	s := scanQuery(query)
	parsed, err := jsonpath.NewParser(jsonpath.WithRegistry(reg)).Parse(s.parsed)
	if err != nil {
		return nil, &SyntaxError{Query: query, Err: s.userError(err)}
	}
	path := parsed.Query()
	q := &Query{text: query, path: path, passes: plan(path, s.refersToRoot)}
	if segments := path.Segments(); len(segments) > 0 {
		q.rest = spec.Query(false, segments[1:]...)
	}
	return q, nil
}

// String returns the query as given to Compile.
func (q *Query) String() string { return q.text }

// Passes returns the passes over the TDs that Evaluate makes, in order.
func (q *Query) Passes() []Pass { return append([]Pass(nil), q.passes...) }

// Select evaluates the query on root, held in memory, with the same functions as Evaluate.
// Unlike Evaluate it does not recover from a panic of the library.
func (q *Query) Select(root any) []any { return q.path.Select(nil, root) }

// parserPosition is how the library ends its messages: a 1-based byte offset.
var parserPosition = regexp.MustCompile(` at position (\d+)$`)

// userError restates a parser error about the parsed text in terms of the user's query:
// positions shifted back over the inserted prefixes, and function names as written.
func (s scan) userError(err error) error {
	detail := strings.TrimPrefix(err.Error(), jsonpath.ErrPathParse.Error()+": ")
	if m := parserPosition.FindStringSubmatchIndex(detail); m != nil {
		// The pattern only matches digits, and the parser's positions fit in an int.
		pos, _ := strconv.Atoi(detail[m[2]:m[3]])
		detail = detail[:m[2]] + strconv.Itoa(s.userOffset(pos-1)+1)
	}
	for _, name := range guardedFuncs {
		detail = strings.ReplaceAll(detail, funcPrefix+name+"(", name+"(")
	}
	return fmt.Errorf("%w: %s", jsonpath.ErrPathParse, detail)
}
