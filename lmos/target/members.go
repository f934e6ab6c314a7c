package target

import (
	"bytes"
	"encoding/json"
)

// member is one member of a JSON object, sliced out of the bytes of the object.
type member struct {
	name  string
	space []byte // the whitespace just before the name, so a rebuilt object keeps its layout
	text  []byte // the member as written: name, colon and value
	value []byte
	end   int // the offset in the object just past the value
}

// objectMembers splits the JSON object raw into its members in document order; the byte
// slices alias raw. ok is false when raw is not an object.
//
// raw is expected to be well-formed JSON: Parse has decoded the document before, and the
// lmos parser has checked the values of a message. So the members are found by skipping
// strings and brackets, which is many times faster than encoding/json's Decoder; on
// malformed input the members may be cut wrongly, but the scan ends and does not panic.
func objectMembers(raw []byte) (members []member, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	afterComma := i + 1 // where the whitespace before the first name may begin
	i = skipSpace(raw, afterComma)
	if i < len(raw) && raw[i] == '}' {
		return nil, true
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, false
		}
		nameStart := i
		nameEnd, ok := skipString(raw, nameStart)
		if !ok {
			return nil, false
		}
		name, ok := memberName(raw[nameStart:nameEnd])
		if !ok {
			return nil, false
		}
		i = skipSpace(raw, nameEnd)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		valueStart := skipSpace(raw, i+1)
		valueEnd, ok := skipValue(raw, valueStart)
		if !ok {
			return nil, false
		}
		spaceStart := nameStart
		for spaceStart > afterComma && isSpace(raw[spaceStart-1]) {
			spaceStart--
		}
		members = append(members, member{
			name:  name,
			space: raw[spaceStart:nameStart],
			text:  raw[nameStart:valueEnd],
			value: raw[valueStart:valueEnd],
			end:   valueEnd,
		})
		i = skipSpace(raw, valueEnd)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			afterComma = i + 1
			i = skipSpace(raw, i+1)
		case '}':
			return members, true
		default:
			return nil, false
		}
	}
}

// memberName decodes a quoted member name, slicing it when it has no escapes, as nearly
// all names do.
func memberName(quoted []byte) (string, bool) {
	if !bytes.ContainsRune(quoted, '\\') {
		return string(quoted[1 : len(quoted)-1]), true
	}
	var name string
	if err := json.Unmarshal(quoted, &name); err != nil {
		return "", false
	}
	return name, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && isSpace(raw[i]) {
		i++
	}
	return i
}

// skipString returns the offset just past the string that starts at raw[i].
func skipString(raw []byte, i int) (int, bool) {
	for i++; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// skipValue returns the offset just past the value that starts at raw[i].
func skipValue(raw []byte, i int) (int, bool) {
	if i >= len(raw) {
		return 0, false
	}
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		depth := 0
		for i < len(raw) {
			switch raw[i] {
			case '"':
				end, ok := skipString(raw, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	}
	// A number, true, false or null: it ends where the enclosing structure goes on.
	start := i
	for i < len(raw) && !isSpace(raw[i]) && raw[i] != ',' && raw[i] != '}' && raw[i] != ']' {
		i++
	}
	return i, i > start
}

// withoutMembers returns the object raw, whose members are members, without the members
// named in drop. The rest stays as written, byte for byte; raw itself is returned when
// nothing is dropped.
func withoutMembers(raw []byte, members []member, drop func(name string) bool) []byte {
	kept := 0
	for _, m := range members {
		if !drop(m.name) {
			kept++
		}
	}
	if kept == len(members) {
		return raw
	}
	out := make([]byte, 0, len(raw))
	out = append(out, '{')
	written := false
	for _, m := range members {
		if drop(m.name) {
			continue
		}
		if written {
			out = append(out, ',')
		}
		out = append(out, m.space...)
		out = append(out, m.text...)
		written = true
	}
	// What follows the last member: the whitespace before the closing brace.
	tail := raw[members[len(members)-1].end:]
	if !written {
		tail = bytes.TrimLeft(tail, " \t\r\n")
	}
	return append(out, tail...)
}
