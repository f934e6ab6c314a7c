package target

import (
	"encoding/json"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/lmosdir/lmosdir/td"
)

const (
	corpusLMOS = "../../td/testdata/corpus/lmos/"
	agent4k    = "../../td/testdata/agent-4k.json"
	weatherID  = "urn:uuid:6f1d3a7a-1f97-4e6b-b45f-f3c2e1c84c77"
)

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustParse(t testing.TB, document []byte) *Thing {
	t.Helper()
	thing, err := Parse(document)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return thing
}

// tdJSON marshals a TD written as Go values, so tests can build variants without quoting.
func tdJSON(t testing.TB, doc map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hrefs(forms []Form) []string {
	var list []string
	for _, f := range forms {
		list = append(list, f.Href.String())
	}
	return list
}

func TestParseCorpus(t *testing.T) {
	telekom := td.Vendor{Name: "Deutsche Telekom AG", URL: "https://telekom.de"}
	tests := []struct {
		file                        string
		id, title, kind, version    string
		vendor                      td.Vendor
		properties, actions, events []string
		thingForms                  int
	}{
		{
			file: corpusLMOS + "weather-agent.json", id: weatherID, title: "WeatherAgent", kind: "agent",
			vendor:     telekom,
			properties: []string{"modelConfiguration"}, actions: []string{"getWeather"}, events: []string{"userFeedbackReceived"},
		},
		{
			file: corpusLMOS + "agent-description-minimal.json", id: weatherID, title: "Agent Name", kind: "agent",
			vendor: telekom,
		},
		{
			file: corpusLMOS + "tool-description-minimal.json", id: "urn:uuid:3f1d3a7a-4f97-2e6b-c45f-f3c2e1c84c77",
			title: "Tool Name", kind: "tool", vendor: telekom,
		},
		{
			file: agent4k, id: "urn:uuid:9a3c2f4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b", title: "Billing Agent", kind: "agent",
			version:    "2.3.1",
			vendor:     td.Vendor{Name: "Example Telco", URL: "https://example.com"},
			properties: []string{"modelConfiguration", "tariff", "health"},
			actions:    []string{"chat", "explainInvoice"},
			events:     []string{"escalated"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file[strings.LastIndexByte(tt.file, '/')+1:], func(t *testing.T) {
			thing := mustParse(t, readFile(t, tt.file))
			if thing.ID != tt.id || thing.Title != tt.title || thing.Kind != tt.kind || thing.Version != tt.version {
				t.Errorf("ID, Title, Kind, Version = %q, %q, %q, %q; want %q, %q, %q, %q",
					thing.ID, thing.Title, thing.Kind, thing.Version, tt.id, tt.title, tt.kind, tt.version)
			}
			if thing.Vendor != tt.vendor {
				t.Errorf("Vendor = %+v, want %+v", thing.Vendor, tt.vendor)
			}
			for _, names := range []struct {
				what      string
				got, want []string
				count     int
			}{
				{"properties", thing.PropertyNames, tt.properties, len(thing.Properties)},
				{"actions", thing.ActionNames, tt.actions, len(thing.Actions)},
				{"events", thing.EventNames, tt.events, len(thing.Events)},
			} {
				if !slices.Equal(names.got, names.want) || names.count != len(names.want) {
					t.Errorf("%s: names %q and %d in the map, want %q", names.what, names.got, names.count, names.want)
				}
			}
			if len(thing.Forms) != tt.thingForms {
				t.Errorf("Thing-level forms = %d, want %d", len(thing.Forms), tt.thingForms)
			}
		})
	}
}

func TestParseWeatherAgentAffordances(t *testing.T) {
	thing := mustParse(t, readFile(t, corpusLMOS+"weather-agent.json"))
	const things = "https://weatherai.example.com/things/" + weatherID

	p := thing.Properties["modelConfiguration"]
	if p.Name != "modelConfiguration" || !p.ReadOnly || p.WriteOnly || p.Observable {
		t.Errorf("modelConfiguration = %+v, want read-only, not observable", p)
	}
	if !strings.HasPrefix(p.Description, "Current configuration") {
		t.Errorf("property description = %q", p.Description)
	}
	wantForm := Form{Ops: []string{"readproperty"}, ContentType: "application/json"}
	if len(p.Forms) != 1 || p.Forms[0].Href.String() != things+"/properties/modelConfiguration" ||
		!slices.Equal(p.Forms[0].Ops, wantForm.Ops) || p.Forms[0].ContentType != wantForm.ContentType || p.Forms[0].Method != "" {
		t.Errorf("property forms = %+v", p.Forms)
	}

	a := thing.Actions["getWeather"]
	if !a.Safe || a.Idempotent || a.Input == nil || a.Output == nil {
		t.Errorf("getWeather = %+v, want safe, not idempotent, with input and output", a)
	}
	if len(a.Forms) != 1 || a.Forms[0].Method != "POST" || !a.Forms[0].Has("invokeaction") || a.Forms[0].Has("readproperty") {
		t.Errorf("action forms = %+v", a.Forms)
	}
	if got := string(a.Output.Raw()); !strings.Contains(got, `"Natural language output providing weather information."`) {
		t.Errorf("output schema = %s", got)
	}

	e := thing.Events["userFeedbackReceived"]
	if e.Data == nil || len(e.Forms) != 1 || !slices.Equal(e.Forms[0].Ops, []string{"subscribeevent"}) {
		t.Errorf("userFeedbackReceived = %+v", e)
	}

	if _, ok := thing.LMOSEndpoint(a.Forms); ok {
		t.Error("the weather agent has no lmosprotocol form, yet LMOSEndpoint found one")
	}
	if f, ok := HTTPForm(a.Forms, "invokeaction"); !ok || f.Href.String() != things+"/actions/getWeather" {
		t.Errorf("HTTPForm(invokeaction) = %v, %v", f.Href, ok)
	}
}

func TestParseAgent4kFormsAgainstBase(t *testing.T) {
	thing := mustParse(t, readFile(t, agent4k))
	const base = "https://agents.example.com/billing/"
	tests := []struct {
		name  string
		forms []Form
		want  []string
	}{
		{"modelConfiguration", thing.Properties["modelConfiguration"].Forms, []string{base + "properties/modelConfiguration"}},
		{"health", thing.Properties["health"].Forms, []string{base + "properties/health", base + "properties/health/observe"}},
		{"chat", thing.Actions["chat"].Forms, []string{base + "actions/chat", "wss://agents.example.com/billing/ws"}},
		{"escalated", thing.Events["escalated"].Forms, []string{base + "events/escalated"}},
	}
	for _, tt := range tests {
		if got := hrefs(tt.forms); !slices.Equal(got, tt.want) {
			t.Errorf("%s: hrefs %q, want %q", tt.name, got, tt.want)
		}
	}
	health := thing.Properties["health"]
	if !health.Observable || !slices.Equal(health.Forms[1].Ops, []string{"observeproperty", "unobserveproperty"}) || health.Forms[1].Subprotocol != "sse" {
		t.Errorf("health = %+v, second form %+v", health, health.Forms[1])
	}
	if ct := thing.Events["escalated"].Forms[0].ContentType; ct != "text/event-stream" {
		t.Errorf("event contentType = %q", ct)
	}
}

func TestParseResolvesHrefAgainstBase(t *testing.T) {
	tests := []struct {
		name string
		base any // nil: no base member
		href any
		want string // "" when the form is left out
	}{
		{"base with a path and a slash", "https://h.example/things/lamp/", "props/on", "https://h.example/things/lamp/props/on"},
		{"base with a path, no slash", "https://h.example/things/lamp", "props/on", "https://h.example/things/props/on"},
		{"absolute path", "https://h.example/things/lamp/", "/root", "https://h.example/root"},
		{"dot segments", "https://h.example/things/lamp/", "../other/x", "https://h.example/things/other/x"},
		{"query only", "https://h.example/things/lamp?a=1", "?b=2", "https://h.example/things/lamp?b=2"},
		{"network path", "wss://h.example/things/", "//other.example/ws", "wss://other.example/ws"},
		{"absolute href ignores base", "https://h.example/things/", "wss://gw.example/lmos", "wss://gw.example/lmos"},
		{"absolute href without base", nil, "https://h.example/p", "https://h.example/p"},
		{"relative href without base", nil, "props/on", ""},
		{"relative base", "/api/", "props/on", ""},
		{"base that does not parse", "https://h.example/%zz/", "props/on", ""},
		{"absolute href with a base that does not parse", "https://h.example/%zz/", "https://h.example/p", "https://h.example/p"},
		{"href that does not parse", "https://h.example/", "props/%zz", ""},
		{"href not a string", "https://h.example/", 42, ""},
		{"no href", "https://h.example/", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			form := map[string]any{"op": "readproperty"}
			if tt.href != nil {
				form["href"] = tt.href
			}
			doc := map[string]any{
				"id":         "urn:example:lamp",
				"properties": map[string]any{"on": map[string]any{"type": "boolean", "forms": []any{form}}},
			}
			if tt.base != nil {
				doc["base"] = tt.base
			}
			got := hrefs(mustParse(t, tdJSON(t, doc)).Properties["on"].Forms)
			var want []string
			if tt.want != "" {
				want = []string{tt.want}
			}
			if !slices.Equal(got, want) {
				t.Errorf("hrefs %q, want %q", got, want)
			}
		})
	}
}

func TestParseFormDefaults(t *testing.T) {
	form := func(extra map[string]any) []any {
		f := map[string]any{"href": "https://h.example/x"}
		for k, v := range extra {
			f[k] = v
		}
		return []any{f}
	}
	tests := []struct {
		name        string
		doc         map[string]any
		forms       func(*Thing) []Form
		ops         []string
		contentType string
		method      string
	}{
		{
			"property", map[string]any{"properties": map[string]any{"p": map[string]any{"forms": form(nil)}}},
			func(t *Thing) []Form { return t.Properties["p"].Forms }, []string{"readproperty", "writeproperty"}, "application/json", "",
		},
		{
			"readOnly property", map[string]any{"properties": map[string]any{"p": map[string]any{"readOnly": true, "forms": form(nil)}}},
			func(t *Thing) []Form { return t.Properties["p"].Forms }, []string{"readproperty"}, "application/json", "",
		},
		{
			"writeOnly property", map[string]any{"properties": map[string]any{"p": map[string]any{"writeOnly": true, "forms": form(nil)}}},
			func(t *Thing) []Form { return t.Properties["p"].Forms }, []string{"writeproperty"}, "application/json", "",
		},
		{
			"readOnly and writeOnly property", map[string]any{"properties": map[string]any{"p": map[string]any{"readOnly": true, "writeOnly": true, "forms": form(nil)}}},
			func(t *Thing) []Form { return t.Properties["p"].Forms }, nil, "application/json", "",
		},
		{
			"property with op", map[string]any{"properties": map[string]any{"p": map[string]any{"forms": form(map[string]any{"op": "observeproperty"})}}},
			func(t *Thing) []Form { return t.Properties["p"].Forms }, []string{"observeproperty"}, "application/json", "",
		},
		{
			"action", map[string]any{"actions": map[string]any{"a": map[string]any{"forms": form(map[string]any{"contentType": "text/plain", "htv:methodName": "PUT"})}}},
			func(t *Thing) []Form { return t.Actions["a"].Forms }, []string{"invokeaction"}, "text/plain", "PUT",
		},
		{
			"event", map[string]any{"events": map[string]any{"e": map[string]any{"forms": form(nil)}}},
			func(t *Thing) []Form { return t.Events["e"].Forms }, []string{"subscribeevent", "unsubscribeevent"}, "application/json", "",
		},
		{
			"event with op list", map[string]any{"events": map[string]any{"e": map[string]any{"forms": form(map[string]any{"op": []any{"subscribeevent", 7}})}}},
			func(t *Thing) []Form { return t.Events["e"].Forms }, []string{"subscribeevent"}, "application/json", "",
		},
		{
			"Thing level", map[string]any{"forms": form(nil)},
			func(t *Thing) []Form { return t.Forms }, nil, "application/json", "",
		},
		{
			"Thing level with op", map[string]any{"forms": form(map[string]any{"op": []any{"readallproperties", "writemultipleproperties"}})},
			func(t *Thing) []Form { return t.Forms }, []string{"readallproperties", "writemultipleproperties"}, "application/json", "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.doc["id"] = "urn:example:x"
			forms := tt.forms(mustParse(t, tdJSON(t, tt.doc)))
			if len(forms) != 1 {
				t.Fatalf("forms = %+v, want one", forms)
			}
			f := forms[0]
			if !slices.Equal(f.Ops, tt.ops) || f.ContentType != tt.contentType || f.Method != tt.method {
				t.Errorf("Ops, ContentType, Method = %q, %q, %q; want %q, %q, %q", f.Ops, f.ContentType, f.Method, tt.ops, tt.contentType, tt.method)
			}
			for _, op := range tt.ops {
				if !f.Has(op) {
					t.Errorf("Has(%q) = false", op)
				}
			}
			if f.Has("cancelaction") {
				t.Error(`Has("cancelaction") = true`)
			}
		})
	}
}

func TestParseDefaultOpsAreNotShared(t *testing.T) {
	thing := mustParse(t, []byte(`{"id": "urn:x", "actions": {"a": {"forms": [{"href": "https://h.example/1"}, {"href": "https://h.example/2"}]}}}`))
	forms := thing.Actions["a"].Forms
	forms[0].Ops[0] = "changed"
	if forms[1].Ops[0] != "invokeaction" {
		t.Errorf("changing one form's default ops changed another's: %q", forms[1].Ops)
	}
}

func TestParseAffordanceOrderAndOddities(t *testing.T) {
	doc := []byte(`{
		"id": "urn:example:order",
		"title": "Order", "description": "Names in document order",
		"version": {"instance": "1.0.0", "model": "x"},
		"properties": {"zeta": {"type": "string"}, "alpha": {"type": "integer"}, "notAnObject": 5, "mid": {}, "alpha": {"type": "boolean"}},
		"actions": {"b": {}, "a": {"input": {"type": "string"}, "output": {"type": "string"}}},
		"events": {"y": {"data": {"type": "number"}}, "x": {}},
		"forms": "not an array"
	}`)
	thing := mustParse(t, doc)
	if thing.Title != "Order" || thing.Description != "Names in document order" || thing.Version != "1.0.0" || thing.Kind != "thing" {
		t.Errorf("Title, Description, Version, Kind = %q, %q, %q, %q", thing.Title, thing.Description, thing.Version, thing.Kind)
	}
	if want := []string{"zeta", "alpha", "mid"}; !slices.Equal(thing.PropertyNames, want) {
		t.Errorf("PropertyNames = %q, want %q", thing.PropertyNames, want)
	}
	if _, ok := thing.Properties["notAnObject"]; ok {
		t.Error("a property that is not an object was kept")
	}
	// Like the decoded document, a repeated name has its last value.
	if got := string(thing.Properties["alpha"].Schema.Raw()); got != `{"type": "boolean"}` {
		t.Errorf("repeated property alpha = %s", got)
	}
	if want := []string{"b", "a"}; !slices.Equal(thing.ActionNames, want) {
		t.Errorf("ActionNames = %q, want %q", thing.ActionNames, want)
	}
	if want := []string{"y", "x"}; !slices.Equal(thing.EventNames, want) {
		t.Errorf("EventNames = %q, want %q", thing.EventNames, want)
	}
	if thing.Actions["b"].Input != nil || thing.Actions["b"].Output != nil || thing.Events["x"].Data != nil {
		t.Error("an absent schema is not nil")
	}
	if thing.Forms != nil {
		t.Errorf("Forms = %+v, want none", thing.Forms)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name     string
		document string
		ok       bool
	}{
		{"not JSON", `{"id": `, false},
		{"array", `[{"id": "urn:x"}]`, false},
		{"string", `"urn:x"`, false},
		{"no id", `{"title": "x"}`, false},
		{"id not a string", `{"id": 5}`, false},
		{"only an id", `{"id": "urn:x"}`, true},
		{"with registration", `{"id": "urn:x", "registration": {"created": "2025-01-01T00:00:00Z"}, "properties": 7, "actions": [], "events": null}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			thing, err := Parse([]byte(tt.document))
			if (err == nil) != tt.ok {
				t.Fatalf("Parse error = %v, want ok %v", err, tt.ok)
			}
			if tt.ok && (thing.ID != "urn:x" || len(thing.Properties)+len(thing.Actions)+len(thing.Events) != 0) {
				t.Errorf("Parse = %+v", thing)
			}
		})
	}
}

func TestPropertySchemaRawLeavesOutInteractionTerms(t *testing.T) {
	tests := []struct {
		name, property, want string
	}{
		{
			"forms, observable and uriVariables",
			`{
				"title": "Brightness",
				"forms": [{"href": "https://h.example/b"}],
				"type": "integer",
				"observable": true,
				"uriVariables": {"unit": {"type": "string"}},
				"maximum": 100
			}`,
			`{
				"title": "Brightness",
				"type": "integer",
				"maximum": 100
			}`,
		},
		{"first member left out", `{"forms": [], "type": "string"}`, `{ "type": "string"}`},
		{"nothing to leave out", `{ "type" : "string" }`, `{ "type" : "string" }`},
		{"only interaction terms", `{"forms": [], "observable": false}`, `{}`},
		{"nested forms are data", `{"type": "object", "properties": {"forms": {"type": "array"}}, "forms": []}`, `{"type": "object", "properties": {"forms": {"type": "array"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := []byte(`{"id": "urn:x", "properties": {"p": ` + tt.property + `}}`)
			thing := mustParse(t, doc)
			got := string(thing.Properties["p"].Schema.Raw())
			if got != tt.want {
				t.Errorf("Raw =\n%s\nwant\n%s", got, tt.want)
			}
			// The Thing keeps its own copy: the caller may reuse the document's buffer.
			for i := range doc {
				doc[i] = ' '
			}
			if again := string(thing.Properties["p"].Schema.Raw()); again != got {
				t.Errorf("Raw changed with the document: %q", again)
			}
		})
	}
}

func TestActionSchemaRawIsAsWritten(t *testing.T) {
	input := `{ "type": "object",
		"properties": {"n": {"type": "integer", "maximum": 12345678901234567890123}} }`
	thing := mustParse(t, []byte(`{"id": "urn:x", "actions": {"a": {"input": `+input+`, "output": true}}}`))
	if got := string(thing.Actions["a"].Input.Raw()); got != input {
		t.Errorf("input Raw = %s, want %s", got, input)
	}
	if got := string(thing.Actions["a"].Output.Raw()); got != "true" {
		t.Errorf("output Raw = %s, want true", got)
	}
}

func TestParseCompilesNoSchema(t *testing.T) {
	thing := mustParse(t, []byte(`{"id": "urn:x",
		"properties": {"p": {"type": "string", "pattern": "("}},
		"actions": {"a": {"input": {"type": "nonsense"}, "output": {"$ref": "https://h.example/s.json"}}},
		"events": {"e": {"data": {"minimum": "x"}}}}`))
	for name, s := range map[string]*Schema{
		"property": thing.Properties["p"].Schema, "input": thing.Actions["a"].Input,
		"output": thing.Actions["a"].Output, "event": thing.Events["e"].Data,
	} {
		if s.compiled != nil || s.err != nil {
			t.Errorf("%s: compiled by Parse", name)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestLMOSEndpoint(t *testing.T) {
	form := func(href, subprotocol string) Form {
		return Form{Href: mustURL(t, href), Subprotocol: subprotocol, Ops: []string{"invokeaction"}}
	}
	tests := []struct {
		name              string
		affordance, thing []Form
		want              string // "" when there is none
	}{
		{"affordance wss", []Form{form("https://h.example/a", ""), form("wss://h.example/lmos", "lmosprotocol")}, nil, "wss://h.example/lmos"},
		{"affordance ws", []Form{form("ws://h.example/lmos", "lmosprotocol")}, nil, "ws://h.example/lmos"},
		{"affordance before Thing level",
			[]Form{form("wss://h.example/a", "lmosprotocol")}, []Form{form("wss://h.example/thing", "lmosprotocol")}, "wss://h.example/a"},
		{"first of several", []Form{form("wss://h.example/1", "lmosprotocol"), form("wss://h.example/2", "lmosprotocol")}, nil, "wss://h.example/1"},
		{"Thing level when the affordance has none",
			[]Form{form("wss://h.example/a", "sse"), form("https://h.example/a", "lmosprotocol")},
			[]Form{form("https://h.example/t", "lmosprotocol"), form("wss://h.example/t", ""), form("wss://h.example/thing", "lmosprotocol")},
			"wss://h.example/thing"},
		{"no affordance forms", nil, []Form{form("ws://h.example/thing", "lmosprotocol")}, "ws://h.example/thing"},
		{"none", []Form{form("https://h.example/a", "")}, []Form{form("mqtt://h.example/t", "lmosprotocol")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			thing := &Thing{ID: "urn:x", Forms: tt.thing}
			u, ok := thing.LMOSEndpoint(tt.affordance)
			if tt.want == "" {
				if ok || u != nil {
					t.Errorf("LMOSEndpoint = %v, %v; want none", u, ok)
				}
				return
			}
			if !ok || u.String() != tt.want {
				t.Errorf("LMOSEndpoint = %v, %v; want %s", u, ok, tt.want)
			}
		})
	}
}

func TestLMOSEndpointFromTD(t *testing.T) {
	thing := mustParse(t, []byte(`{
		"id": "urn:example:gw",
		"base": "wss://gw.example/things/x/",
		"forms": [{"op": "readallproperties", "href": "lmos", "subprotocol": "lmosprotocol"}],
		"actions": {
			"own": {"forms": [{"href": "https://h.example/own"}, {"href": "own/ws", "subprotocol": "lmosprotocol"}]},
			"shared": {"forms": [{"href": "https://h.example/shared"}]}
		}
	}`))
	for action, want := range map[string]string{"own": "wss://gw.example/things/x/own/ws", "shared": "wss://gw.example/things/x/lmos"} {
		if u, ok := thing.LMOSEndpoint(thing.Actions[action].Forms); !ok || u.String() != want {
			t.Errorf("%s: LMOSEndpoint = %v, %v; want %s", action, u, ok, want)
		}
	}
	if u, ok := mustParse(t, readFile(t, agent4k)).LMOSEndpoint(nil); ok {
		t.Errorf("agent-4k has no Thing-level lmosprotocol form, yet LMOSEndpoint(nil) = %v", u)
	}
	billing := mustParse(t, readFile(t, agent4k))
	if u, ok := billing.LMOSEndpoint(billing.Actions["chat"].Forms); !ok || u.String() != "wss://agents.example.com/billing/ws" {
		t.Errorf("chat: LMOSEndpoint = %v, %v", u, ok)
	}
}

func TestHTTPForm(t *testing.T) {
	form := func(href, subprotocol string, ops ...string) Form {
		return Form{Href: mustURL(t, href), Subprotocol: subprotocol, Ops: ops}
	}
	tests := []struct {
		name  string
		forms []Form
		op    string
		want  string // "" when there is none
	}{
		{"https", []Form{form("https://h.example/r", "", "readproperty")}, "readproperty", "https://h.example/r"},
		{"http", []Form{form("http://h.example/r", "", "readproperty", "writeproperty")}, "writeproperty", "http://h.example/r"},
		{"skips a subprotocol", []Form{form("https://h.example/sse", "sse", "observeproperty"), form("https://h.example/long", "", "observeproperty")}, "observeproperty", "https://h.example/long"},
		{"skips other schemes", []Form{form("coap://h.example/r", "", "readproperty"), form("wss://h.example/r", "", "readproperty"), form("https://h.example/r", "", "readproperty")}, "readproperty", "https://h.example/r"},
		{"skips other ops", []Form{form("https://h.example/w", "", "writeproperty"), form("https://h.example/r", "", "readproperty")}, "readproperty", "https://h.example/r"},
		{"first of several", []Form{form("https://h.example/1", "", "invokeaction"), form("https://h.example/2", "", "invokeaction")}, "invokeaction", "https://h.example/1"},
		{"none", []Form{form("https://h.example/sse", "sse", "subscribeevent")}, "subscribeevent", ""},
		{"no forms", nil, "readproperty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := HTTPForm(tt.forms, tt.op)
			if tt.want == "" {
				if ok {
					t.Errorf("HTTPForm = %v, want none", f.Href)
				}
				return
			}
			if !ok || f.Href.String() != tt.want {
				t.Errorf("HTTPForm = %v, %v; want %s", f.Href, ok, tt.want)
			}
		})
	}
}

func TestHTTPFormFromAgent4k(t *testing.T) {
	thing := mustParse(t, readFile(t, agent4k))
	health := thing.Properties["health"].Forms
	if f, ok := HTTPForm(health, "readproperty"); !ok || f.Href.String() != "https://agents.example.com/billing/properties/health" {
		t.Errorf("readproperty: %v, %v", f.Href, ok)
	}
	// The only observe form is server-sent events, which a plain HTTP request cannot use.
	if f, ok := HTTPForm(health, "observeproperty"); ok {
		t.Errorf("observeproperty: %v, want none", f.Href)
	}
}
