package integration

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExpansionAfterRestartAndSearchCommand imports TDs while no server runs, so none is
// expanded; the server started afterwards expands them without being asked, and lmosdir
// search finds them over HTTP.
func TestExpansionAfterRestartAndSearchCommand(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	env := []string{"LMOSDIR_DATABASE_URL=", "LMOSDIR_DATA_DIR=" + dataDir}
	if out, err := lmosdir(t, env, "import", "--generate", "30", "--seed", "5"); err != nil {
		t.Fatalf("import --generate: %v\n%s", err, out)
	}
	cmd := command(t, "", "import")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(`{"@context": ["https://www.w3.org/2022/wot/td/v1.1", "https://contexts.example/agents.jsonld"], ` +
		`"id": "urn:x:remote", "@type": "lmos:Agent", "title": "Remote context agent", ` +
		`"securityDefinitions": {"n": {"scheme": "nosec"}}, "security": "n"}` + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}

	p := serve(t, "sqlite://"+filepath.Join(dataDir, "lmosdir.db"))
	p.waitHealthy(t)
	deadline := time.Now().Add(time.Minute)
	for {
		_, body := request(t, http.MethodGet, p.url+"/things/urn:x:remote", "", nil)
		var td struct {
			Registration struct {
				Expansion *struct {
					Complete bool
					Reason   string
				}
			}
		}
		if err := json.Unmarshal(body, &td); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		if x := td.Registration.Expansion; x != nil {
			if x.Complete || !strings.Contains(x.Reason, "https://contexts.example/agents.jsonld") {
				t.Fatalf("expansion %+v", x)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the TD imported before the start was not expanded within a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}

	out, err := lmosdir(t, nil, "search", "--url", p.url, "--kind", "agent", "remote", "context")
	if err != nil || !strings.Contains(out, "urn:x:remote") || !strings.Contains(out, "kind: agent 1") {
		t.Fatalf("lmosdir search: %v\n%s", err, out)
	}
	out, err = lmosdir(t, nil, "search", "--url", p.url, "--jsonpath", "$[?@.title=='Remote context agent'].id")
	if err != nil || !strings.Contains(out, `"urn:x:remote"`) {
		t.Fatalf("lmosdir search --jsonpath: %v\n%s", err, out)
	}
	out, err = lmosdir(t, nil, "search", "--url", p.url, "--kind", "robot")
	if err == nil || !strings.Contains(out, `unknown kind "robot"`) {
		t.Fatalf("lmosdir search with a bad kind: %v\n%s", err, out)
	}
}
