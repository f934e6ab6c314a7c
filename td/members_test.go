package td

import (
	"encoding/json"
	"testing"
)

func TestPrepare(t *testing.T) {
	tests := []struct {
		name, in, id, want string
	}{
		{
			name: "string context gains the discovery context",
			in:   `{"@context": "https://www.w3.org/2022/wot/td/v1.1", "id": "urn:x", "n": 1.0e2}`,
			want: `{"@context": ["https://www.w3.org/2022/wot/td/v1.1","https://www.w3.org/2022/wot/discovery"], "id": "urn:x", "n": 1.0e2}`,
		},
		{
			name: "array context gains it at the end",
			in:   "{\n  \"@context\": [\n    \"https://www.w3.org/2022/wot/td/v1.1\",\n    {\"lmos\": \"https://eclipse.dev/lmos/protocol/v1\"}\n  ],\n  \"id\": \"urn:x\"\n}",
			want: "{\n  \"@context\": [\n    \"https://www.w3.org/2022/wot/td/v1.1\",\n    {\"lmos\": \"https://eclipse.dev/lmos/protocol/v1\"},\"https://www.w3.org/2022/wot/discovery\"\n  ],\n  \"id\": \"urn:x\"\n}",
		},
		{
			name: "context already naming discovery is kept",
			in:   `{"@context":["https://www.w3.org/2022/wot/td/v1.1","https://www.w3.org/2022/wot/discovery"],"id":"urn:x"}`,
			want: `{"@context":["https://www.w3.org/2022/wot/td/v1.1","https://www.w3.org/2022/wot/discovery"],"id":"urn:x"}`,
		},
		{
			name: "legacy discovery context is recognized",
			in:   `{"@context":["https://www.w3.org/2022/wot/td/v1.1","https://w3c.github.io/wot-discovery/context/discovery-context.jsonld"],"id":"urn:x"}`,
			want: `{"@context":["https://www.w3.org/2022/wot/td/v1.1","https://w3c.github.io/wot-discovery/context/discovery-context.jsonld"],"id":"urn:x"}`,
		},
		{
			name: "registration is removed wherever it is",
			in:   `{"registration": {"ttl": 5}, "id": "urn:x", "title": "t", "registration2": 1}`,
			want: `{ "id": "urn:x", "title": "t", "registration2": 1}`,
		},
		{
			name: "registration last",
			in:   "{\"id\": \"urn:x\",\n \"registration\": {\"created\": \"x\"}\n}",
			want: "{\"id\": \"urn:x\"\n}",
		},
		{
			name: "anonymous TD gets the id first",
			in:   `{"title": "a\"}", "x": [1, {"y": "}"}]}`,
			id:   "urn:uuid:1\u2028\"",
			want: `{"id":"urn:uuid:1\u2028\"","title": "a\"}", "x": [1, {"y": "}"}]}`,
		},
		{
			name: "existing id is kept",
			in:   `{"title": "t", "id": "urn:mine"}`,
			id:   "urn:other",
			want: `{"title": "t", "id": "urn:mine"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Prepare([]byte(tt.in), tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("\n got: %s\nwant: %s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("result is not valid JSON: %s", got)
			}
		})
	}
	if _, err := Prepare([]byte(`[1]`), ""); err == nil {
		t.Error("Prepare accepted an array")
	}
}

func TestAppendMember(t *testing.T) {
	got := AppendMember([]byte("prefix:"), []byte("{\"a\": 1\n}\n"), "registration", []byte(`{"ttl":1}`))
	if want := "prefix:{\"a\": 1,\"registration\":{\"ttl\":1}\n}\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := AppendMember(nil, []byte("{ }"), "k", []byte("1")); string(got) != `{"k":1 }` {
		t.Errorf("empty object: %q", got)
	}
}

func BenchmarkPrepare(b *testing.B) {
	doc := []byte(`{"@context": ["https://www.w3.org/2022/wot/td/v1.1", {"lmos": "https://eclipse.dev/lmos/protocol/v1"}], "title": "t", "registration": {"ttl": 60}, "properties": {"p": {"type": "string", "forms": [{"href": "https://example.com/p"}]}}}`)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := Prepare(doc, "urn:uuid:6f1d3a7a-1f97-4e6b-b45f-f3c2e1c84c77"); err != nil {
			b.Fatal(err)
		}
	}
}
