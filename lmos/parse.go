package lmos

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Parse decodes and validates one LMOS message. Every error it returns is a
// *ValidationError listing all the problems found.
//
// When data is a JSON object, Parse returns the message decoded as far as
// possible even with an error, so that the caller can address an error reply
// to it (see NewError); it returns a nil message only for data that is not a
// JSON object.
func Parse(data []byte) (*Message, error) {
	members, problems := readObject(data)
	if members == nil {
		return nil, &ValidationError{Problems: problems}
	}
	d := decoder{message: &Message{}, problems: problems}
	d.decode(members)
	for _, p := range d.message.problems() {
		if !d.problems.hasMember(p.Member) {
			d.problems = append(d.problems, p)
		}
	}
	if len(d.problems) > 0 {
		slices.SortStableFunc(d.problems, func(a, b Problem) int { return problemRank(a) - problemRank(b) })
		return d.message, &ValidationError{Problems: d.problems}
	}
	return d.message, nil
}

// problemRank orders problems as Validate does, whole-message problems and
// common members first, because decoding finds some problems before
// validation finds the others.
func problemRank(p Problem) int {
	order := []string{
		"",
		thingIDName.upper, thingIDName.camel,
		messageIDName.upper, messageIDName.camel,
		messageTypeName,
		correlationIDName.upper, correlationIDName.camel,
		traceParentName, traceStateName,
	}
	if i := slices.Index(order, p.Member); i >= 0 {
		return i
	}
	return len(order)
}

// readObject splits a JSON object into its members in document order. It
// finds the members itself because encoding/json silently keeps the last of
// duplicate members, and a message whose members repeat is ambiguous. It
// returns nil members when data is not a JSON object.
func readObject(data []byte) ([]Member, problemList) {
	if validJSON(data) {
		if members, problems, ok := scanObject(data); ok {
			return members, problems
		}
		return nil, problemList{{Description: "must be a JSON object"}}
	}
	if i := skipSpace(data, 0); i >= len(data) || data[i] != '{' {
		return nil, problemList{{Description: "must be a JSON object"}}
	}
	var value any
	err := json.Unmarshal(data, &value)
	return nil, problemList{{Description: "is not valid JSON: " + err.Error()}}
}

// decoder fills a Message from the members of an object.
type decoder struct {
	message     *Message
	problems    problemList
	messageType string
	spellingSet bool
	seenIDs     [3]seenID // the identifier members decoded, at most one of each
}

func (d *decoder) decode(members []Member) {
	var rest []Member
	for _, member := range members {
		if !d.decodeCommon(member) {
			rest = append(rest, member)
		}
	}
	if d.messageType != "" {
		d.message.Body = newBody(Type(d.messageType))
		if d.message.Body == nil {
			d.problems.add(messageTypeName, fmt.Sprintf("has unknown message type %q", d.messageType))
		}
	}
	d.message.Extra = d.decodeBody(rest)
}

// decodeCommon decodes member if it is one every message may have, and
// reports whether it was.
func (d *decoder) decodeCommon(member Member) bool {
	m := d.message
	switch member.Name {
	case thingIDName.upper, thingIDName.camel:
		d.decodeID(member, thingIDName, &m.ThingID)
	case messageIDName.upper, messageIDName.camel:
		d.decodeID(member, messageIDName, &m.MessageID)
	case correlationIDName.upper, correlationIDName.camel:
		d.decodeID(member, correlationIDName, &m.CorrelationID)
	case messageTypeName:
		d.decodeString(member, &d.messageType)
	case traceParentName:
		d.decodeString(member, &m.TraceParent)
	case traceStateName:
		d.decodeString(member, &m.TraceState)
	default:
		return false
	}
	return true
}

// decodeID decodes an identifier member and takes the message's spelling from
// the first one, which is the thing id in every example of the specification.
func (d *decoder) decodeID(member Member, name spelledName, target *string) {
	free := -1
	for i, seen := range d.seenIDs {
		switch {
		case seen.name == name:
			d.problems.add(member.Name, "repeats "+seen.spelled+" in another spelling")
			return
		case seen.spelled == "" && free < 0:
			free = i
		}
	}
	d.seenIDs[free] = seenID{name, member.Name}
	if !d.spellingSet {
		d.spellingSet = true
		if member.Name == name.camel {
			d.message.spelling = SpellingCamelID
		}
	}
	d.decodeString(member, target)
}

func (d *decoder) decodeString(member Member, target *string) {
	text, problem := decodeString(member.Value)
	*target = text
	d.problems.add(member.Name, problem)
}

// decodeBody decodes the type-specific members and returns the others.
func (d *decoder) decodeBody(members []Member) []Member {
	if d.message.Body == nil {
		return members
	}
	fields := d.message.Body.fields()
	var extra []Member
	for _, member := range members {
		i := slices.IndexFunc(fields, func(f field) bool { return f.name == member.Name })
		if i < 0 {
			extra = append(extra, member)
			continue
		}
		d.problems.add(member.Name, fields[i].decode(member.Value))
	}
	return extra
}

// seenID is an identifier member decoded: which one, and how the message spelled it.
type seenID struct {
	name    spelledName
	spelled string
}
