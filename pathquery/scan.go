package pathquery

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// funcPrefix renames match and search in the parsed text: the library's registry refuses to
// replace a built-in, so the safe versions are registered under these longer names.
const funcPrefix = "lmosdir_"

// guardedFuncs are the built-ins whose library versions panic when an argument is Nothing.
var guardedFuncs = [...]string{"match", "search"}

// scan is what one pass over the user's query text found.
type scan struct {
	// parsed is the query handed to the parser: the user's, with each call of a guarded
	// function renamed.
	parsed string
	// renamedAt holds the offsets in the user's query of the renamed function names, in
	// increasing order, to map parser positions back.
	renamedAt []int
	// refersToRoot is set when a $ other than the leading one occurs outside string
	// literals. $ can stand nowhere else but for the root in a filter, so the query then
	// needs the whole root; in an invalid query the parser reports the error anyway.
	refersToRoot bool
}

// scanQuery tokenizes query as far as the rewrite needs: string literals, which it copies
// untouched, and names. It reads the text the way the library's lexer does, which decides
// every token by its first character alone, so both agree on where literals are.
func scanQuery(query string) scan {
	var out strings.Builder
	out.Grow(len(query))
	var s scan
	for i := 0; i < len(query); {
		switch query[i] {
		case '\'', '"':
			end := literalEnd(query, i)
			out.WriteString(query[i:end])
			i = end
		case '$':
			s.refersToRoot = s.refersToRoot || i > 0
			out.WriteByte('$')
			i++
		default:
			r, width := utf8.DecodeRuneInString(query[i:])
			if !isNameRune(r) {
				out.WriteString(query[i : i+width])
				i += width
				continue
			}
			end := nameEnd(query, i)
			if isGuardedCall(query, i, end) {
				out.WriteString(funcPrefix)
				s.renamedAt = append(s.renamedAt, i)
			}
			out.WriteString(query[i:end])
			i = end
		}
	}
	s.parsed = out.String()
	return s
}

// literalEnd returns the offset just past the string literal opening at start, or the end
// of the query when the literal is unterminated.
func literalEnd(query string, start int) int {
	quote := query[start]
	for i := start + 1; i < len(query); i++ {
		switch query[i] {
		case '\\':
			i++ // whatever follows is escaped; an invalid escape is the parser's to report
		case quote:
			return i + 1
		}
	}
	return len(query)
}

// nameEnd returns the offset just past the run of name characters starting at start. A run
// starting with a digit is (part of) a number.
func nameEnd(query string, start int) int {
	i := start
	for i < len(query) {
		r, width := utf8.DecodeRuneInString(query[i:])
		if !isNameRune(r) {
			break
		}
		i += width
	}
	return i
}

// isGuardedCall tells whether the name query[start:end] calls match or search: not a
// member name (after . or ..), not glued to @ or $, and followed by "(", possibly after
// blank space, which the parser accepts between a function name and its arguments in some
// positions.
func isGuardedCall(query string, start, end int) bool {
	if !slices.Contains(guardedFuncs[:], query[start:end]) {
		return false
	}
	if start > 0 && strings.IndexByte(".@$", query[start-1]) >= 0 {
		return false
	}
	rest := strings.TrimLeft(query[end:], " \t\n\r")
	return strings.HasPrefix(rest, "(")
}

// isNameRune reports the characters RFC 9535 allows in member-name shorthands and function
// names (name-char); digits may not start either, which callers see from the run they get.
func isNameRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' ||
		0x80 <= r && r <= 0xD7FF || 0xE000 <= r && r <= 0x10FFFF
}

// userOffset maps a byte offset in the parsed query to the user's query. An offset inside
// an inserted prefix maps to the name it was inserted before.
func (s scan) userOffset(parsed int) int {
	shift := 0
	for k, at := range s.renamedAt {
		prefixStart := at + k*len(funcPrefix)
		if parsed < prefixStart {
			break
		}
		if parsed < prefixStart+len(funcPrefix) {
			return at
		}
		shift += len(funcPrefix)
	}
	return parsed - shift
}
