package td

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lmosdir/lmosdir/internal/tdgen"
)

// decodeIndexDoc decodes a test document that must be a JSON object.
func decodeIndexDoc(t testing.TB, raw string) map[string]any {
	t.Helper()
	v, err := DecodeJSON([]byte(raw))
	if err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("not an object: %s", raw)
	}
	return doc
}

func readIndexFile(t testing.TB, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestExtractIndexLMOSExamples(t *testing.T) {
	telekom := Vendor{Name: "Deutsche Telekom AG", URL: "https://telekom.de"}
	for _, c := range []struct {
		file string
		want Index
	}{
		{"agent-description-minimal.json", Index{
			Kind:   KindAgent,
			Types:  []string{"lmos:Agent"},
			Vendor: telekom,
			Titles: map[string]string{"en": "Agent Name"},
			Text:   TextFields{Titles: "Agent Name", Vendor: "Deutsche Telekom AG"},
		}},
		{"tool-description-minimal.json", Index{
			Kind:   KindTool,
			Types:  []string{"lmos:Tool"},
			Vendor: telekom,
			Titles: map[string]string{"en": "Tool Name"},
			Text:   TextFields{Titles: "Tool Name", Vendor: "Deutsche Telekom AG"},
		}},
		{"weather-agent.json", Index{
			Kind:   KindAgent,
			Types:  []string{"lmos:Agent"},
			Vendor: telekom,
			Titles: map[string]string{"en": "WeatherAgent"},
			Actions: []Affordance{{Name: "getWeather",
				Description: "Fetches weather information based on user input."}},
			Properties: []Affordance{{Name: "modelConfiguration",
				Description: "Current configuration of the underlying LLM, including version, temperature, and maximum tokens."}},
			Events: []Affordance{{Name: "userFeedbackReceived",
				Description: "Emitted when a user provides feedback on the service, with a rating from 1 to 5."}},
			Schemes: []string{"https"},
			Text: TextFields{
				Titles: "WeatherAgent",
				Names:  "get weather model configuration user feedback received",
				Descriptions: "Fetches weather information based on user input. " +
					"Current configuration of the underlying LLM, including version, temperature, and maximum tokens. " +
					"Emitted when a user provides feedback on the service, with a rating from 1 to 5.",
				Vendor: "Deutsche Telekom AG",
			},
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			raw := readIndexFile(t, filepath.Join("testdata/corpus/lmos", c.file))
			doc := decodeIndexDoc(t, string(raw))
			if got := ExtractIndex(doc); !reflect.DeepEqual(got, c.want) {
				t.Errorf("ExtractIndex:\n got %+v\nwant %+v", got, c.want)
			}
			if got := ExtractIndexFrom(raw, doc); !reflect.DeepEqual(got, c.want) {
				t.Errorf("ExtractIndexFrom:\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestExtractIndexBenchmarkAgent(t *testing.T) {
	raw := readIndexFile(t, "testdata/agent-4k.json")
	doc, err := newTestValidator(t).Validate(raw)
	if err != nil {
		t.Fatal(err)
	}
	got := ExtractIndexFrom(raw, doc)
	want := Index{
		Kind:         KindAgent,
		Types:        []string{"lmos:Agent", "Thing"},
		Vendor:       Vendor{Name: "Example Telco", URL: "https://example.com"},
		Titles:       map[string]string{"en": "Billing Agent", "de": "Rechnungsagent"},
		Descriptions: map[string]string{"en": "Answers questions about invoices, payments and tariffs of a customer.", "de": "Beantwortet Fragen zu Rechnungen, Zahlungen und Tarifen."},
		Actions: []Affordance{
			{Name: "chat", Description: "Sends one conversation turn to the agent and returns its answer."},
			{Name: "explainInvoice"},
		},
		Properties: []Affordance{
			{Name: "modelConfiguration"},
			{Name: "tariff", Description: "Name of the tariff the agent answers for."},
			{Name: "health"},
		},
		Events:       []Affordance{{Name: "escalated", Description: "A conversation was handed over to a human."}},
		Capabilities: []Capability{{ID: "invoice-explain"}, {ID: "payment-status"}},
		Schemes:      []string{"https", "wss"},
		Subprotocols: []string{"lmosprotocol", "sse"},
		Text: TextFields{
			Titles: "Rechnungsagent Billing Agent",
			Names:  "chat explain invoice model configuration tariff health escalated",
			Descriptions: "Beantwortet Fragen zu Rechnungen, Zahlungen und Tarifen. " +
				"Answers questions about invoices, payments and tariffs of a customer. " +
				"Sends one conversation turn to the agent and returns its answer. " +
				"Name of the tariff the agent answers for. " +
				"A conversation was handed over to a human.",
			Vendor: "Example Telco",
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
}

// kindTestDoc is a TD with the inline context entries ctx (JSON members) and @type types (JSON).
func kindTestDoc(ctx, types string) string {
	doc := `{"@context": ["https://www.w3.org/2022/wot/td/v1.1"`
	if ctx != "" {
		doc += `, {` + ctx + `}`
	}
	doc += `]`
	if types != "" {
		doc += `, "@type": ` + types
	}
	return doc + `, "title": "T"}`
}

func TestExtractIndexKind(t *testing.T) {
	const lmos = `"lmos": "https://eclipse.dev/lmos/protocol/v1"`
	for _, c := range []struct {
		name, ctx, types, want string
	}{
		{"compact agent", lmos, `"lmos:Agent"`, KindAgent},
		{"compact tool", lmos, `"lmos:Tool"`, KindTool},
		{"compact without binding", "", `"lmos:Agent"`, KindAgent},
		{"concatenated agent", lmos, `"https://eclipse.dev/lmos/protocol/v1Agent"`, KindAgent},
		{"slash agent", lmos, `"https://eclipse.dev/lmos/protocol/v1/Agent"`, KindAgent},
		{"hash agent", lmos, `"https://eclipse.dev/lmos/protocol/v1#Agent"`, KindAgent},
		{"concatenated tool", lmos, `"https://eclipse.dev/lmos/protocol/v1Tool"`, KindTool},
		{"slash tool", lmos, `"https://eclipse.dev/lmos/protocol/v1/Tool"`, KindTool},
		{"hash tool", lmos, `"https://eclipse.dev/lmos/protocol/v1#Tool"`, KindTool},
		{"expansion without context", "", `"https://eclipse.dev/lmos/protocol/v1/Agent"`, KindAgent},
		{"custom prefix", `"ns": "https://eclipse.dev/lmos/protocol/v1"`, `"ns:Agent"`, KindAgent},
		{"custom prefix with slash", `"ns": "https://eclipse.dev/lmos/protocol/v1/"`, `"ns:Tool"`, KindTool},
		{"custom prefix with @id", `"ns": {"@id": "https://eclipse.dev/lmos/protocol/v1#", "@prefix": true}`, `"ns:Agent"`, KindAgent},
		{"custom prefix in a later context", `"x": "https://example.com/"}, {"x": "https://eclipse.dev/lmos/protocol/v1/"`, `"x:Agent"`, KindAgent},
		{"custom prefix rebound away", `"x": "https://eclipse.dev/lmos/protocol/v1/"}, {"x": "https://example.com/"`, `"x:Agent"`, KindThing},
		{"lmos bound elsewhere, compact", `"lmos": "https://example.com/lmos#"`, `"lmos:Agent"`, KindAgent},
		{"lmos bound elsewhere, expansion", `"lmos": "https://example.com/lmos#"`, `"https://example.com/lmos#Tool"`, KindTool},
		{"lmos bound elsewhere, default expansion", `"lmos": "https://example.com/lmos#"`, `"https://eclipse.dev/lmos/protocol/v1/Agent"`, KindAgent},
		{"lmos bound to nothing", `"lmos": "/", "ns": ""`, `["Agent", "ns:Tool"]`, KindThing},
		{"unbound prefix", lmos, `"ns:Agent"`, KindThing},
		{"other vocabulary", `"ex": "https://example.com/"`, `"ex:Agent"`, KindThing},
		{"bare term", lmos, `"Agent"`, KindThing},
		{"other version", lmos, `"https://eclipse.dev/lmos/protocol/v2/Agent"`, KindThing},
		{"longer term", lmos, `"https://eclipse.dev/lmos/protocol/v1/Agents"`, KindThing},
		{"double separator", lmos, `"https://eclipse.dev/lmos/protocol/v1//Agent"`, KindThing},
		{"agent wins over tool", lmos, `["lmos:Tool", "lmos:Agent"]`, KindAgent},
		{"tool wins over directory", lmos, `["ThingDirectory", "lmos:Tool"]`, KindTool},
		{"directory", "", `"ThingDirectory"`, KindDirectory},
		{"directory IRI", "", `"https://www.w3.org/2022/wot/discovery#ThingDirectory"`, KindDirectory},
		{"directory prefix", `"discovery": "https://www.w3.org/2022/wot/discovery#"`, `["Thing", "discovery:ThingDirectory"]`, KindDirectory},
		{"link", "", `"ThingLink"`, KindLink},
		{"link IRI", "", `"https://www.w3.org/2022/wot/discovery#ThingLink"`, KindLink},
		{"other discovery term", "", `"https://www.w3.org/2022/wot/discovery#ThingCollection"`, KindThing},
		{"plain TD", "", `"Thing"`, KindThing},
		{"no @type", "", "", KindThing},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := decodeIndexDoc(t, kindTestDoc(c.ctx, c.types))
			if got := ExtractIndex(doc).Kind; got != c.want {
				t.Errorf("kind %q, want %q", got, c.want)
			}
		})
	}
}

func TestExtractIndexSingleContext(t *testing.T) {
	ix := ExtractIndex(decodeIndexDoc(t, `{"@context": "https://www.w3.org/2022/wot/td/v1.1", "@type": ["lmos:Tool", "Thing", "lmos:Tool"]}`))
	if ix.Kind != KindTool || !slices.Equal(ix.Types, []string{"lmos:Tool", "Thing"}) {
		t.Errorf("kind %q, types %q", ix.Kind, ix.Types)
	}
}

func TestExtractIndexLanguages(t *testing.T) {
	for _, c := range []struct {
		name, doc  string
		titles     map[string]string
		textTitles string
	}{
		{"plain title is English", `{"title": "Weather"}`,
			map[string]string{"en": "Weather"}, "Weather"},
		{"default language", `{"@context": ["https://www.w3.org/2022/wot/td/v1.1", {"@language": "de"}], "title": "Wetter"}`,
			map[string]string{"de": "Wetter"}, "Wetter"},
		{"last default language wins", `{"@context": ["https://www.w3.org/2022/wot/td/v1.1", {"@language": "de"}, {"@language": "fr"}], "title": "Météo"}`,
			map[string]string{"fr": "Météo"}, "Météo"},
		{"map keeps its own text", `{"title": "Weather agent", "titles": {"en": "Weather", "de": "Wetter"}}`,
			map[string]string{"en": "Weather", "de": "Wetter"}, "Wetter Weather"},
		{"plain added beside other languages", `{"title": "Weather", "titles": {"de": "Wetter", "fr": "Météo"}}`,
			map[string]string{"en": "Weather", "de": "Wetter", "fr": "Météo"}, "Wetter Weather Météo"},
		{"same text once", `{"title": "Weather", "titles": {"en": "Weather", "de": "Weather", "es": "Tiempo"}}`,
			map[string]string{"en": "Weather", "de": "Weather", "es": "Tiempo"}, "Weather Tiempo"},
		{"no title", `{"description": "x"}`, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ix := ExtractIndex(decodeIndexDoc(t, c.doc))
			if !maps.Equal(ix.Titles, c.titles) || ix.Text.Titles != c.textTitles {
				t.Errorf("titles %q, text %q; want %q, %q", ix.Titles, ix.Text.Titles, c.titles, c.textTitles)
			}
		})
	}
}

func TestExtractIndexAffordanceText(t *testing.T) {
	ix := ExtractIndex(decodeIndexDoc(t, `{
		"description": "TD",
		"actions": {"create_invoice": {
			"title": "Create", "titles": {"en": "Create", "de": "Erstellen"},
			"description": "Makes one", "descriptions": {"de": "Macht eine", "fr": "Makes one"}}}}`))
	want := TextFields{Names: "create invoice Create Erstellen", Descriptions: "TD Makes one Macht eine"}
	if ix.Text != want {
		t.Errorf("text %+v, want %+v", ix.Text, want)
	}
	if a := ix.Actions; len(a) != 1 || a[0] != (Affordance{Name: "create_invoice", Title: "Create", Description: "Makes one"}) {
		t.Errorf("actions %+v", a)
	}
}

func TestNameWords(t *testing.T) {
	for name, want := range map[string]string{
		"getWeather":     "get weather",
		"create_invoice": "create invoice",
		"CreateInvoice":  "create invoice",
		"getHTTPStatus":  "get http status",
		"HTTP":           "http",
		"v2Endpoint":     "v2 endpoint",
		"set-temp.max":   "set temp max",
		"__a__b":         "a b",
		"größeÄndern":    "größe\u00c4ndern",
		"":               "",
		"___":            "",
	} {
		if got := string(appendNameWords(nil, name)); got != want {
			t.Errorf("%q: %q, want %q", name, got, want)
		}
	}
	if got := string(appendNameWords([]byte("x"), "aB")); got != "x a b" {
		t.Errorf("appended: %q", got)
	}
}

func TestExtractIndexCapabilities(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		want      []Capability
	}{
		{"generated spelling", `{"lmos:metadata": {"lmos:capabilities": [{"id": "a", "name": "A", "version": "1.2.0"}, {"id": "b"}]}}`,
			[]Capability{{"a", "1.2.0"}, {"b", ""}}},
		{"prefixed members", `{"lmos:metadata": {"lmos:capabilities": [{"lmos:id": "a", "lmos:version": "2"}]}}`,
			[]Capability{{"a", "2"}}},
		{"prefixed member wins", `{"lmos:metadata": {"lmos:capabilities": [{"lmos:id": "a", "id": "b"}]}}`,
			[]Capability{{"a", ""}}},
		{"top level", `{"lmos:capabilities": [{"id": "a"}]}`, []Capability{{"a", ""}}},
		{"both levels, metadata first, repeats once", `{"lmos:capabilities": [{"id": "top"}, {"id": "m", "version": "1"}], "lmos:metadata": {"lmos:capabilities": [{"id": "m", "version": "1"}, {"id": "m", "version": "2"}]}}`,
			[]Capability{{"m", "1"}, {"m", "2"}, {"top", ""}}},
		{"single object", `{"lmos:capabilities": {"lmos:id": "a"}}`, []Capability{{"a", ""}}},
		{"ids as strings", `{"lmos:capabilities": ["a", "b"]}`, []Capability{{"a", ""}, {"b", ""}}},
		{"custom prefix", `{"@context": ["https://www.w3.org/2022/wot/td/v1.1", {"ns": "https://eclipse.dev/lmos/protocol/v1/"}], "ns:metadata": {"ns:capabilities": [{"ns:id": "a", "ns:version": "3"}], "ns:vendor": {"ns:name": "V"}}}`,
			[]Capability{{"a", "3"}}},
		{"malformed entries", `{"lmos:capabilities": [{"name": "no id"}, {"id": 7}, {"id": "a", "version": 1.5}, null, 3, [], {"id": ""}]}`,
			[]Capability{{"a", ""}}},
		{"not a list", `{"lmos:capabilities": 5, "lmos:metadata": {"lmos:capabilities": null}}`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ExtractIndex(decodeIndexDoc(t, c.doc)).Capabilities; !slices.Equal(got, c.want) {
				t.Errorf("%+v, want %+v", got, c.want)
			}
		})
	}
}

func TestExtractIndexVendor(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		want      Vendor
	}{
		{"prefixed", `{"lmos:metadata": {"lmos:vendor": {"lmos:name": "V", "lmos:url": "https://v.example"}}}`, Vendor{"V", "https://v.example"}},
		{"plain members", `{"lmos:metadata": {"lmos:vendor": {"name": "V", "url": "https://v.example"}}}`, Vendor{"V", "https://v.example"}},
		{"custom prefix", `{"@context": ["https://www.w3.org/2022/wot/td/v1.1", {"ns": "https://eclipse.dev/lmos/protocol/v1"}], "ns:metadata": {"ns:vendor": {"ns:name": "V"}}}`, Vendor{Name: "V"}},
		{"not under metadata", `{"lmos:vendor": {"lmos:name": "V"}}`, Vendor{}},
		{"number name", `{"lmos:metadata": {"lmos:vendor": {"lmos:name": 5, "lmos:url": "u"}}}`, Vendor{URL: "u"}},
		{"vendor not an object", `{"lmos:metadata": {"lmos:vendor": "V"}}`, Vendor{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ix := ExtractIndex(decodeIndexDoc(t, c.doc))
			if ix.Vendor != c.want || ix.Text.Vendor != c.want.Name {
				t.Errorf("vendor %+v, text %q; want %+v", ix.Vendor, ix.Text.Vendor, c.want)
			}
		})
	}
}

func TestExtractIndexEndpoints(t *testing.T) {
	for _, c := range []struct {
		name, doc       string
		schemes, protos []string
	}{
		{"relative against base", `{"base": "https://a.example/x/", "actions": {"a": {"forms": [{"href": "actions/a"}]}}}`,
			[]string{"https"}, nil},
		{"websocket", `{"base": "https://a.example/", "actions": {"a": {"forms": [{"href": "a"}, {"href": "wss://a.example/ws", "subprotocol": "lmosprotocol"}]}}}`,
			[]string{"https", "wss"}, []string{"lmosprotocol"}},
		{"relative without base", `{"properties": {"p": {"forms": [{"href": "p"}, {"href": "//host/p"}, {"href": ""}]}}}`, nil, nil},
		{"network path takes base scheme", `{"base": "coap://a.example/", "events": {"e": {"forms": [{"href": "//b.example/e"}]}}}`,
			[]string{"coap"}, nil},
		{"case folded", `{"base": "HTTP://A.EXAMPLE/", "forms": [{"href": "MQTT://broker/t"}, {"href": "x"}]}`,
			[]string{"http", "mqtt"}, nil},
		{"all places, sorted and unique", `{"forms": [{"href": "https://a/x", "subprotocol": "sse"}],
			"properties": {"p": {"forms": [{"href": "https://a/p", "subprotocol": "sse"}, {"href": "coap+tcp://a/p"}]}},
			"actions": {"a": {"forms": [{"href": "urn:dev:1"}, {"href": "wss://a/ws", "subprotocol": "lmosprotocol"}]}},
			"events": {"e": {"forms": [{"href": "mqtts://a/e", "subprotocol": "sse"}]}}}`,
			[]string{"coap+tcp", "https", "mqtts", "urn", "wss"}, []string{"lmosprotocol", "sse"}},
		{"not a scheme", `{"base": "https://a/", "forms": [{"href": "1x:y"}, {"href": "a/b:c"}, {"href": ":x"}]}`,
			[]string{"https"}, nil},
		{"relative base", `{"base": "things/a/", "forms": [{"href": "x"}]}`, nil, nil},
		{"malformed forms", `{"base": "https://a/", "forms": {"href": "x"}, "actions": {"a": {"forms": ["x", 5, {"href": 5, "subprotocol": 7}, {"subprotocol": ""}]}}}`,
			nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ix := ExtractIndex(decodeIndexDoc(t, c.doc))
			if !slices.Equal(ix.Schemes, c.schemes) || !slices.Equal(ix.Subprotocols, c.protos) {
				t.Errorf("schemes %q, subprotocols %q; want %q, %q", ix.Schemes, ix.Subprotocols, c.schemes, c.protos)
			}
		})
	}
}

func TestExtractIndexMalformed(t *testing.T) {
	for _, doc := range []string{
		`{}`,
		`{"@context": 5, "@type": 5}`,
		`{"@context": [5, null, [], {"lmos": 5}, {"ns": {"@id": 7}}, {"@language": 3}], "@type": [5, null, {}, "lmos:Agent"]}`,
		`{"@context": {"lmos": "https://eclipse.dev/lmos/protocol/v1"}, "@type": ":", "title": 5}`,
		`{"titles": ["a"], "descriptions": {"en": 5, "de": null}, "title": ["x"], "description": {}}`,
		`{"lmos:metadata": "x", "lmos:capabilities": {"id": {}}}`,
		`{"lmos:metadata": {"lmos:vendor": ["V"], "lmos:capabilities": "c"}}`,
		`{"base": 5, "forms": "x", "properties": [], "actions": "a", "events": 7}`,
		`{"actions": {"a": "x", "b": null, "c": {"title": 5, "titles": "x", "description": [], "descriptions": [1], "forms": {}}}}`,
		`{"actions": {"a": {"titles": {"en": 1, "de": "D"}, "forms": [{"href": "ht\u0000tp:x"}]}}}`,
	} {
		m := decodeIndexDoc(t, doc)
		checkIndexInvariants(t, m, ExtractIndex(m))
	}
	ix := ExtractIndex(decodeIndexDoc(t, `{"actions": {"a": "x", "b": null}, "title": 5, "titles": ["a"]}`))
	want := Index{Kind: KindThing, Actions: []Affordance{{Name: "a"}, {Name: "b"}}, Text: TextFields{Names: "a b"}}
	if !reflect.DeepEqual(ix, want) {
		t.Errorf("\n got %+v\nwant %+v", ix, want)
	}
	if ix := ExtractIndex(nil); ix.Kind != KindThing {
		t.Errorf("nil document: %+v", ix)
	}
}

func TestExtractIndexFromOrder(t *testing.T) {
	const raw = `{"actions": {"zeta": {}, "b\u0041": {}, "alpha": {}}, "properties": {"p2": {}, "p1": {}}, "events": {}}`
	doc := decodeIndexDoc(t, raw)
	names := func(list []Affordance) []string {
		var out []string
		for _, a := range list {
			out = append(out, a.Name)
		}
		return out
	}
	ix := ExtractIndexFrom([]byte(raw), doc)
	if got := names(ix.Actions); !slices.Equal(got, []string{"zeta", "bA", "alpha"}) {
		t.Errorf("document order: %q", got)
	}
	if got := names(ix.Properties); !slices.Equal(got, []string{"p2", "p1"}) {
		t.Errorf("document order: %q", got)
	}
	truncated, _, _ := strings.Cut(raw, `, "properties"`)
	if got := names(ExtractIndexFrom([]byte(truncated), doc).Actions); !slices.Equal(got, []string{"zeta", "bA", "alpha"}) {
		t.Errorf("truncated after the actions: %q", got)
	}
	if got := names(ExtractIndex(doc).Actions); !slices.Equal(got, []string{"alpha", "bA", "zeta"}) {
		t.Errorf("without raw: %q", got)
	}
	for _, other := range []string{
		`{"actions": {"zeta": {}, "alpha": {}}}`,                         // a name missing
		`{"actions": {"zeta": {}, "zeta": {}, "alpha": {}}}`,             // a name repeated
		`{"actions": {"zeta": {}, "bA": {}, "alpha": {}, "x": {}}}`,      // a name too many
		`{"actions": {"zeta": {}, "bA": {}`,                              // truncated
		`[1]`,                                                            // not an object
		`{"actions": {"zeta": {}, "bA": {}, "alpha": {}}, "actions": 1}`, // replaced
		``,
	} {
		if got := names(ExtractIndexFrom([]byte(other), doc).Actions); !slices.Equal(got, []string{"alpha", "bA", "zeta"}) {
			t.Errorf("raw %s: %q, want sorted", other, got)
		}
	}
	// Past the size where sameNames switches to a set.
	var b strings.Builder
	b.WriteString(`{"actions": {`)
	for i := range 40 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"a` + string(rune('z'-i%26)) + string(rune('a'+i/26)) + `": {}`)
	}
	b.WriteString(`}}`)
	doc = decodeIndexDoc(t, b.String())
	ix = ExtractIndexFrom([]byte(b.String()), doc)
	if len(ix.Actions) != 40 || ix.Actions[0].Name != "aza" {
		t.Errorf("40 actions: %v", names(ix.Actions))
	}
	dup := strings.Replace(b.String(), `"azb"`, `"aza"`, 1)
	if ix := ExtractIndexFrom([]byte(dup), doc); !slices.IsSortedFunc(ix.Actions, func(a, b Affordance) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("repeated name among 40: %v", names(ix.Actions))
	}
}

// TestExtractIndexLarge feeds lists long enough that comparing every pair would take
// minutes: a hostile TD must cost time linear in its size.
func TestExtractIndexLarge(t *testing.T) {
	const n = 30_000
	types := make([]any, 0, n)
	forms := make([]any, 0, n)
	caps := make([]any, 0, n)
	titles := make(map[string]any, n)
	ctx := map[string]any{"lmos": lmosNamespace}
	actions := make(map[string]any, n)
	for i := range n {
		s := strconv.Itoa(i)
		types = append(types, "ex:T"+s)
		forms = append(forms, map[string]any{"href": "s" + s + "://h", "subprotocol": "p" + s})
		caps = append(caps, map[string]any{"id": "c" + s})
		titles["l"+s] = "title " + s
		ctx["n"+s] = lmosNamespace + "/"
		actions["a"+s] = map[string]any{}
	}
	types = append(types, "lmos:Tool")
	doc := map[string]any{
		"@context":          []any{"https://www.w3.org/2022/wot/td/v1.1", ctx},
		"@type":             types,
		"titles":            titles,
		"forms":             forms,
		"lmos:capabilities": caps,
		"actions":           actions,
	}
	ix := ExtractIndex(doc)
	if ix.Kind != KindTool || len(ix.Types) != n+1 || len(ix.Schemes) != n || len(ix.Subprotocols) != n ||
		len(ix.Capabilities) != n || len(ix.Titles) != n || len(ix.Actions) != n {
		t.Errorf("kind %q, %d types, %d schemes, %d subprotocols, %d capabilities, %d titles, %d actions",
			ix.Kind, len(ix.Types), len(ix.Schemes), len(ix.Subprotocols), len(ix.Capabilities), len(ix.Titles), len(ix.Actions))
	}
}

// checkIndexInvariants asserts what holds of every Index, whatever the document.
func checkIndexInvariants(t *testing.T, doc map[string]any, ix Index) {
	t.Helper()
	if !slices.Contains([]string{KindAgent, KindTool, KindDirectory, KindLink, KindThing}, ix.Kind) {
		t.Errorf("kind %q", ix.Kind)
	}
	for _, list := range [][]string{ix.Schemes, ix.Subprotocols} {
		if !slices.IsSorted(list) || len(slices.Compact(slices.Clone(list))) != len(list) {
			t.Errorf("not sorted and unique: %q", list)
		}
	}
	for _, s := range ix.Schemes {
		if s == "" || strings.ToLower(s) != s {
			t.Errorf("scheme %q", s)
		}
	}
	if len(slices.Compact(slices.Clone(ix.Types))) != len(ix.Types) {
		t.Errorf("repeated types %q", ix.Types)
	}
	for key, list := range map[string][]Affordance{"actions": ix.Actions, "properties": ix.Properties, "events": ix.Events} {
		m, _ := doc[key].(map[string]any)
		got := make([]string, 0, len(list))
		for _, a := range list {
			got = append(got, a.Name)
		}
		slices.Sort(got)
		if want := slices.Sorted(maps.Keys(m)); !slices.Equal(got, want) {
			t.Errorf("%s %q, want %q", key, got, want)
		}
	}
}

// TestExtractIndexCorpus runs extraction over every third-party document: none is an agent
// or tool but the LMOS examples, and the affordances are those of the document.
func TestExtractIndexCorpus(t *testing.T) {
	for _, e := range readManifest(t) {
		raw := readIndexFile(t, filepath.Join("testdata/corpus", e.File))
		v, err := DecodeJSON(raw)
		if err != nil {
			t.Errorf("%s: %v", e.File, err)
			continue
		}
		doc, ok := v.(map[string]any)
		if !ok {
			continue
		}
		ix := ExtractIndexFrom(raw, doc)
		checkIndexInvariants(t, doc, ix)
		checkIndexInvariants(t, doc, ExtractIndex(doc))
		want := KindThing
		switch filepath.Base(e.File) {
		case "agent-description-minimal.json", "weather-agent.json":
			want = KindAgent
		case "tool-description-minimal.json":
			want = KindTool
		}
		if ix.Kind != want {
			t.Errorf("%s: kind %q, want %q", e.File, ix.Kind, want)
		}
	}
}

// TestExtractIndexAgreesWithGenerator checks extraction against what the generator says it
// wrote, over TDs that passed Validate.
func TestExtractIndexAgreesWithGenerator(t *testing.T) {
	v := newTestValidator(t)
	g := tdgen.New(1)
	names := func(list []Affordance) []string {
		out := make([]string, 0, len(list))
		for _, a := range list {
			out = append(out, a.Name)
		}
		return out
	}
	sameSet := func(a, b []string) bool {
		return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
	}
	for i := range 500 {
		raw := g.TD(i)
		doc, err := v.Validate(raw)
		if err != nil {
			t.Fatalf("TD %d: %v", i, err)
		}
		info := g.Info(i)
		ix := ExtractIndexFrom(raw, doc)
		var ids []string
		for _, c := range ix.Capabilities {
			ids = append(ids, c.ID)
		}
		switch {
		case ix.Kind != info.Kind:
			t.Errorf("TD %d: kind %q, want %q", i, ix.Kind, info.Kind)
		case ix.Vendor.Name != info.Vendor || ix.Text.Vendor != info.Vendor:
			t.Errorf("TD %d: vendor %q, want %q", i, ix.Vendor.Name, info.Vendor)
		case ix.Titles["en"] != info.Title:
			t.Errorf("TD %d: title %q, want %q", i, ix.Titles["en"], info.Title)
		case !sameSet(slices.Collect(maps.Keys(ix.Titles)), info.Languages):
			t.Errorf("TD %d: title languages %q, want %q", i, slices.Sorted(maps.Keys(ix.Titles)), info.Languages)
		case !slices.Equal(ix.Types, info.Types):
			t.Errorf("TD %d: types %q, want %q", i, ix.Types, info.Types)
		case !slices.Equal(names(ix.Actions), info.Actions):
			t.Errorf("TD %d: actions %q, want %q", i, names(ix.Actions), info.Actions)
		case !slices.Equal(names(ix.Properties), info.Properties):
			t.Errorf("TD %d: properties %q, want %q", i, names(ix.Properties), info.Properties)
		case !slices.Equal(names(ix.Events), info.Events):
			t.Errorf("TD %d: events %q, want %q", i, names(ix.Events), info.Events)
		case !slices.Equal(ids, info.Capabilities):
			t.Errorf("TD %d: capabilities %q, want %q", i, ids, info.Capabilities)
		case !slices.Contains(ix.Schemes, "https"):
			t.Errorf("TD %d: schemes %q lack https", i, ix.Schemes)
		}
		unordered := ExtractIndex(doc)
		if !sameSet(names(unordered.Actions), info.Actions) || !sameSet(names(unordered.Properties), info.Properties) ||
			!sameSet(names(unordered.Events), info.Events) {
			t.Errorf("TD %d: ExtractIndex lists other affordances than ExtractIndexFrom", i)
		}
	}
}

// indexFuzzSeeds are the documents the fuzz test starts from.
func indexFuzzSeeds(t testing.TB) [][]byte {
	files := []string{"testdata/agent-4k.json"}
	err := filepath.WalkDir("testdata/corpus", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != "manifest.json" && strings.Contains(d.Name(), ".json") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	seeds := make([][]byte, 0, len(files))
	for _, f := range files {
		seeds = append(seeds, readIndexFile(t, f))
	}
	return seeds
}

func FuzzExtractIndex(f *testing.F) {
	for _, s := range indexFuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := DecodeJSON(raw)
		if err != nil {
			return
		}
		doc, ok := v.(map[string]any)
		if !ok {
			return
		}
		checkIndexInvariants(t, doc, ExtractIndex(doc))
		checkIndexInvariants(t, doc, ExtractIndexFrom(raw, doc))
		// Bytes that are not the document's must not matter beyond the order.
		checkIndexInvariants(t, doc, ExtractIndexFrom(raw[:len(raw)/2], doc))
	})
}

func BenchmarkExtractIndex(b *testing.B) {
	v := newTestValidator(b)
	for _, f := range []string{"testdata/agent-4k.json", "testdata/corpus/lmos/weather-agent.json"} {
		raw := readIndexFile(b, f)
		doc, err := v.Validate(raw)
		if err != nil {
			b.Fatalf("%s: %v", f, err)
		}
		b.Run(filepath.Base(f)+"/doc", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				ExtractIndex(doc)
			}
		})
		b.Run(filepath.Base(f)+"/raw", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				ExtractIndexFrom(raw, doc)
			}
		})
	}
}
