package td

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// The directory serves the bytes a Thing registered, not a re-encoding of them, so the few
// members it must add or remove (id, registration, @context) are edited in place. These
// helpers work on documents that already passed Validate; they scan only the top level.

// DiscoveryContext is the JSON-LD context of the WoT Discovery vocabulary (registration,
// ThingDirectory, ThingCollection).
const DiscoveryContext = "https://www.w3.org/2022/wot/discovery"

// legacyDiscoveryContext is the editor's-draft URL older TDs still name.
const legacyDiscoveryContext = "https://w3c.github.io/wot-discovery/context/discovery-context.jsonld"

var errNotObject = errors.New("td: document is not a JSON object")

// member locates one top-level member: doc[start:end] is `"key": value` without the
// separating comma, and doc[valueStart:end] is the value.
type member struct {
	key             string
	start, valStart int
	end             int
}

// topLevelMembers returns the members of the top-level object in document order.
func topLevelMembers(doc []byte) ([]member, int, error) {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return nil, 0, errNotObject
	}
	open := i
	i++
	var members []member
	for {
		i = skipSpace(doc, i)
		if i >= len(doc) {
			return nil, 0, errNotObject
		}
		if doc[i] == '}' {
			return members, open, nil
		}
		if doc[i] == ',' {
			i = skipSpace(doc, i+1)
		}
		start := i
		keyEnd, err := skipString(doc, i)
		if err != nil {
			return nil, 0, err
		}
		key, err := strconv.Unquote(string(doc[start:keyEnd]))
		if err != nil {
			key = string(doc[start+1 : keyEnd-1])
		}
		i = skipSpace(doc, keyEnd)
		if i >= len(doc) || doc[i] != ':' {
			return nil, 0, errNotObject
		}
		valStart := skipSpace(doc, i+1)
		valEnd, err := skipValue(doc, valStart)
		if err != nil {
			return nil, 0, err
		}
		members = append(members, member{key: key, start: start, valStart: valStart, end: valEnd})
		i = valEnd
	}
}

func skipSpace(doc []byte, i int) int {
	for i < len(doc) {
		switch doc[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string starting at doc[i] == '"'.
func skipString(doc []byte, i int) (int, error) {
	if i >= len(doc) || doc[i] != '"' {
		return 0, errNotObject
	}
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errNotObject
}

// skipValue returns the index just past the JSON value starting at doc[i].
func skipValue(doc []byte, i int) (int, error) {
	if i >= len(doc) {
		return 0, errNotObject
	}
	switch doc[i] {
	case '"':
		return skipString(doc, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(doc); j++ {
			switch doc[j] {
			case '"':
				end, err := skipString(doc, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errNotObject
	default:
		j := i
		for j < len(doc) {
			switch doc[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j, nil
			}
			j++
		}
		return j, nil
	}
}

// Prepare turns a registered TD into the bytes the directory stores and serves: the
// `registration` member is removed (the directory owns it), `id` is added as the first
// member when the TD has none, and the discovery context is appended to `@context`.
// Everything else keeps its bytes.
func Prepare(doc []byte, id string) ([]byte, error) {
	members, open, err := topLevelMembers(doc)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(doc)+len(id)+len(DiscoveryContext)+16)
	out = append(out, doc[:open+1]...)
	hasID := false
	for _, m := range members {
		if m.key == "id" {
			hasID = true
		}
	}
	wrote := false
	if !hasID && id != "" {
		quoted, err := json.Marshal(id)
		if err != nil {
			return nil, err
		}
		out = append(out, `"id":`...)
		out = append(out, quoted...)
		wrote = true
	}
	// Between prev (the end of the previous member) and the next member there is only
	// whitespace and a comma; the whitespace is kept so indentation survives.
	prev := open + 1
	for _, m := range members {
		if m.key == "registration" {
			prev = m.end
			continue
		}
		if wrote {
			out = append(out, ',')
		}
		out = append(out, leadingSpace(doc[prev:m.start])...)
		if m.key == "@context" {
			out = append(out, doc[m.start:m.valStart]...)
			out = appendWithDiscoveryContext(out, doc[m.valStart:m.end])
		} else {
			out = append(out, doc[m.start:m.end]...)
		}
		wrote = true
		prev = m.end
	}
	closeAt := bytes.LastIndexByte(doc, '}')
	out = append(out, bytes.TrimLeft(doc[prev:closeAt], ",")...)
	out = append(out, '}')
	return out, nil
}

// leadingSpace returns the whitespace before a member, skipping the comma that separated it
// from the previous one, so re-joined members keep the document's indentation.
func leadingSpace(gap []byte) []byte {
	i := bytes.IndexByte(gap, ',')
	if i >= 0 {
		gap = gap[i+1:]
	}
	return gap[:len(gap)-len(bytes.TrimLeft(gap, " \t\r\n"))]
}

// appendWithDiscoveryContext appends ctx, extended with the discovery context unless it
// already names it. The discovery context must come after the TD context: it uses the
// `xsd` prefix that the TD context defines.
func appendWithDiscoveryContext(out, ctx []byte) []byte {
	if bytes.Contains(ctx, []byte(`"`+DiscoveryContext+`"`)) || bytes.Contains(ctx, []byte(`"`+legacyDiscoveryContext+`"`)) {
		return append(out, ctx...)
	}
	quoted := strconv.Quote(DiscoveryContext)
	if len(ctx) > 0 && ctx[0] == '[' {
		closeAt := bytes.LastIndexByte(ctx, ']')
		body := bytes.TrimRight(ctx[:closeAt], " \t\r\n")
		out = append(out, body...)
		if len(bytes.TrimSpace(body)) > 1 {
			out = append(out, ',')
		}
		out = append(out, quoted...)
		return append(out, ctx[len(body):]...)
	}
	out = append(out, '[')
	out = append(out, ctx...)
	out = append(out, ',')
	out = append(out, quoted...)
	return append(out, ']')
}

// AppendMember returns doc with `"key": value` added as its last member. value must be
// valid JSON. doc must be a non-empty object, which every prepared TD is.
func AppendMember(dst, doc []byte, key string, value []byte) []byte {
	closeAt := bytes.LastIndexByte(doc, '}')
	body := bytes.TrimRight(doc[:closeAt], " \t\r\n")
	dst = append(dst, body...)
	if body[len(body)-1] != '{' {
		dst = append(dst, ',')
	}
	dst = strconv.AppendQuote(dst, key)
	dst = append(dst, ':')
	dst = append(dst, value...)
	return append(dst, doc[len(body):]...)
}

// DecodeJSON parses raw as one JSON value (numbers as json.Number); malformed input gives a
// *SyntaxError with the position of the fault. Duplicate member names are not reported.
func DecodeJSON(raw []byte) (any, error) {
	v, _, err := decode(raw)
	return v, err
}
