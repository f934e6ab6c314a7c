package lmos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	d := decoder{message: &Message{}, problems: problems, seenIDs: map[string]string{}}
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
// walks the tokens itself because encoding/json silently keeps the last of
// duplicate members, and a message whose members repeat is ambiguous. It
// returns nil members when data is not a JSON object.
func readObject(data []byte) ([]Member, problemList) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if start, err := dec.Token(); err != nil || start != json.Delim('{') {
		return nil, problemList{{Description: "must be a JSON object"}}
	}
	members := []Member{}
	var problems problemList
	seen := map[string]int{}
	for dec.More() {
		member, err := readMember(dec)
		if err != nil {
			return nil, problemList{{Description: "is not valid JSON: " + err.Error()}}
		}
		seen[member.Name]++
		if seen[member.Name] > 1 {
			if seen[member.Name] == 2 {
				problems.add(member.Name, "appears more than once")
			}
			continue
		}
		if key := repeatedKey(member.Value); key != "" {
			problems.add(member.Name, fmt.Sprintf("contains member %q more than once", key))
		}
		members = append(members, member)
	}
	if err := readEnd(dec); err != nil {
		return nil, problemList{{Description: "is not valid JSON: " + err.Error()}}
	}
	return members, problems
}

func readMember(dec *json.Decoder) (Member, error) {
	key, err := dec.Token()
	if err != nil {
		return Member{}, err
	}
	name, _ := key.(string) // the decoder yields only strings in key position
	var value json.RawMessage
	if err := dec.Decode(&value); err != nil {
		return Member{}, err
	}
	return Member{Name: name, Value: value}, nil
}

// readEnd consumes the closing brace and refuses anything after it, because a
// WebSocket text frame carries exactly one message.
func readEnd(dec *json.Decoder) error {
	if _, err := dec.Token(); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the end of the object")
	}
	return nil
}

// jsonFrame is an object or array being walked by repeatedKey.
type jsonFrame struct {
	keys    map[string]bool // nil for an array
	wantKey bool            // the next token of an object is a member name
}

// repeatedKey returns a member name repeated within one object nested
// anywhere in value, or "". value must be valid JSON.
func repeatedKey(value json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(value))
	var stack []*jsonFrame
	for {
		token, err := dec.Token()
		if err != nil {
			return ""
		}
		top := topFrame(stack)
		if top != nil && top.wantKey && token != json.Delim('}') {
			key, _ := token.(string)
			if top.keys[key] {
				return key
			}
			top.keys[key], top.wantKey = true, false
			continue
		}
		switch token {
		case json.Delim('{'):
			stack = append(stack, &jsonFrame{keys: map[string]bool{}, wantKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, &jsonFrame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended, so the enclosing object expects a name next.
		if parent := topFrame(stack); parent != nil && parent.keys != nil {
			parent.wantKey = true
		}
	}
}

func topFrame(stack []*jsonFrame) *jsonFrame {
	if len(stack) == 0 {
		return nil
	}
	return stack[len(stack)-1]
}

// decoder fills a Message from the members of an object.
type decoder struct {
	message     *Message
	problems    problemList
	messageType string
	spellingSet bool
	seenIDs     map[string]string // canonical identifier member name → spelling seen
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
	if other, seen := d.seenIDs[name.upper]; seen {
		d.problems.add(member.Name, "repeats "+other+" in another spelling")
		return
	}
	d.seenIDs[name.upper] = member.Name
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
	fields := map[string]field{}
	for _, f := range d.message.Body.fields() {
		fields[f.name] = f
	}
	var extra []Member
	for _, member := range members {
		f, known := fields[member.Name]
		if !known {
			extra = append(extra, member)
			continue
		}
		d.problems.add(member.Name, f.decode(member.Value))
	}
	return extra
}
