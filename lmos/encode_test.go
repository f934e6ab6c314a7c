package lmos_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lmosdir/lmosdir/lmos"
)

// memberNames returns the names of an encoded object's members in order.
func memberNames(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, key.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

func TestSpelling(t *testing.T) {
	tests := []struct {
		name     string
		json     string
		spelling lmos.Spelling
		names    []string
	}{
		{"upper", object(thingMember, messageIDMember, `"correlationID":"`+uuidB+`"`, `"messageType":"subscribeAllEvents"`),
			lmos.SpellingUpperID, []string{"thingID", "messageID", "messageType", "correlationID"}},
		{"camel", object(`"thingId":"`+exampleThing+`"`, `"messageId":"`+uuidA+`"`, `"correlationId":"`+uuidB+`"`, `"messageType":"subscribeAllEvents"`),
			lmos.SpellingCamelID, []string{"thingId", "messageId", "messageType", "correlationId"}},
		{"mixed, first identifier decides", object(`"messageId":"`+uuidA+`"`, thingMember, `"correlationID":"`+uuidB+`"`, `"messageType":"subscribeAllEvents"`),
			lmos.SpellingCamelID, []string{"thingId", "messageId", "messageType", "correlationId"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := lmos.Parse([]byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			if m.Spelling() != tc.spelling {
				t.Errorf("Spelling() = %v, want %v", m.Spelling(), tc.spelling)
			}
			encoded, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			assertNames(t, memberNames(t, encoded), tc.names)
		})
	}
}

func TestEncodeInOtherSpelling(t *testing.T) {
	m, err := lmos.Parse([]byte(validExamples[0].json))
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := m.Encode(lmos.SpellingCamelID)
	if err != nil {
		t.Fatal(err)
	}
	assertNames(t, memberNames(t, encoded), []string{"thingId", "messageId", "messageType", "correlationId", "name"})
}

func assertNames(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("members = %v, want %v", got, want)
	}
}

func TestUnknownMembersKept(t *testing.T) {
	input := object(
		`"x-priority":"high"`,
		thingMember, messageIDMember,
		`"messageType":"invokeAction"`,
		`"name":"not a member of invokeAction"`,
		`"action":"getWeather"`,
		`"x-routing":{"hops":["a","b"],"ttl":3}`,
	)
	m, err := lmos.Parse([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	wantExtra := []string{"x-priority", "name", "x-routing"}
	var gotExtra []string
	for _, e := range m.Extra {
		gotExtra = append(gotExtra, e.Name)
	}
	assertNames(t, gotExtra, wantExtra)

	encoded, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	assertSameJSON(t, encoded, []byte(input))
	assertNames(t, memberNames(t, encoded), []string{"thingID", "messageID", "messageType", "action", "x-priority", "name", "x-routing"})
}

func TestEncodeCanonicalFormIsStable(t *testing.T) {
	m, err := lmos.Parse([]byte(validExamples[5].json))
	if err != nil {
		t.Fatal(err)
	}
	first, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"thingID":"urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77","messageID":"79057736-3e0e-4dc3-b139-a33051901ee2",` +
		`"messageType":"propertyReading","correlationID":"5afb752f-8be0-4a3c-8108-1327a6009cbd","name":"modelConfiguration",` +
		`"value":{"modelName":"gpt-4o","temperature":0.7,"maxTokens":1000},"timestamp":"2024-01-13T23:20:50.52Z"}`
	if string(first) != want {
		t.Errorf("encoded\n got: %s\nwant: %s", first, want)
	}
}

func TestEncodeRefusesInvalidMessages(t *testing.T) {
	valid := func() *lmos.Message {
		return &lmos.Message{ThingID: exampleThing, MessageID: uuidA, Body: &lmos.QueryAction{Action: "a"}}
	}
	tests := []struct {
		name   string
		modify func(*lmos.Message)
		want   []wantProblem
	}{
		{"no body", func(m *lmos.Message) { m.Body = nil }, []wantProblem{{"messageType", "missing"}}},
		{"empty required member", func(m *lmos.Message) { m.Body = &lmos.QueryAction{} }, []wantProblem{{"action", "missing"}}},
		{"invalid raw value", func(m *lmos.Message) { m.Body = &lmos.InvokeAction{Action: "a", Input: json.RawMessage(`{`)} }, []wantProblem{{"input", "not valid JSON"}}},
		{"extra member shadowing a common one", func(m *lmos.Message) { m.Extra = []lmos.Member{{Name: "thingId", Value: json.RawMessage(`"x"`)}} }, []wantProblem{{"thingId", "more than once"}}},
		{"extra member shadowing a body one", func(m *lmos.Message) { m.Extra = []lmos.Member{{Name: "action", Value: json.RawMessage(`"x"`)}} }, []wantProblem{{"action", "more than once"}}},
		{"repeated extra member", func(m *lmos.Message) {
			m.Extra = []lmos.Member{{Name: "x", Value: json.RawMessage(`1`)}, {Name: "x", Value: json.RawMessage(`2`)}}
		}, []wantProblem{{"x", "more than once"}}},
		{"extra member without value", func(m *lmos.Message) { m.Extra = []lmos.Member{{Name: "x"}} }, []wantProblem{{"x", "not valid JSON"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			tc.modify(m)
			_, err := json.Marshal(m)
			var verr *lmos.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("Marshal error = %v, want a *ValidationError", err)
			}
			assertProblems(t, verr.Problems, tc.want)
		})
	}
}

func TestNewError(t *testing.T) {
	request, err := lmos.Parse([]byte(validExamples[2].json)) // camel spelling
	if err != nil {
		t.Fatal(err)
	}
	reply := lmos.NewError(request, 404, "Property not found", "The Thing has no property modelConfiguration.")
	if err := reply.Validate(); err != nil {
		t.Fatalf("reply is invalid: %v", err)
	}
	if reply.ThingID != request.ThingID || reply.CorrelationID != request.MessageID || reply.MessageID == request.MessageID {
		t.Errorf("reply ids = %q %q %q, want the request's thing id, a new message id and the request's message id as correlation id",
			reply.ThingID, reply.MessageID, reply.CorrelationID)
	}
	body, ok := reply.Body.(*lmos.Error)
	if !ok {
		t.Fatalf("Body = %T, want *lmos.Error", reply.Body)
	}
	if body.Status != "404" || body.Title != "Property not found" || body.TypeURI != lmos.ErrorTypeUnspecified || !strings.HasPrefix(body.Instance, "urn:uuid:") {
		t.Errorf("Body = %+v", body)
	}
	encoded, err := json.Marshal(reply)
	if err != nil {
		t.Fatal(err)
	}
	assertNames(t, memberNames(t, encoded), []string{"thingId", "messageId", "messageType", "correlationId", "type", "title", "status", "detail", "instance"})
	if _, err := lmos.Parse(encoded); err != nil {
		t.Errorf("the encoded reply does not parse: %v", err)
	}
}

func TestNewErrorForRefusedRequest(t *testing.T) {
	request, parseErr := lmos.Parse([]byte(object(`"thingId":"not a URI"`, `"messageId":"42"`, `"messageType":"readProperty"`)))
	if parseErr == nil {
		t.Fatal("Parse accepted an invalid message")
	}
	reply := lmos.NewError(request, 400, "Bad Request", parseErr.Error())
	if reply.ThingID != "" || reply.CorrelationID != "" || reply.Spelling() != lmos.SpellingCamelID {
		t.Errorf("reply = %+v, want no thing id, no correlation id and the request's spelling", reply)
	}
	reply.ThingID = exampleThing
	if err := reply.Validate(); err != nil {
		t.Errorf("reply with the Thing's id is invalid: %v", err)
	}
}

func TestNewErrorWithoutRequest(t *testing.T) {
	reply := lmos.NewError(nil, 400, "Bad Request", "The message is not a JSON object.")
	var verr *lmos.ValidationError
	if err := reply.Validate(); !errors.As(err, &verr) || len(verr.Problems) != 1 || verr.Problems[0].Member != "thingID" {
		t.Errorf("Validate() = %v, want only the thing id missing", err)
	}
}
