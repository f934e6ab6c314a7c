package lmos

import (
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// ObjectMembers splits a JSON object into its members in document order, repeated names
// included, the values as written; it reports false for anything but one JSON object.
func ObjectMembers(data []byte) ([]Member, bool) {
	if !validJSON(data) {
		return nil, false
	}
	scanned, ok := scanMembers(data)
	if !ok {
		return nil, false
	}
	members := make([]Member, len(scanned))
	for i, s := range scanned {
		members[i] = s.Member
	}
	return members, true
}

// scannedMember is a member and a name repeated within one object nested in its value.
type scannedMember struct {
	Member
	repeatedInside string
}

// scanObject is readObject for data that validJSON accepted: the members, the first of
// each name, and the problems of repeated names.
func scanObject(data []byte) (members []Member, problems problemList, ok bool) {
	scanned, ok := scanMembers(data)
	if !ok {
		return nil, nil, false
	}
	members = make([]Member, 0, len(scanned))
	var seen, repeated nameSet
	for _, s := range scanned {
		switch {
		case seen.add(s.Name):
			if s.repeatedInside != "" {
				problems.add(s.Name, fmt.Sprintf("contains member %q more than once", s.repeatedInside))
			}
			members = append(members, s.Member)
		case repeated.add(s.Name):
			problems.add(s.Name, "appears more than once")
		}
	}
	return members, problems, true
}

// scanMembers finds the members of valid JSON data by skipping over the bytes, many times
// faster than walking encoding/json's tokens, which matters on the gateway's path where
// every message is parsed. It reports false when data is not an object.
func scanMembers(data []byte) ([]scannedMember, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	members := make([]scannedMember, 0, 8)
	i = skipSpace(data, i+1)
	if data[i] == '}' {
		return members, true
	}
	for {
		nameEnd := skipString(data, i)
		name := keyName(data[i:nameEnd])
		i = skipSpace(data, nameEnd)
		valueStart := skipSpace(data, i+1) // past the colon
		valueEnd, repeated := skipValue(data, valueStart)
		members = append(members, scannedMember{Member{Name: name, Value: data[valueStart:valueEnd:valueEnd]}, repeated})
		i = skipSpace(data, valueEnd)
		if data[i] == '}' {
			return members, true
		}
		i = skipSpace(data, i+1) // past the comma
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset just past the string that starts at i.
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// keyName is the text of a quoted name; only names with escapes, or with bytes that are
// not UTF-8 (which decoding replaces, as encoding/json does), need decoding.
func keyName(quoted []byte) string {
	if !slices.Contains(quoted, '\\') && utf8.Valid(quoted) {
		inner := quoted[1 : len(quoted)-1]
		if name, ok := memberNames[string(inner)]; ok {
			return name
		}
		return string(inner)
	}
	var name string
	_ = json.Unmarshal(quoted, &name) // valid: validJSON accepted the whole
	return name
}

// memberNames holds the names of the protocol's members, so that scanning a message takes
// them from here instead of allocating each one again.
var memberNames = func() map[string]string {
	names := map[string]string{}
	add := func(name string) { names[name] = name }
	for _, n := range []spelledName{thingIDName, messageIDName, correlationIDName} {
		add(n.upper)
		add(n.camel)
	}
	add(messageTypeName)
	add(traceParentName)
	add(traceStateName)
	for _, t := range []Type{
		TypeInvokeAction, TypeCancelAction, TypeQueryAction, TypeActionStatus,
		TypeSubscribeEvent, TypeUnsubscribeEvent, TypeSubscribeAllEvents, TypeUnsubscribeAllEvents,
		TypeReadProperty, TypePropertyReading, TypePropertyReadings, TypeWriteProperty,
		TypeWriteMultipleProperties, TypeObserveProperty, TypeUnobserveProperty, TypeEvent, TypeError,
	} {
		for _, f := range newBody(t).fields() {
			add(f.name)
		}
	}
	return names
}()

// skipValue returns the offset just past the value that starts at i, and a member name
// that repeats within one object nested in it, or "".
func skipValue(data []byte, i int) (end int, repeated string) {
	switch data[i] {
	case '"':
		return skipString(data, i), ""
	case '{':
		var names nameSet
		i = skipSpace(data, i+1)
		if data[i] == '}' {
			return i + 1, ""
		}
		for {
			nameEnd := skipString(data, i)
			name := keyName(data[i:nameEnd])
			if !names.add(name) && repeated == "" {
				repeated = name
			}
			i = skipSpace(data, nameEnd)
			var inner string
			i, inner = skipValue(data, skipSpace(data, i+1))
			if repeated == "" {
				repeated = inner
			}
			i = skipSpace(data, i)
			if data[i] == '}' {
				return i + 1, repeated
			}
			i = skipSpace(data, i+1)
		}
	case '[':
		i = skipSpace(data, i+1)
		if data[i] == ']' {
			return i + 1, ""
		}
		for {
			var inner string
			i, inner = skipValue(data, i)
			if repeated == "" {
				repeated = inner
			}
			i = skipSpace(data, i)
			if data[i] == ']' {
				return i + 1, repeated
			}
			i = skipSpace(data, i+1)
		}
	default: // a number, true, false or null
		for i < len(data) && !isDelimiter(data[i]) {
			i++
		}
		return i, ""
	}
}

func isDelimiter(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// nameSet holds the names of one object: a short list while it is small, as most are, and
// a map beyond, so that an object with many members costs no more than linear time.
type nameSet struct {
	list []string
	set  map[string]struct{}
}

const nameListMax = 16

// add reports whether name was not in the set yet.
func (s *nameSet) add(name string) bool {
	if s.set != nil {
		if _, ok := s.set[name]; ok {
			return false
		}
		s.set[name] = struct{}{}
		return true
	}
	if slices.Contains(s.list, name) {
		return false
	}
	if len(s.list) < nameListMax {
		s.list = append(s.list, name)
		return true
	}
	s.set = make(map[string]struct{}, 2*nameListMax)
	for _, n := range s.list {
		s.set[n] = struct{}{}
	}
	s.set[name] = struct{}{}
	return true
}
