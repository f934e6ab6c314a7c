package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"
)

func TestDirectoryTD(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		r := f.get("/.well-known/wot").want(t, http.StatusOK)
		if ct := r.header.Get("Content-Type"); ct != "application/td+json" {
			t.Errorf("Content-Type %q", ct)
		}
		v, err := validator()
		if err != nil {
			t.Fatal(err)
		}
		doc, err := v.Validate(r.body)
		if err != nil {
			t.Fatalf("the directory's TD is not a valid TD: %v", err)
		}
		if doc["@type"] != "ThingDirectory" || doc["base"] != "http://dir.example:8080/" {
			t.Errorf("@type %v base %v", doc["@type"], doc["base"])
		}
		ctx := doc["@context"].([]any)
		if len(ctx) != 2 || ctx[1] != "https://www.w3.org/2022/wot/discovery" {
			t.Errorf("@context %v", ctx)
		}
		// The LMOS gateway: its HTTP endpoint relative to the base, its WebSocket absolute.
		forms := doc["actions"].(map[string]any)["sendMessage"].(map[string]any)["forms"].([]any)
		if len(forms) != 2 || forms[0].(map[string]any)["href"] != "things/{id}/messages{?consumer,session}" ||
			forms[1].(map[string]any)["href"] != "ws://dir.example:8080/lmos{?consumer,session}" || forms[1].(map[string]any)["subprotocol"] != "lmosprotocol" {
			t.Errorf("sendMessage forms %v", forms)
		}
		// Every response that has a body names its content type.
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, child := range v {
					if k == "response" || k == "additionalResponses" {
						responses, ok := child.([]any)
						if !ok {
							responses = []any{child}
						}
						for _, resp := range responses {
							if resp.(map[string]any)["contentType"] == nil {
								t.Errorf("response without contentType: %v", resp)
							}
						}
					}
					walk(child)
				}
			case []any:
				for _, child := range v {
					walk(child)
				}
			}
		}
		walk(doc)
	})
}

func TestDirectoryTDGatewaySocket(t *testing.T) {
	for base, want := range map[string]string{
		"http://dir.example:8080":      "ws://dir.example:8080/lmos{?consumer,session}",
		"https://dir.example/wot/":     "wss://dir.example/wot/lmos{?consumer,session}",
		"HTTPS://dir.example:8443/a/b": "wss://dir.example:8443/a/b/lmos{?consumer,session}",
		"http://[::1]:8080/directory/": "ws://[::1]:8080/directory/lmos{?consumer,session}",
	} {
		td, err := directoryTD(base, "test")
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Actions map[string]struct {
				Forms []struct {
					Href        string `json:"href"`
					Subprotocol string `json:"subprotocol"`
				} `json:"forms"`
			} `json:"actions"`
		}
		if err := json.Unmarshal(td, &doc); err != nil {
			t.Fatal(err)
		}
		forms := doc.Actions["sendMessage"].Forms
		if len(forms) != 2 || forms[1].Href != want || forms[1].Subprotocol != "lmosprotocol" {
			t.Errorf("base %s: WebSocket form %+v, want href %s", base, forms, want)
		}
	}
}

func TestHealth(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		if body := string(f.get("/healthz").want(t, http.StatusOK).body); body != `{"status":"ok"}` {
			t.Errorf("healthz: %s", body)
		}
		if body := string(f.get("/readyz").want(t, http.StatusOK).body); body != `{"status":"ready"}` {
			t.Errorf("readyz: %s", body)
		}
	})
}
