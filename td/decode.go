package td

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// SyntaxError reports malformed JSON with the position of the error.
type SyntaxError struct {
	Offset int64 // byte offset (0-based) where the error was detected
	Line   int   // 1-based
	Column int   // 1-based, in bytes
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at line %d, column %d (byte %d): %s", e.Line, e.Column, e.Offset, e.Msg)
}

// maxDepth bounds nesting so a hostile document of a million '[' cannot make the
// decoder and the schema validator recurse without limit; real TDs nest a few
// dozen levels at most.
const maxDepth = 1000

// decode parses raw as one JSON value. Objects become map[string]any, arrays
// []any and numbers json.Number, like encoding/json with UseNumber. Unlike
// encoding/json it notices duplicate member names (which JSON decoders
// silently resolve to the last one, hiding what the author wrote) and returns
// them as problems; the last occurrence is the one kept in the value.
func decode(raw []byte) (any, []Problem, error) {
	s := scanner{data: raw}
	if len(raw) >= 3 && raw[0] == 0xEF && raw[1] == 0xBB && raw[2] == 0xBF {
		return nil, nil, s.errorAt(0, "byte order mark (U+FEFF) at the start of the document; save it as UTF-8 without a BOM")
	}
	v, err := s.value()
	if err != nil {
		return nil, nil, err
	}
	s.skipSpace()
	if s.pos < len(s.data) {
		return nil, nil, s.unexpected("after top-level value")
	}
	return v, s.dups, nil
}

// segment is one step of the path from the root to the value being decoded;
// key is used for object members, index (when key is unset) for array items.
type segment struct {
	key   string
	index int
	isKey bool
}

type scanner struct {
	data  []byte
	pos   int
	depth int
	path  []segment
	dups  []Problem
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) value() (any, error) {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return nil, s.eof()
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		return s.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	case c == 't':
		return true, s.literal("true")
	case c == 'f':
		return false, s.literal("false")
	case c == 'n':
		return nil, s.literal("null")
	default:
		return nil, s.unexpected("looking for beginning of value")
	}
}

func (s *scanner) enter() error {
	s.depth++
	if s.depth > maxDepth {
		return s.errorAt(s.pos, fmt.Sprintf("exceeded max depth of %d nested objects and arrays", maxDepth))
	}
	return nil
}

func (s *scanner) object() (map[string]any, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	s.pos++ // '{'
	m := make(map[string]any)
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		s.depth--
		return m, nil
	}
	for {
		s.skipSpace()
		if s.pos >= len(s.data) {
			return nil, s.eof()
		}
		if s.data[s.pos] != '"' {
			return nil, s.unexpected("looking for beginning of object key string")
		}
		key, err := s.str()
		if err != nil {
			return nil, err
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return nil, s.eof()
		}
		if s.data[s.pos] != ':' {
			return nil, s.unexpected("after object key")
		}
		s.pos++
		s.path = append(s.path, segment{key: key, isKey: true})
		v, err := s.value()
		s.path = s.path[:len(s.path)-1]
		if err != nil {
			return nil, err
		}
		if _, dup := m[key]; dup {
			s.duplicate(key)
		}
		m[key] = v
		s.skipSpace()
		if s.pos >= len(s.data) {
			return nil, s.eof()
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			s.depth--
			return m, nil
		default:
			return nil, s.unexpected("after object key:value pair")
		}
	}
}

func (s *scanner) array() ([]any, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	s.pos++ // '['
	a := []any{}
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		s.depth--
		return a, nil
	}
	for {
		s.path = append(s.path, segment{index: len(a)})
		v, err := s.value()
		s.path = s.path[:len(s.path)-1]
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		s.skipSpace()
		if s.pos >= len(s.data) {
			return nil, s.eof()
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			s.depth--
			return a, nil
		default:
			return nil, s.unexpected("after array element")
		}
	}
}

// duplicate records key as repeated in the object at the current path, once
// per object and key however often it repeats.
func (s *scanner) duplicate(key string) {
	p := Problem{
		Field:       s.pathString(),
		Description: fmt.Sprintf("duplicate member name %q: each name may appear only once in an object; remove or rename the repeated %q", key, key),
	}
	for _, q := range s.dups {
		if q == p {
			return
		}
	}
	s.dups = append(s.dups, p)
}

func (s *scanner) pathString() string {
	var b strings.Builder
	b.WriteByte('$')
	for _, seg := range s.path {
		if seg.isKey {
			writeKey(&b, seg.key)
		} else {
			writeIndex(&b, seg.index)
		}
	}
	return b.String()
}

// str decodes the string starting at s.pos. The common case, a string with no
// escapes, is sliced straight out of the input.
func (s *scanner) str() (string, error) {
	start := s.pos + 1
	for i := start; i < len(s.data); {
		c := s.data[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return string(s.data[start:i]), nil
		case c == '\\':
			return s.strEscaped(start, i)
		case c < 0x20:
			s.pos = i
			return "", s.unexpected("in string literal")
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(s.data[i:])
			if r == utf8.RuneError && size == 1 {
				return "", s.errorAt(i, "invalid UTF-8 in string")
			}
			i += size
		}
	}
	return "", s.eofAt(len(s.data))
}

func (s *scanner) strEscaped(start, i int) (string, error) {
	buf := make([]byte, 0, i-start+16)
	buf = append(buf, s.data[start:i]...)
	for i < len(s.data) {
		c := s.data[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return string(buf), nil
		case c == '\\':
			i++
			if i >= len(s.data) {
				return "", s.eofAt(i)
			}
			switch e := s.data[i]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
				i++
			case 'b':
				buf = append(buf, '\b')
				i++
			case 'f':
				buf = append(buf, '\f')
				i++
			case 'n':
				buf = append(buf, '\n')
				i++
			case 'r':
				buf = append(buf, '\r')
				i++
			case 't':
				buf = append(buf, '\t')
				i++
			case 'u':
				r, next, err := s.hex4(i + 1)
				if err != nil {
					return "", err
				}
				i = next
				if utf16.IsSurrogate(r) {
					// A high surrogate needs its low half; a lone one becomes
					// U+FFFD, as encoding/json does.
					r2 := utf8.RuneError
					if i+1 < len(s.data) && s.data[i] == '\\' && s.data[i+1] == 'u' {
						low, after, err := s.hex4(i + 2)
						if err != nil {
							return "", err
						}
						if d := utf16.DecodeRune(r, low); d != utf8.RuneError {
							r2, i = d, after
						}
					}
					r = r2
				}
				buf = utf8.AppendRune(buf, r)
			default:
				s.pos = i
				return "", s.unexpected("in string escape code")
			}
		case c < 0x20:
			s.pos = i
			return "", s.unexpected("in string literal")
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRune(s.data[i:])
			if r == utf8.RuneError && size == 1 {
				return "", s.errorAt(i, "invalid UTF-8 in string")
			}
			buf = append(buf, s.data[i:i+size]...)
			i += size
		}
	}
	return "", s.eofAt(len(s.data))
}

// hex4 reads the four hex digits of a \u escape starting at i.
func (s *scanner) hex4(i int) (rune, int, error) {
	var r rune
	for j := i; j < i+4; j++ {
		if j >= len(s.data) {
			return 0, 0, s.eofAt(j)
		}
		c := s.data[j]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			s.pos = j
			return 0, 0, s.unexpected(`in \u hexadecimal character escape`)
		}
	}
	return r, i + 4, nil
}

// number checks the JSON number grammar and keeps the spelling as written.
func (s *scanner) number() (json.Number, error) {
	start := s.pos
	if s.data[s.pos] == '-' {
		s.pos++
	}
	if s.pos >= len(s.data) {
		return "", s.eof()
	}
	switch c := s.data[s.pos]; {
	case c == '0':
		s.pos++
	case c >= '1' && c <= '9':
		s.digits()
	default:
		return "", s.unexpected("in numeric literal")
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if err := s.requireDigit(); err != nil {
			return "", err
		}
		s.digits()
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if err := s.requireDigit(); err != nil {
			return "", err
		}
		s.digits()
	}
	return json.Number(s.data[start:s.pos]), nil
}

func (s *scanner) digits() {
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
	}
}

func (s *scanner) requireDigit() error {
	if s.pos >= len(s.data) {
		return s.eof()
	}
	if c := s.data[s.pos]; c < '0' || c > '9' {
		return s.unexpected("in numeric literal")
	}
	return nil
}

func (s *scanner) literal(word string) error {
	for i := 0; i < len(word); i++ {
		if s.pos >= len(s.data) {
			return s.eof()
		}
		if s.data[s.pos] != word[i] {
			return s.unexpected(fmt.Sprintf("in literal %s (expecting %s)", word, quoteByte(word[i])))
		}
		s.pos++
	}
	return nil
}

func (s *scanner) eof() error { return s.eofAt(s.pos) }

func (s *scanner) eofAt(offset int) error {
	return s.errorAt(offset, "unexpected end of JSON input")
}

// unexpected reports the character at s.pos, spelled as encoding/json does so
// the messages read the same as those of other Go tools.
func (s *scanner) unexpected(context string) error {
	c := s.data[s.pos]
	if c >= utf8.RuneSelf {
		r, size := utf8.DecodeRune(s.data[s.pos:])
		if r == utf8.RuneError && size == 1 {
			return s.errorAt(s.pos, fmt.Sprintf("invalid UTF-8 byte 0x%02X %s", c, context))
		}
		q := strconv.QuoteRune(r)
		return s.errorAt(s.pos, fmt.Sprintf("invalid character '%s' %s", q[1:len(q)-1], context))
	}
	return s.errorAt(s.pos, fmt.Sprintf("invalid character %s %s", quoteByte(c), context))
}

func quoteByte(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}

func (s *scanner) errorAt(offset int, msg string) error {
	line, col := 1, 1
	for _, c := range s.data[:offset] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &SyntaxError{Offset: int64(offset), Line: line, Column: col, Msg: msg}
}

// writeKey appends one member step in the Problem.Field notation: .name for
// identifier-like names, ['name'] for anything else.
func writeKey(b *strings.Builder, key string) {
	if isIdentifier(key) {
		b.WriteByte('.')
		b.WriteString(key)
		return
	}
	b.WriteString("['")
	for i := 0; i < len(key); i++ {
		if key[i] == '\'' || key[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(key[i])
	}
	b.WriteString("']")
}

func writeIndex(b *strings.Builder, i int) {
	b.WriteByte('[')
	b.WriteString(strconv.Itoa(i))
	b.WriteByte(']')
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}
