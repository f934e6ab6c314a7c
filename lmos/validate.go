package lmos

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Problem is one reason a message breaks the LMOS protocol.
type Problem struct {
	Member      string // the offending member as the message spelled it; empty for the message as a whole
	Description string // what is wrong, e.g. "must be a version 4 UUID"
}

// ValidationError lists every problem found in a message, so that a single
// LMOS error reply can tell the consumer all it has to fix.
type ValidationError struct {
	Problems []Problem // at least one, in the order the members were checked
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("invalid LMOS message")
	for i, p := range e.Problems {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		if p.Member != "" {
			b.WriteString(p.Member)
			b.WriteString(" ")
		}
		b.WriteString(p.Description)
	}
	return b.String()
}

// problemList collects problems, ignoring empty descriptions so that check
// functions can be called unconditionally.
type problemList []Problem

func (ps *problemList) add(member, description string) {
	if description != "" {
		*ps = append(*ps, Problem{Member: member, Description: description})
	}
}

// hasMember reports whether a problem was already recorded for a member;
// validation skips those so that one mistake is reported once.
func (ps problemList) hasMember(member string) bool {
	for _, p := range ps {
		if p.Member == member {
			return true
		}
	}
	return false
}

// spelledName is a member name written differently by different implementations.
type spelledName struct{ upper, camel string }

var (
	thingIDName       = spelledName{upper: "thingID", camel: "thingId"}
	messageIDName     = spelledName{upper: "messageID", camel: "messageId"}
	correlationIDName = spelledName{upper: "correlationID", camel: "correlationId"}
)

func (n spelledName) in(s Spelling) string {
	if s == SpellingCamelID {
		return n.camel
	}
	return n.upper
}

const (
	messageTypeName = "messageType"
	traceParentName = "traceparent"
	traceStateName  = "tracestate"
)

// Validate reports every way the message breaks the protocol as a
// *ValidationError, or returns nil. Parse runs it; call it on messages built
// in Go before sending them.
func (m *Message) Validate() error {
	if problems := m.problems(); len(problems) > 0 {
		return &ValidationError{Problems: problems}
	}
	return nil
}

func (m *Message) problems() problemList {
	var ps problemList
	ps.add(thingIDName.in(m.spelling), requiredValue(m.ThingID, checkAbsoluteURI))
	ps.add(messageIDName.in(m.spelling), requiredValue(m.MessageID, checkUUIDv4))
	if m.Body == nil {
		ps.add(messageTypeName, "missing")
	}
	ps.add(correlationIDName.in(m.spelling), m.correlationProblem())
	ps.add(traceParentName, optionalValue(m.TraceParent, checkTraceParent))
	ps.add(traceStateName, optionalValue(m.TraceState, checkTraceState))
	if m.Body != nil {
		for _, f := range m.Body.fields() {
			ps.add(f.name, f.validate())
		}
	}
	return append(ps, m.extraProblems()...)
}

// correlationProblem holds events to a stricter rule than other messages: an
// event without a correlation id cannot be matched to its subscription.
func (m *Message) correlationProblem() string {
	if m.Type() == TypeEvent {
		return requiredValue(m.CorrelationID, checkUUIDv4)
	}
	return optionalValue(m.CorrelationID, checkUUIDv4)
}

// extraProblems refuses extra members that would duplicate a member when
// encoded; Parse never produces them, but messages built in Go can.
func (m *Message) extraProblems() problemList {
	if len(m.Extra) == 0 {
		return nil
	}
	taken := map[string]bool{messageTypeName: true, traceParentName: true, traceStateName: true}
	for _, n := range []spelledName{thingIDName, messageIDName, correlationIDName} {
		taken[n.upper], taken[n.camel] = true, true
	}
	if m.Body != nil {
		for _, f := range m.Body.fields() {
			taken[f.name] = true
		}
	}
	var ps problemList
	for _, e := range m.Extra {
		switch {
		case taken[e.Name]:
			ps.add(e.Name, "appears more than once")
		case !validJSON(e.Value):
			ps.add(e.Name, "is not valid JSON")
		}
		taken[e.Name] = true
	}
	return ps
}

func requiredValue(value string, check func(string) string) string {
	if value == "" {
		return "missing"
	}
	return check(value)
}

func optionalValue(value string, check func(string) string) string {
	if value == "" {
		return ""
	}
	return check(value)
}

func checkAbsoluteURI(s string) string {
	if !hasScheme(s) {
		return "must be an absolute URI, starting with a scheme such as urn: or https:"
	}
	return checkURIReference(s)
}

// hasScheme reports whether s starts with an RFC 3986 scheme and its colon.
func hasScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ':':
			return i > 0
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return false
}

func checkURIReference(s string) string {
	if !hasOnlyURICharacters(s) {
		return "must be a URI: it contains characters a URI cannot hold or a malformed percent-encoding"
	}
	if _, err := url.Parse(s); err != nil || strings.Count(s, "#") > 1 {
		return "must be a URI"
	}
	return ""
}

// hasOnlyURICharacters checks the RFC 3986 character repertoire, which
// url.Parse does not: it accepts spaces and other characters a URI cannot hold.
func hasOnlyURICharacters(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || !isHexDigit(s[i+1]) || !isHexDigit(s[i+2]) {
				return false
			}
			i += 2
		case isAlphaNumeric(c) || strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func checkUUIDv4(s string) string {
	// uuid.Parse also accepts braces, a urn:uuid: prefix and missing hyphens;
	// the protocol wants the plain 8-4-4-4-12 form.
	id, err := uuid.Parse(s)
	if err != nil || len(s) != 36 {
		return "must be a UUID in the 8-4-4-4-12 hexadecimal form"
	}
	if id.Version() != 4 || id.Variant() != uuid.RFC4122 {
		return fmt.Sprintf("must be a version 4 UUID, not version %d", id.Version())
	}
	return ""
}

var dateTimePattern = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$`)

// checkDateTime checks the RFC 3339 grammar with a pattern because
// time.Parse alone accepts forms RFC 3339 does not, then checks the ranges
// with time.Parse, which the pattern cannot.
func checkDateTime(s string) string {
	if !dateTimePattern.MatchString(s) {
		return "must be an RFC 3339 date-time such as 2025-01-20T19:00:00Z"
	}
	if _, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s)); err != nil {
		return "must be an RFC 3339 date-time: a field is out of range"
	}
	return ""
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isAlphaNumeric(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
