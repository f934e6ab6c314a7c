package target

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/lmosdir/lmosdir/lmos"
)

// lampTD has an affordance for each rule of Check.
const lampTD = `{
	"@context": "https://www.w3.org/2022/wot/td/v1.1",
	"id": "urn:example:lamp",
	"title": "Lamp",
	"base": "https://lamp.example.com/api/",
	"securityDefinitions": {"nosec_sc": {"scheme": "nosec"}},
	"security": "nosec_sc",
	"forms": [{"op": "writemultipleproperties", "href": "properties"}],
	"properties": {
		"brightness": {"type": "integer", "minimum": 0, "maximum": 100, "observable": true, "forms": [{"href": "brightness"}]},
		"status": {"type": "string", "readOnly": true, "forms": [{"href": "status"}]},
		"secret": {"type": "string", "writeOnly": true, "forms": [{"href": "secret"}]},
		"label": {"type": "object", "properties": {"text": {"type": "string", "maxLength": 8}}, "required": ["text"], "forms": [{"href": "label"}]},
		"anything": {"forms": [{"href": "anything"}]},
		"broken": {"type": "string", "pattern": "(", "forms": [{"href": "broken"}]}
	},
	"actions": {
		"fade": {
			"input": {"type": "object", "properties": {"to": {"type": "integer", "maximum": 100}, "ms": {"type": "integer", "minimum": 0}}, "required": ["to"]},
			"forms": [{"href": "fade"}]
		},
		"toggle": {"forms": [{"href": "toggle"}]},
		"broken": {"input": {"type": "string", "pattern": "("}, "forms": [{"href": "broken"}]}
	},
	"events": {
		"overheated": {"data": {"type": "number"}, "forms": [{"href": "overheated", "subprotocol": "sse"}]}
	}
}`

const lampID = `"urn:example:lamp"`

func TestCheck(t *testing.T) {
	lamp := mustParse(t, []byte(lampTD))
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name   string
		body   lmos.Body
		status int      // 0: forwarded
		detail []string // what Detail must contain besides the Thing's id
	}{
		// A consumer's message must be a request.
		{"actionStatus", &lmos.ActionStatus{Action: "fade", Status: "completed"}, 400, []string{"a consumer sends requests; actionStatus is sent by Things"}},
		{"propertyReading", &lmos.PropertyReading{Name: "status", Value: raw(`"on"`)}, 400, []string{"a consumer sends requests; propertyReading is sent by Things"}},
		{"propertyReadings", &lmos.PropertyReadings{Data: raw(`{}`)}, 400, []string{"a consumer sends requests; propertyReadings is sent by Things"}},
		{"event", &lmos.Event{Event: "overheated", Data: raw(`90`)}, 400, []string{"a consumer sends requests; event is sent by Things"}},
		{"error", &lmos.Error{Title: "Bad", Status: "500"}, 400, []string{"a consumer sends requests; error is sent by Things"}},

		{"invokeAction", &lmos.InvokeAction{Action: "fade", Input: raw(`{"to": 40, "ms": 500}`)}, 0, nil},
		{"invokeAction without input", &lmos.InvokeAction{Action: "fade"}, 0, nil},
		{"invokeAction of an action without input schema", &lmos.InvokeAction{Action: "toggle", Input: raw(`{"whatever": true}`)}, 0, nil},
		{"invokeAction of an unknown action", &lmos.InvokeAction{Action: "dim"}, 404, []string{`no action "dim"`}},
		{"invokeAction with invalid input", &lmos.InvokeAction{Action: "fade", Input: raw(`{"to": 140, "ms": -1}`)}, 400,
			[]string{`the input of action "fade"`, "does not match its data schema: /ms: minimum: got -1, want 0; /to: maximum: got 140, want 100"}},
		{"invokeAction with input missing a member", &lmos.InvokeAction{Action: "fade", Input: raw(`{}`)}, 400, []string{`action "fade"`, "(value): missing property 'to'"}},
		{"invokeAction with null input", &lmos.InvokeAction{Action: "fade", Input: raw(`null`)}, 400, []string{`action "fade"`, "(value): got null, want object"}},
		{"invokeAction with a broken schema", &lmos.InvokeAction{Action: "broken", Input: raw(`"x"`)}, 502, []string{`action "broken"`, "cannot be compiled", "/pattern"}},
		{"invokeAction of a broken action without input", &lmos.InvokeAction{Action: "broken"}, 0, nil},

		{"cancelAction", &lmos.CancelAction{Action: "fade", Reason: "too slow"}, 0, nil},
		{"cancelAction of an unknown action", &lmos.CancelAction{Action: "dim"}, 404, []string{`no action "dim"`}},
		{"queryAction", &lmos.QueryAction{Action: "toggle"}, 0, nil},
		{"queryAction of an unknown action", &lmos.QueryAction{Action: "dim"}, 404, []string{`no action "dim"`}},

		{"readProperty", &lmos.ReadProperty{Name: "brightness"}, 0, nil},
		{"readProperty of a read-only property", &lmos.ReadProperty{Name: "status"}, 0, nil},
		{"readProperty with a broken schema", &lmos.ReadProperty{Name: "broken"}, 0, nil},
		{"readProperty of an unknown property", &lmos.ReadProperty{Name: "color"}, 404, []string{`no property "color"`}},
		{"readProperty of a write-only property", &lmos.ReadProperty{Name: "secret"}, 405, []string{`property "secret"`, "write-only"}},

		{"writeProperty", &lmos.WriteProperty{Name: "brightness", Data: raw(`70`)}, 0, nil},
		{"writeProperty of a write-only property", &lmos.WriteProperty{Name: "secret", Data: raw(`"s3cret"`)}, 0, nil},
		{"writeProperty without a data schema", &lmos.WriteProperty{Name: "anything", Data: raw(`[1, "two", null]`)}, 0, nil},
		{"writeProperty of an unknown property", &lmos.WriteProperty{Name: "color", Data: raw(`"red"`)}, 404, []string{`no property "color"`}},
		{"writeProperty of a read-only property", &lmos.WriteProperty{Name: "status", Data: raw(`"off"`)}, 405, []string{`property "status"`, "read-only"}},
		{"writeProperty with an invalid value", &lmos.WriteProperty{Name: "label", Data: raw(`{"text": "much too long"}`)}, 400,
			[]string{`the value of property "label"`, "/text: maxLength: got 13, want 8"}},
		{"writeProperty with a wrong type", &lmos.WriteProperty{Name: "brightness", Data: raw(`"bright"`)}, 400, []string{`property "brightness"`, "(value): got string, want integer"}},
		{"writeProperty with a broken schema", &lmos.WriteProperty{Name: "broken", Data: raw(`"x"`)}, 502, []string{`property "broken"`, "cannot be compiled"}},

		{"writeMultipleProperties", &lmos.WriteMultipleProperties{Data: raw(`{"brightness": 10, "label": {"text": "hi"}, "secret": "x"}`)}, 0, nil},
		{"writeMultipleProperties of nothing", &lmos.WriteMultipleProperties{Data: raw(`{}`)}, 0, nil},
		{"writeMultipleProperties with an unknown property", &lmos.WriteMultipleProperties{Data: raw(`{"brightness": 10, "color": "red"}`)}, 404, []string{`no property "color"`}},
		{"writeMultipleProperties with a read-only property", &lmos.WriteMultipleProperties{Data: raw(`{"status": "off", "brightness": 10}`)}, 405, []string{`property "status"`, "read-only"}},
		{"writeMultipleProperties with an invalid value", &lmos.WriteMultipleProperties{Data: raw(`{"brightness": 10, "label": {}}`)}, 400,
			[]string{`the value of property "label"`, "(value): missing property 'text'"}},
		{"writeMultipleProperties refuses for the first fault", &lmos.WriteMultipleProperties{Data: raw(`{"brightness": -1, "color": "red"}`)}, 400,
			[]string{`property "brightness"`, "minimum: got -1, want 0"}},
		{"writeMultipleProperties with a broken schema", &lmos.WriteMultipleProperties{Data: raw(`{"broken": "x"}`)}, 502, []string{`property "broken"`, "cannot be compiled"}},
		{"writeMultipleProperties of no object", &lmos.WriteMultipleProperties{Data: raw(`[{"brightness": 10}]`)}, 400, []string{"not a JSON object"}},

		{"observeProperty", &lmos.ObserveProperty{Name: "brightness"}, 0, nil},
		{"observeProperty of an unknown property", &lmos.ObserveProperty{Name: "color"}, 404, []string{`no property "color"`}},
		{"observeProperty of a property that is not observable", &lmos.ObserveProperty{Name: "status"}, 405, []string{`property "status"`, "not observable"}},
		{"unobserveProperty", &lmos.UnobserveProperty{Name: "brightness"}, 0, nil},
		{"unobserveProperty of a property that is not observable", &lmos.UnobserveProperty{Name: "status"}, 0, nil},
		{"unobserveProperty of an unknown property", &lmos.UnobserveProperty{Name: "color"}, 404, []string{`no property "color"`}},

		{"subscribeEvent", &lmos.SubscribeEvent{Event: "overheated"}, 0, nil},
		{"subscribeEvent of an unknown event", &lmos.SubscribeEvent{Event: "burnt"}, 404, []string{`no event "burnt"`}},
		{"unsubscribeEvent", &lmos.UnsubscribeEvent{Event: "overheated"}, 0, nil},
		{"unsubscribeEvent of an unknown event", &lmos.UnsubscribeEvent{Event: "burnt"}, 404, []string{`no event "burnt"`}},
		{"subscribeAllEvents", &lmos.SubscribeAllEvents{}, 0, nil},
		{"unsubscribeAllEvents", &lmos.UnsubscribeAllEvents{}, 0, nil},

		{"no body", nil, 400, []string{"no message type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Check leaves matching the ThingID to its caller.
			m := &lmos.Message{ThingID: "urn:example:another-thing", MessageID: "3f1d3a7a-4f97-4e6b-a45f-f3c2e1c84c77", Body: tt.body}
			r := lamp.Check(m)
			if tt.status == 0 {
				if r != nil {
					t.Fatalf("Check = %+v, want the message forwarded", r)
				}
				return
			}
			if r == nil {
				t.Fatalf("Check forwarded the message, want status %d", tt.status)
			}
			if r.Status != tt.status || r.Title != http.StatusText(tt.status) {
				t.Errorf("Status, Title = %d, %q; want %d, %q", r.Status, r.Title, tt.status, http.StatusText(tt.status))
			}
			for _, part := range append(tt.detail, lampID) {
				if !strings.Contains(r.Detail, part) {
					t.Errorf("Detail = %q, want it to contain %q", r.Detail, part)
				}
			}
		})
	}
}

func TestCheckWithoutEvents(t *testing.T) {
	thing := mustParse(t, readFile(t, corpusLMOS+"agent-description-minimal.json"))
	for _, body := range []lmos.Body{&lmos.SubscribeAllEvents{}, &lmos.UnsubscribeAllEvents{}} {
		r := thing.Check(&lmos.Message{Body: body})
		if r == nil || r.Status != http.StatusNotFound || !strings.Contains(r.Detail, weatherID) || !strings.Contains(r.Detail, "has no events") {
			t.Errorf("%s: Check = %+v, want 404 naming the Thing", body.Type(), r)
		}
	}
}

func TestCheckNilMessage(t *testing.T) {
	lamp := mustParse(t, []byte(lampTD))
	if r := lamp.Check(nil); r == nil || r.Status != http.StatusBadRequest {
		t.Errorf("Check(nil) = %+v, want 400", r)
	}
}

func TestCheckWeatherAgent(t *testing.T) {
	weather := mustParse(t, readFile(t, corpusLMOS+"weather-agent.json"))
	tests := []struct {
		name   string
		body   lmos.Body
		status int
	}{
		{"getWeather", &lmos.InvokeAction{Action: "getWeather", Input: json.RawMessage(weatherInput)}, 0},
		{"getWeather by voice", &lmos.InvokeAction{Action: "getWeather", Input: json.RawMessage(`{"question": "Sun?", "interactionMode": "voice"}`)}, 0},
		{"getWeather by fax", &lmos.InvokeAction{Action: "getWeather", Input: json.RawMessage(`{"question": "Sun?", "interactionMode": "fax"}`)}, 400},
		{"read modelConfiguration", &lmos.ReadProperty{Name: "modelConfiguration"}, 0},
		{"write modelConfiguration", &lmos.WriteProperty{Name: "modelConfiguration", Data: json.RawMessage(`{"temperature": 0.5}`)}, 405},
		{"observe modelConfiguration", &lmos.ObserveProperty{Name: "modelConfiguration"}, 405},
		{"subscribe userFeedbackReceived", &lmos.SubscribeEvent{Event: "userFeedbackReceived"}, 0},
		{"subscribe all", &lmos.SubscribeAllEvents{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := weather.Check(&lmos.Message{ThingID: weatherID, Body: tt.body})
			switch {
			case tt.status == 0 && r != nil:
				t.Errorf("Check = %+v, want the message forwarded", r)
			case tt.status != 0 && (r == nil || r.Status != tt.status):
				t.Errorf("Check = %+v, want status %d", r, tt.status)
			}
		})
	}
}

// BenchmarkCheckInvokeAction measures the check of every relayed invokeAction: the weather
// agent's getWeather with an input its schema accepts, the schema compiled already.
func BenchmarkCheckInvokeAction(b *testing.B) {
	weather := mustParse(b, readFile(b, corpusLMOS+"weather-agent.json"))
	m := &lmos.Message{
		ThingID:   weatherID,
		MessageID: "0b4c3f0e-9a8d-4c1b-8e2f-3a4b5c6d7e8f",
		Body:      &lmos.InvokeAction{Action: "getWeather", Input: json.RawMessage(weatherInput)},
	}
	if r := weather.Check(m); r != nil {
		b.Fatal(r.Detail)
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := weather.Check(m); r != nil {
			b.Fatal(r.Detail)
		}
	}
}

// BenchmarkParse measures turning the weather agent's TD into a Thing, which the gateway
// does when a Thing registers or changes.
func BenchmarkParse(b *testing.B) {
	doc := readFile(b, corpusLMOS+"weather-agent.json")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(doc); err != nil {
			b.Fatal(err)
		}
	}
}
