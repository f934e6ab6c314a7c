package integration

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

func TestImportCommand(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	env := []string{"LMOSDIR_DATABASE_URL=", "LMOSDIR_DATA_DIR=" + dataDir}
	out, err := lmosdir(t, env, "import", "--generate", "50", "--seed", "3")
	if err != nil || !strings.Contains(out, "imported 50 Things") || !strings.Contains(out, "0 failed") {
		t.Fatalf("import --generate: %v\n%s", err, out)
	}

	// NDJSON on standard input: two TDs (one anonymous) and one that is not valid.
	cmd := command(t, "", "import")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(string(tdWithID("urn:x:imported")) + "\n\n" +
		`{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"anon","securityDefinitions":{"n":{"scheme":"nosec"}},"security":"n"}` + "\n" +
		`{"@context":"https://www.w3.org/2022/wot/td/v1.1","id":"urn:x:bad","title":"no security"}` + "\n")
	raw, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(raw), "imported 2 Things") || !strings.Contains(string(raw), "1 of 3 TDs were not imported") || !strings.Contains(string(raw), "lmosdir import: line 4: ") {
		t.Fatalf("import of NDJSON with a bad line: %v\n%s", err, raw)
	}

	p := serve(t, "sqlite://"+filepath.Join(dataDir, "lmosdir.db"))
	p.waitHealthy(t)
	_, body := request(t, http.MethodGet, p.url+"/things?format=collection&limit=1", "", nil)
	var collection struct{ Total int }
	if err := json.Unmarshal(body, &collection); err != nil || collection.Total != 52 {
		t.Fatalf("after the imports: %v %s", err, body)
	}
	if res, body := request(t, http.MethodGet, p.url+"/things/urn:lmosdir:gen:3:0000049", "", nil); res.StatusCode != http.StatusOK {
		t.Fatalf("a generated Thing: %d %s", res.StatusCode, body)
	}
}
