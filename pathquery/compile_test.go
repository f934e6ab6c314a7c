package pathquery_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/theory/jsonpath"

	"github.com/lmosdir/lmosdir/pathquery"
)

func TestCompileReportsSyntaxErrorsInTermsOfTheUsersQuery(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  string // Error() of the *SyntaxError
	}{
		{``, "invalid JSONPath query: unexpected end of input"},
		{`$.a[`, "invalid JSONPath query: unexpected eof at position 5"},
		{`$ `, "invalid JSONPath query: unexpected blank space at position 2"},
		{`$[?@.a == "x]`, "invalid JSONPath query: unterminated string literal at position 14"},
		{`$[?foo(@.a)]`, "invalid JSONPath query: unknown function foo() at position 4"},
		{`$[?length(@.a)]`, "invalid JSONPath query: missing comparison to function result at position 15"},
		// Positions after renamed functions are the user's, and so are the names.
		{`$[?match(@.title)]`, "invalid JSONPath query: function match() expected 2 arguments but found 1 at position 9"},
		{`$[?search(@.a, 'x') && match(@.b, 'y') && @.c ==]`, "invalid JSONPath query: unexpected ']' at position 49"},
		{`$[?match(@.a, 'x') == true]`, "invalid JSONPath query: unexpected '=' at position 20"},
		{`$[?search(@.a, @..b)]`, "invalid JSONPath query: function search() cannot convert argument 2 to Value at position 10"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			_, err := pathquery.Compile(tc.query, 100)
			var syntaxErr *pathquery.SyntaxError
			if !errors.As(err, &syntaxErr) {
				t.Fatalf("error %v is no *SyntaxError", err)
			}
			if err.Error() != tc.want {
				t.Errorf("error %q, want %q", err, tc.want)
			}
			if syntaxErr.Query != tc.query {
				t.Errorf("SyntaxError.Query = %q", syntaxErr.Query)
			}
			if !errors.Is(err, jsonpath.ErrPathParse) {
				t.Error("the error does not wrap jsonpath.ErrPathParse")
			}
			// Where the library can parse the query itself, it says the same.
			if _, libErr := jsonpath.Parse(tc.query); libErr != nil {
				wantDetail := strings.TrimPrefix(libErr.Error(), "jsonpath: ")
				if detail := strings.TrimPrefix(err.Error(), "invalid JSONPath query: "); detail != wantDetail {
					t.Errorf("detail %q, the library says %q", detail, wantDetail)
				}
			}
		})
	}
}

func TestCompileLimitsLength(t *testing.T) {
	query := `$[?@.title == 'Garnet Travel Agent']`
	_, err := pathquery.Compile(query, len(query)-1)
	if !errors.Is(err, pathquery.ErrTooLong) {
		t.Fatalf("error %v, want ErrTooLong", err)
	}
	if !strings.Contains(err.Error(), "35") {
		t.Errorf("error %q does not state the limit", err)
	}
	for _, maxLen := range []int{len(query), 0} {
		if _, err := pathquery.Compile(query, maxLen); err != nil {
			t.Errorf("Compile with limit %d: %v", maxLen, err)
		}
	}
}

func TestCompileRenamesOnlyFunctionCalls(t *testing.T) {
	tds := []any{
		map[string]any{"match": "search(", "title": "a"},
		map[string]any{"match": "match(", "search": map[string]any{"match": "x"}},
		map[string]any{"title": "match(x)"},
	}
	for _, tc := range []struct {
		query string
		want  []any
	}{
		{`$[?@.match == 'search(']`, tds[:1]},
		{`$[?@["match"] == "match("]`, tds[1:2]},
		{`$[?@.search.match]`, tds[1:2]},
		{`$[?@.search..match]`, tds[1:2]},
		{`$[?match(@.title, 'match\\(.*')]`, tds[2:]},
		{`$[?search(@.title, "search\"|^a$")]`, tds[:1]},
		{`$[?match (@.title, 'a')]`, nil}, // a blank before ( is an error, not a call
	} {
		t.Run(tc.query, func(t *testing.T) {
			q, err := pathquery.Compile(tc.query, 0)
			if tc.want == nil {
				if err == nil {
					t.Fatal("compiled")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if q.String() != tc.query {
				t.Errorf("String() = %q", q.String())
			}
			compareNodes(t, q.Select(tds), tc.want, false)
			if lib, panicked := librarySelect(tc.query, tds); !panicked {
				compareNodes(t, q.Select(tds), lib, false)
			}
		})
	}
}
