package lmos_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/lmosdir/lmosdir/lmos"
)

// The examples below are those of the specification. Where its message ids
// are not UUIDv4s (e.g. "abcd1234-5678-90ef-ghij-klmnopqrstuv"), which its own
// rules forbid, they are replaced by valid ones.
const (
	exampleThing = "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77"
	uuidA        = "0b4c3f0e-9a8d-4c1b-8e2f-3a4b5c6d7e8f"
	uuidB        = "1f2e3d4c-5b6a-4978-a6b5-c4d3e2f1a0b9"
)

var validExamples = []struct {
	name string
	json string
	body lmos.Body
}{
	{"readProperty", `{
		"thingID": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageID": "c370da58-69ae-4e83-bb5a-ac6cfb2fed54",
		"messageType": "readProperty",
		"name": "modelConfiguration",
		"correlationID": "5afb752f-8be0-4a3c-8108-1327a6009cbd"
	}`, &lmos.ReadProperty{Name: "modelConfiguration"}},
	{"readProperty with trace context", `{
		"thingID": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageID": "c370da58-69ae-4e83-bb5a-ac6cfb2fed54",
		"messageType": "readProperty",
		"name": "modelConfiguration",
		"correlationID": "5afb752f-8be0-4a3c-8108-1327a6009cbd",
		"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"tracestate": "congo=BleGNlZWRzIHRohbCBwbGVhc3VyZS4"
	}`, &lmos.ReadProperty{Name: "modelConfiguration"}},
	{"writeProperty", `{
		"thingId": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageId": "` + uuidA + `",
		"messageType": "writeProperty",
		"name": "modelConfiguration",
		"data": {"modelName": "gpt-4o", "temperature": 0.7, "maxTokens": 1000}
	}`, &lmos.WriteProperty{Name: "modelConfiguration", Data: json.RawMessage(`{"modelName": "gpt-4o", "temperature": 0.7, "maxTokens": 1000}`)}},
	{"writeProperty with a number", `{
		"thingId": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageId": "` + uuidA + `",
		"messageType": "writeProperty",
		"name": "otherProperty",
		"data": 60
	}`, &lmos.WriteProperty{Name: "otherProperty", Data: json.RawMessage(`60`)}},
	{"writeMultipleProperties", `{
		"thingId": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageId": "` + uuidA + `",
		"messageType": "writeMultipleProperties",
		"data": {"modelConfiguration": {"modelName": "gpt-4o"}, "otherProperty": 60}
	}`, &lmos.WriteMultipleProperties{Data: json.RawMessage(`{"modelConfiguration": {"modelName": "gpt-4o"}, "otherProperty": 60}`)}},
	{"propertyReading", `{
		"thingID": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageID": "79057736-3e0e-4dc3-b139-a33051901ee2",
		"messageType": "propertyReading",
		"name": "modelConfiguration",
		"value": {"modelName": "gpt-4o", "temperature": 0.7, "maxTokens": 1000},
		"timestamp": "2024-01-13T23:20:50.52Z",
		"correlationID": "5afb752f-8be0-4a3c-8108-1327a6009cbd"
	}`, &lmos.PropertyReading{Name: "modelConfiguration", Value: json.RawMessage(`{"modelName": "gpt-4o", "temperature": 0.7, "maxTokens": 1000}`), Timestamp: "2024-01-13T23:20:50.52Z"}},
	{"propertyReading of null with an offset", `{
		"thingID": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageID": "79057736-3e0e-4dc3-b139-a33051901ee2",
		"messageType": "propertyReading",
		"name": "lastError",
		"value": null,
		"timestamp": "2024-01-13T23:20:50+01:00"
	}`, &lmos.PropertyReading{Name: "lastError", Value: json.RawMessage(`null`), Timestamp: "2024-01-13T23:20:50+01:00"}},
	{"propertyReadings", `{
		"thingId": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageId": "` + uuidA + `",
		"messageType": "propertyReadings",
		"data": {"otherProperty": 60},
		"timestamp": "2025-01-20T19:00:00Z"
	}`, &lmos.PropertyReadings{Data: json.RawMessage(`{"otherProperty": 60}`), Timestamp: "2025-01-20T19:00:00Z"}},
	{"observeProperty", `{
		"thingId": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageId": "` + uuidA + `",
		"messageType": "observeProperty",
		"name": "modelConfiguration"
	}`, &lmos.ObserveProperty{Name: "modelConfiguration"}},
	{"unobserveProperty", `{
		"thingId": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageId": "` + uuidA + `",
		"messageType": "unobserveProperty",
		"name": "modelConfiguration"
	}`, &lmos.UnobserveProperty{Name: "modelConfiguration"}},
	{"invokeAction", `{
		"thingId": "urn:uuid:6f1d3a7a-1f97-4e6b-b45f-f3c2e1c84c77",
		"messageId": "b45e8f90-8824-4c23-bc37-c6c4ddad4b2c",
		"messageType": "invokeAction",
		"action": "getWeather",
		"input": {"question": "What is the weather in New York?", "interactionMode": "text"}
	}`, &lmos.InvokeAction{Action: "getWeather", Input: json.RawMessage(`{"question": "What is the weather in New York?", "interactionMode": "text"}`)}},
	{"invokeAction without input", `{
		"thingId": "https://agents.example.com/weather",
		"messageId": "b45e8f90-8824-4c23-bc37-c6c4ddad4b2c",
		"messageType": "invokeAction",
		"action": "getWeather"
	}`, &lmos.InvokeAction{Action: "getWeather"}},
	{"queryAction", `{
		"thingId": "urn:uuid:6f1d3a7a-1f97-4e6b-b45f-f3c2e1c84c77",
		"messageId": "c67a2e10-8834-4d12-ab23-d8f5ccad3e9f",
		"messageType": "queryAction",
		"action": "getWeather"
	}`, &lmos.QueryAction{Action: "getWeather"}},
	{"cancelAction", `{
		"thingId": "urn:uuid:6f1d3a7a-1f97-4e6b-b45f-f3c2e1c84c77",
		"messageId": "d92c4f20-1284-4f92-bc99-f6e3ccbc4f9d",
		"messageType": "cancelAction",
		"action": "getWeather",
		"reason": "User requested cancellation before completion."
	}`, &lmos.CancelAction{Action: "getWeather", Reason: "User requested cancellation before completion."}},
	{"actionStatus", `{
		"thingId": "urn:uuid:6f1d3a7a-1f97-4e6b-b45f-f3c2e1c84c77",
		"messageId": "a9b8c2f6-7e11-4293-a589-0d123456789a",
		"messageType": "actionStatus",
		"correlationId": "b45e8f90-8824-4c23-bc37-c6c4ddad4b2c",
		"action": "getWeather",
		"status": "completed",
		"output": "The weather in New York is sunny with a temperature of 25°C."
	}`, &lmos.ActionStatus{Action: "getWeather", Status: "completed", Output: json.RawMessage(`"The weather in New York is sunny with a temperature of 25°C."`)}},
	{"subscribeEvent", `{
		"thingId": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageId": "` + uuidA + `",
		"messageType": "subscribeEvent",
		"event": "userFeedbackReceived",
		"correlationId": "b45e8f90-8824-4c23-bc37-c6c4ddad4b2c"
	}`, &lmos.SubscribeEvent{Event: "userFeedbackReceived"}},
	{"event", `{
		"thingId": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageId": "` + uuidA + `",
		"correlationId": "b45e8f90-8824-4c23-bc37-c6c4ddad4b2c",
		"messageType": "event",
		"event": "userFeedbackReceived",
		"data": {"rating": 4, "comment": "The service is good."},
		"timestamp": "2025-01-20T19:00:00Z"
	}`, &lmos.Event{Event: "userFeedbackReceived", Data: json.RawMessage(`{"rating": 4, "comment": "The service is good."}`), Timestamp: "2025-01-20T19:00:00Z"}},
	{"unsubscribeEvent", `{
		"thingId": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageId": "` + uuidA + `",
		"messageType": "unsubscribeEvent",
		"event": "userFeedbackReceived"
	}`, &lmos.UnsubscribeEvent{Event: "userFeedbackReceived"}},
	{"subscribeAllEvents", `{
		"thingId": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageId": "` + uuidA + `",
		"messageType": "subscribeAllEvents"
	}`, &lmos.SubscribeAllEvents{}},
	{"unsubscribeAllEvents", `{
		"thingId": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageId": "` + uuidA + `",
		"messageType": "unsubscribeAllEvents"
	}`, &lmos.UnsubscribeAllEvents{}},
	{"error", `{
		"thingId": "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
		"messageId": "` + uuidA + `",
		"messageType": "error",
		"correlationId": "` + uuidB + `",
		"type": "https://example.com/error-type",
		"title": "Failed to fetch weather data",
		"status": "500",
		"detail": "The weather service encountered an internal error.",
		"instance": "urn:uuid:abcd1234-5678-90ef-ghij-klmnopqrstuv"
	}`, &lmos.Error{
		TypeURI:  "https://example.com/error-type",
		Title:    "Failed to fetch weather data",
		Status:   "500",
		Detail:   "The weather service encountered an internal error.",
		Instance: "urn:uuid:abcd1234-5678-90ef-ghij-klmnopqrstuv",
	}},
}

func TestParseValid(t *testing.T) {
	for _, tc := range validExamples {
		t.Run(tc.name, func(t *testing.T) {
			m, err := lmos.Parse([]byte(tc.json))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if m.Type() != tc.body.Type() {
				t.Errorf("Type() = %q, want %q", m.Type(), tc.body.Type())
			}
			if !reflect.DeepEqual(m.Body, tc.body) {
				t.Errorf("Body = %+v, want %+v", m.Body, tc.body)
			}
			if len(m.Extra) != 0 {
				t.Errorf("Extra = %v, want none", m.Extra)
			}
		})
	}
}

func TestParseCommonMembers(t *testing.T) {
	m, err := lmos.Parse([]byte(validExamples[1].json))
	if err != nil {
		t.Fatal(err)
	}
	want := lmos.Message{
		ThingID:       exampleThing,
		MessageID:     "c370da58-69ae-4e83-bb5a-ac6cfb2fed54",
		CorrelationID: "5afb752f-8be0-4a3c-8108-1327a6009cbd",
		TraceParent:   "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		TraceState:    "congo=BleGNlZWRzIHRohbCBwbGVhc3VyZS4",
		Body:          &lmos.ReadProperty{Name: "modelConfiguration"},
	}
	if !reflect.DeepEqual(*m, want) {
		t.Errorf("Parse = %+v, want %+v", *m, want)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range validExamples {
		t.Run(tc.name, func(t *testing.T) {
			m, err := lmos.Parse([]byte(tc.json))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			encoded, err := json.Marshal(m)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			assertSameJSON(t, encoded, []byte(tc.json))
		})
	}
}

func assertSameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	var gotValue, wantValue any
	if err := json.Unmarshal(got, &gotValue); err != nil {
		t.Fatalf("unmarshal %s: %v", got, err)
	}
	if err := json.Unmarshal(want, &wantValue); err != nil {
		t.Fatalf("unmarshal %s: %v", want, err)
	}
	if !reflect.DeepEqual(gotValue, wantValue) {
		t.Errorf("JSON differs\n got: %s\nwant: %s", got, want)
	}
}

// Fragments for building messages in the refusal cases.
const (
	thingMember     = `"thingID":"` + exampleThing + `"`
	messageIDMember = `"messageID":"` + uuidA + `"`
	readType        = `"messageType":"readProperty","name":"modelConfiguration"`
	traceID         = "0af7651916cd43dd8448eb211c80319c"
	parentID        = "b7ad6b7169203331"
)

func object(members ...string) string {
	return "{" + strings.Join(members, ",") + "}"
}

// readPropertyWith is a valid readProperty message plus members.
func readPropertyWith(members ...string) string {
	return object(append([]string{thingMember, messageIDMember, readType}, members...)...)
}

// ofType is a message of messageType with its members, common members valid.
func ofType(messageType string, members ...string) string {
	return object(append([]string{thingMember, messageIDMember, `"messageType":"` + messageType + `"`}, members...)...)
}

func traceParent(value string) string { return `"traceparent":"` + value + `"` }

func traceState(value string) string { return `"tracestate":"` + value + `"` }

func propertyReadingAt(timestamp string) string {
	return ofType("propertyReading", `"name":"n"`, `"value":1`, `"timestamp":`+timestamp)
}

func manyTraceStateMembers(n int) string {
	members := make([]string, n)
	for i := range members {
		members[i] = fmt.Sprintf("k%d=v", i)
	}
	return strings.Join(members, ",")
}

type wantProblem struct {
	member string
	text   string // a part of the description
}

func TestParseRefusals(t *testing.T) {
	tests := []struct {
		name string
		json string
		want []wantProblem // exactly these, in order
	}{
		// Not a JSON object.
		{"empty input", ``, []wantProblem{{"", "JSON object"}}},
		{"array", `[]`, []wantProblem{{"", "JSON object"}}},
		{"string", `"readProperty"`, []wantProblem{{"", "JSON object"}}},
		{"null", `null`, []wantProblem{{"", "JSON object"}}},
		{"number", `42`, []wantProblem{{"", "JSON object"}}},
		{"truncated", `{"thingID":`, []wantProblem{{"", "not valid JSON"}}},
		{"trailing comma", `{"a":1,}`, []wantProblem{{"", "not valid JSON"}}},
		{"two objects", `{}{}`, []wantProblem{{"", "after top-level value"}}},

		// Thing id.
		{"missing thing id", object(messageIDMember, readType), []wantProblem{{"thingID", "missing"}}},
		{"relative thing id", object(`"thingID":"agents/weather"`, messageIDMember, readType), []wantProblem{{"thingID", "absolute URI"}}},
		{"thing id whose scheme starts with a digit", object(`"thingID":"1urn:weather"`, messageIDMember, readType), []wantProblem{{"thingID", "absolute URI"}}},
		{"thing id with an empty scheme", object(`"thingID":":weather"`, messageIDMember, readType), []wantProblem{{"thingID", "absolute URI"}}},
		{"thing id with a character a scheme cannot hold", object(`"thingID":"ur_n:weather"`, messageIDMember, readType), []wantProblem{{"thingID", "absolute URI"}}},
		{"thing id with a space", object(`"thingID":"urn:weather agent"`, messageIDMember, readType), []wantProblem{{"thingID", "URI"}}},
		{"thing id with bad percent-encoding", object(`"thingID":"urn:weather%zz"`, messageIDMember, readType), []wantProblem{{"thingID", "percent"}}},
		{"thing id with two fragments", object(`"thingID":"https://a.example/#b#c"`, messageIDMember, readType), []wantProblem{{"thingID", "URI"}}},
		{"numeric thing id", object(`"thingID":42`, messageIDMember, readType), []wantProblem{{"thingID", "must be a string"}}},
		{"empty thing id", object(`"thingID":""`, messageIDMember, readType), []wantProblem{{"thingID", "must not be empty"}}},

		// Message id.
		{"missing message id", object(thingMember, readType), []wantProblem{{"messageID", "missing"}}},
		{"version 1 message id", object(thingMember, `"messageID":"c232ab00-9414-11ec-b3c8-9e6bdeced846"`, readType), []wantProblem{{"messageID", "version 4"}}},
		{"message id of the spec's examples", object(thingMember, `"messageID":"abcd1234-5678-90ef-ghij-klmnopqrstuv"`, readType), []wantProblem{{"messageID", "8-4-4-4-12"}}},
		{"message id as a URN", object(thingMember, `"messageID":"urn:uuid:`+uuidA+`"`, readType), []wantProblem{{"messageID", "8-4-4-4-12"}}},
		{"message id without hyphens", object(thingMember, `"messageID":"`+strings.ReplaceAll(uuidA, "-", "")+`"`, readType), []wantProblem{{"messageID", "8-4-4-4-12"}}},
		{"message id of the wrong variant", object(thingMember, `"messageID":"0b4c3f0e-9a8d-4c1b-ce2f-3a4b5c6d7e8f"`, readType), []wantProblem{{"messageID", "version 4"}}},

		// Message type.
		{"missing message type", object(thingMember, messageIDMember, `"name":"n"`), []wantProblem{{"messageType", "missing"}}},
		{"unknown message type", object(thingMember, messageIDMember, `"messageType":"readProperties"`), []wantProblem{{"messageType", `unknown message type "readProperties"`}}},
		{"numeric message type", object(thingMember, messageIDMember, `"messageType":1`), []wantProblem{{"messageType", "must be a string"}}},

		// Correlation id.
		{"bad correlation id", readPropertyWith(`"correlationID":"5afb752f"`), []wantProblem{{"correlationID", "8-4-4-4-12"}}},
		{"version 1 correlation id", readPropertyWith(`"correlationID":"c232ab00-9414-11ec-b3c8-9e6bdeced846"`), []wantProblem{{"correlationID", "version 4"}}},
		{"event without correlation id", ofType("event", `"event":"e"`, `"data":{}`, `"timestamp":"2025-01-20T19:00:00Z"`), []wantProblem{{"correlationID", "missing"}}},

		// traceparent.
		{"short traceparent", readPropertyWith(traceParent("00-" + traceID + "-" + parentID + "-1")), []wantProblem{{"traceparent", "version-traceid-parentid-flags"}}},
		{"traceparent with underscores", readPropertyWith(traceParent("00_" + traceID + "_" + parentID + "_01")), []wantProblem{{"traceparent", "version-traceid-parentid-flags"}}},
		{"uppercase trace id", readPropertyWith(traceParent("00-" + strings.ToUpper(traceID) + "-" + parentID + "-01")), []wantProblem{{"traceparent", "trace-id"}}},
		{"zero trace id", readPropertyWith(traceParent("00-" + strings.Repeat("0", 32) + "-" + parentID + "-01")), []wantProblem{{"traceparent", "trace-id"}}},
		{"zero parent id", readPropertyWith(traceParent("00-" + traceID + "-" + strings.Repeat("0", 16) + "-01")), []wantProblem{{"traceparent", "parent-id"}}},
		{"non-hex parent id", readPropertyWith(traceParent("00-" + traceID + "-b7ad6b716920333g-01")), []wantProblem{{"traceparent", "parent-id"}}},
		{"non-hex flags", readPropertyWith(traceParent("00-" + traceID + "-" + parentID + "-0g")), []wantProblem{{"traceparent", "trace-flags"}}},
		{"version ff", readPropertyWith(traceParent("ff-" + traceID + "-" + parentID + "-01")), []wantProblem{{"traceparent", "version"}}},
		{"uppercase version", readPropertyWith(traceParent("0A-" + traceID + "-" + parentID + "-01")), []wantProblem{{"traceparent", "version"}}},
		{"version 00 with more fields", readPropertyWith(traceParent("00-" + traceID + "-" + parentID + "-01-ab")), []wantProblem{{"traceparent", "exactly 55"}}},
		{"later version glued to flags", readPropertyWith(traceParent("01-" + traceID + "-" + parentID + "-01ab")), []wantProblem{{"traceparent", "version-traceid-parentid-flags"}}},

		// tracestate.
		{"empty tracestate", readPropertyWith(traceState("")), []wantProblem{{"tracestate", "must not be empty"}}},
		{"tracestate of commas", readPropertyWith(traceState(" , ,")), []wantProblem{{"tracestate", "at least one"}}},
		{"tracestate without =", readPropertyWith(traceState("congo")), []wantProblem{{"tracestate", "key=value"}}},
		{"uppercase tracestate key", readPropertyWith(traceState("Congo=t61rcWkgMzE")), []wantProblem{{"tracestate", "key"}}},
		{"tracestate key starting with a digit", readPropertyWith(traceState("1congo=t61rcWkgMzE")), []wantProblem{{"tracestate", "key"}}},
		{"tracestate system id starting with a digit", readPropertyWith(traceState("tenant@1system=v")), []wantProblem{{"tracestate", "key"}}},
		{"tracestate system id too long", readPropertyWith(traceState("tenant@" + strings.Repeat("s", 15) + "=v")), []wantProblem{{"tracestate", "key"}}},
		{"tracestate key too long", readPropertyWith(traceState(strings.Repeat("k", 257) + "=v")), []wantProblem{{"tracestate", "key"}}},
		{"empty tracestate value", readPropertyWith(traceState("congo=")), []wantProblem{{"tracestate", "value"}}},
		{"tracestate value with =", readPropertyWith(traceState("congo=a=b")), []wantProblem{{"tracestate", "value"}}},
		{"tracestate value with a tab", readPropertyWith(traceState(`congo=a\tb`)), []wantProblem{{"tracestate", "value"}}},
		{"tracestate value too long", readPropertyWith(traceState("congo=" + strings.Repeat("v", 257))), []wantProblem{{"tracestate", "value"}}},
		{"repeated tracestate key", readPropertyWith(traceState("congo=a,rojo=b,congo=c")), []wantProblem{{"tracestate", "more than once"}}},
		{"33 tracestate members", readPropertyWith(traceState(manyTraceStateMembers(33))), []wantProblem{{"tracestate", "more than 32"}}},

		// Type-specific members.
		{"readProperty without name", ofType("readProperty"), []wantProblem{{"name", "missing"}}},
		{"readProperty with a numeric name", ofType("readProperty", `"name":7`), []wantProblem{{"name", "must be a string"}}},
		{"writeProperty without data", ofType("writeProperty", `"name":"n"`), []wantProblem{{"data", "missing"}}},
		{"writeMultipleProperties with an array", ofType("writeMultipleProperties", `"data":[1]`), []wantProblem{{"data", "JSON object"}}},
		{"propertyReading without value", ofType("propertyReading", `"name":"n"`, `"timestamp":"2025-01-20T19:00:00Z"`), []wantProblem{{"value", "missing"}}},
		{"propertyReading without timestamp", ofType("propertyReading", `"name":"n"`, `"value":1`), []wantProblem{{"timestamp", "missing"}}},
		{"propertyReadings with a string", ofType("propertyReadings", `"data":"x"`, `"timestamp":"2025-01-20T19:00:00Z"`), []wantProblem{{"data", "JSON object"}}},
		{"observeProperty without name", ofType("observeProperty"), []wantProblem{{"name", "missing"}}},
		{"unobserveProperty without name", ofType("unobserveProperty"), []wantProblem{{"name", "missing"}}},
		{"invokeAction without action", ofType("invokeAction", `"input":{}`), []wantProblem{{"action", "missing"}}},
		{"queryAction without action", ofType("queryAction"), []wantProblem{{"action", "missing"}}},
		{"cancelAction with an empty reason", ofType("cancelAction", `"action":"a"`, `"reason":""`), []wantProblem{{"reason", "must not be empty"}}},
		{"actionStatus without status", ofType("actionStatus", `"action":"a"`), []wantProblem{{"status", "missing"}}},
		{"subscribeEvent without event", ofType("subscribeEvent"), []wantProblem{{"event", "missing"}}},
		{"unsubscribeEvent without event", ofType("unsubscribeEvent"), []wantProblem{{"event", "missing"}}},
		{"event without data", ofType("event", `"correlationID":"`+uuidB+`"`, `"event":"e"`, `"timestamp":"2025-01-20T19:00:00Z"`), []wantProblem{{"data", "missing"}}},
		{"error without instance", ofType("error", `"type":"about:blank"`, `"title":"t"`, `"status":"500"`, `"detail":"d"`), []wantProblem{{"instance", "missing"}}},
		{"error with a numeric status", ofType("error", `"type":"about:blank"`, `"title":"t"`, `"status":500`, `"detail":"d"`, `"instance":"urn:x"`), []wantProblem{{"status", "must be a string"}}},
		{"error type with a space", ofType("error", `"type":"bad type"`, `"title":"t"`, `"status":"500"`, `"detail":"d"`, `"instance":"urn:x"`), []wantProblem{{"type", "URI"}}},
		{"empty error", ofType("error"), []wantProblem{{"type", "missing"}, {"title", "missing"}, {"status", "missing"}, {"detail", "missing"}, {"instance", "missing"}}},

		// Timestamps.
		{"timestamp with a space", propertyReadingAt(`"2025-01-20 19:00:00Z"`), []wantProblem{{"timestamp", "RFC 3339"}}},
		{"timestamp without offset", propertyReadingAt(`"2025-01-20T19:00:00"`), []wantProblem{{"timestamp", "RFC 3339"}}},
		{"basic-format timestamp", propertyReadingAt(`"20250120T190000Z"`), []wantProblem{{"timestamp", "RFC 3339"}}},
		{"date-only timestamp", propertyReadingAt(`"2025-01-20"`), []wantProblem{{"timestamp", "RFC 3339"}}},
		{"month 13", propertyReadingAt(`"2025-13-20T19:00:00Z"`), []wantProblem{{"timestamp", "out of range"}}},
		{"February 30", propertyReadingAt(`"2025-02-30T19:00:00Z"`), []wantProblem{{"timestamp", "out of range"}}},
		{"hour 25", propertyReadingAt(`"2025-01-20T25:00:00Z"`), []wantProblem{{"timestamp", "out of range"}}},
		{"Unix time", propertyReadingAt(`1737399600`), []wantProblem{{"timestamp", "must be a string"}}},

		// Duplicates.
		{"repeated member", readPropertyWith(`"name":"other"`), []wantProblem{{"name", "more than once"}}},
		{"thrice repeated member is reported once", readPropertyWith(`"name":"b"`, `"name":"c"`), []wantProblem{{"name", "more than once"}}},
		{"thing id in both spellings", readPropertyWith(`"thingId":"` + exampleThing + `"`), []wantProblem{{"thingId", "repeats thingID"}}},
		{"repeated member inside data", ofType("writeMultipleProperties", `"data":{"a":1,"b":{"c":1,"c":2}}`), []wantProblem{{"data", `"c" more than once`}}},
		{"repeated member inside an array", ofType("invokeAction", `"action":"a"`, `"input":[{"q":1},{"q":1,"q":2}]`), []wantProblem{{"input", `"q" more than once`}}},
		{"repeated member of a large object", ofType("invokeAction", `"action":"a"`, `"input":{`+manyMembers(40)+`,"k7":true}`), []wantProblem{{"input", `"k7" more than once`}}},
		{"escaped repeat of a member", ofType("invokeAction", `"action":"a"`, `"input":{"q":1,"\u0071":2}`), []wantProblem{{"input", `"q" more than once`}}},

		// Every problem is listed.
		{"several problems", object(`"thingID":"weather"`, `"messageID":"1"`, `"messageType":"x"`, traceParent("00")), []wantProblem{
			{"thingID", "absolute URI"}, {"messageID", "8-4-4-4-12"}, {"messageType", "unknown"}, {"traceparent", "version-traceid-parentid-flags"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lmos.Parse([]byte(tc.json))
			var verr *lmos.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("Parse(%s) error = %v, want a *ValidationError", tc.json, err)
			}
			assertProblems(t, verr.Problems, tc.want)
		})
	}
}

func assertProblems(t *testing.T, got []lmos.Problem, want []wantProblem) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("problems = %+v, want %d: %+v", got, len(want), want)
	}
	for i, w := range want {
		if got[i].Member != w.member || !strings.Contains(got[i].Description, w.text) {
			t.Errorf("problem %d = %+v, want member %q with %q", i, got[i], w.member, w.text)
		}
	}
}

func TestParseAcceptsTraceContextVariants(t *testing.T) {
	tests := []struct{ name, member string }{
		{"later version with more fields", traceParent("01-" + traceID + "-" + parentID + "-01-what-the-future-holds")},
		{"unsampled", traceParent("00-" + traceID + "-" + parentID + "-00")},
		{"several tracestate members with blanks", traceState("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE,\\t,")},
		{"multi-tenant key", traceState("1tenant_a/b*-@sys-tem=value with spaces")},
		{"32 tracestate members", traceState(manyTraceStateMembers(32))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := lmos.Parse([]byte(readPropertyWith(tc.member))); err != nil {
				t.Errorf("Parse: %v", err)
			}
		})
	}
}

func TestParseAcceptsTimestampVariants(t *testing.T) {
	for _, timestamp := range []string{
		"2024-01-13T23:20:50.52Z",
		"2024-01-13t23:20:50z",
		"2024-01-13T23:20:50.123456789-05:30",
		"2024-02-29T00:00:00+00:00",
	} {
		t.Run(timestamp, func(t *testing.T) {
			if _, err := lmos.Parse([]byte(propertyReadingAt(`"` + timestamp + `"`))); err != nil {
				t.Errorf("Parse: %v", err)
			}
		})
	}
}

func TestParseReturnsWhatItCouldDecode(t *testing.T) {
	m, err := lmos.Parse([]byte(object(thingMember, `"messageId":"`+uuidA+`"`, `"messageType":"readProperties"`)))
	if err == nil {
		t.Fatal("Parse accepted an unknown message type")
	}
	if m == nil || m.ThingID != exampleThing || m.MessageID != uuidA || m.Spelling() != lmos.SpellingUpperID {
		t.Errorf("Parse returned %+v, want the thing id and message id decoded", m)
	}
}

func TestValidationErrorText(t *testing.T) {
	err := &lmos.ValidationError{Problems: []lmos.Problem{
		{Description: "must be a JSON object"},
		{Member: "thingID", Description: "missing"},
	}}
	const want = "invalid LMOS message: must be a JSON object; thingID missing"
	if got := err.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// manyMembers is the members "k0":0 to "k<n-1>":n-1 of an object.
func manyMembers(n int) string {
	members := make([]string, n)
	for i := range members {
		members[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	return strings.Join(members, ",")
}

func TestObjectMembers(t *testing.T) {
	members, ok := lmos.ObjectMembers([]byte(` {"b": 1, "a" :{"x":[1, 2]}, "b":"again", "\u0063":null} `))
	if !ok {
		t.Fatal("an object was refused")
	}
	var got []string
	for _, m := range members {
		got = append(got, m.Name+"="+string(m.Value))
	}
	if want := `b=1 a={"x":[1, 2]} b="again" c=null`; strings.Join(got, " ") != want {
		t.Errorf("members %s, want %s", strings.Join(got, " "), want)
	}
	for _, data := range []string{`[1]`, `"x"`, `{"a":1`, `{"a":1}{}`, ``} {
		if _, ok := lmos.ObjectMembers([]byte(data)); ok {
			t.Errorf("%q was taken for an object", data)
		}
	}
	if members, ok := lmos.ObjectMembers([]byte(`{}`)); !ok || len(members) != 0 {
		t.Errorf("{}: %v %v", members, ok)
	}
}
