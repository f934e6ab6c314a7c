package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/migrations"
)

func tdWithID(id string) []byte {
	return fmt.Appendf(nil, `{"@context":"https://www.w3.org/2022/wot/td/v1.1","id":%q,"title":"durable","securityDefinitions":{"n":{"scheme":"nosec"}},"security":"n"}`, id)
}

// TestEmbeddedStoreSurvivesKill registers Things from concurrent clients, kills the process
// without warning, and checks that every acknowledged registration is there after a restart.
func TestEmbeddedStoreSurvivesKill(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "data", "lmosdir.db")
	p := serve(t, url)
	p.waitHealthy(t)

	const clients, perClient = 16, 25
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	for c := range clients {
		wg.Go(func() {
			for i := range perClient {
				id := fmt.Sprintf("urn:x:durable:%02d:%02d", c, i)
				res, body := request(t, http.MethodPut, p.url+"/things/"+id, "application/td+json", tdWithID(id))
				if res.StatusCode != http.StatusCreated {
					t.Errorf("PUT %s: %d %s", id, res.StatusCode, body)
					return
				}
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited

	again := serve(t, url)
	again.waitHealthy(t)
	_, body := request(t, http.MethodGet, again.url+"/things", "", nil)
	var tds []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &tds); err != nil {
		t.Fatalf("listing after restart: %v: %.200s", err, body)
	}
	stored := map[string]bool{}
	for _, td := range tds {
		stored[td.ID] = true
	}
	for _, id := range acked {
		if !stored[id] {
			t.Errorf("acknowledged %s is lost after kill -9", id)
		}
	}
	if len(acked) != clients*perClient {
		t.Errorf("%d of %d writes were acknowledged", len(acked), clients*perClient)
	}
}

func TestEmbeddedStoreIsDefaultAndExclusive(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	cmd := command(t, dir, "serve", fmt.Sprintf("--listen=127.0.0.1:%d", port))
	p := start(t, cmd, fmt.Sprintf("http://127.0.0.1:%d", port))
	p.waitHealthy(t)
	db := filepath.Join(dir, "data", "lmosdir.db")
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("the default data file: %v", err)
	}
	// The start log says where the data lives and which URL to open.
	p.waitLogged(t, db, "http://localhost:")

	// A second process on the same file fails at once with a clear message.
	start := time.Now()
	second := command(t, dir, "serve", fmt.Sprintf("--listen=127.0.0.1:%d", freePort(t)))
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "in use by another lmosdir process") || !strings.Contains(string(out), fmt.Sprint(p.cmd.Process.Pid)) {
		t.Errorf("second process on the same file: %v\n%s", err, out)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("the second process took %v to give up", elapsed)
	}
	if err := p.stop(t); err != nil {
		t.Fatal(err)
	}

	// The migrate command works on the embedded store too.
	version := command(t, dir, "migrate", "version")
	latest := migrations.Latest(migrations.SQLite, "sqlite")
	if out, err := version.CombinedOutput(); err != nil || !strings.Contains(string(out), fmt.Sprintf("version %d dirty false", latest)) {
		t.Errorf("migrate version on the embedded store: %v %q", err, out)
	}
}
