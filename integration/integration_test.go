// Package integration runs the built lmosdir binary against PostgreSQL and drives it over
// real sockets, as an operator and its clients would.
package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lmosdir/lmosdir/internal/pgtest"
	"github.com/lmosdir/lmosdir/internal/testsync"
	"github.com/lmosdir/lmosdir/migrations"
)

func TestMain(m *testing.M) {
	switch {
	case os.Getenv(discovererRole) != "":
		os.Exit(runDiscoverer())
	case os.Getenv(thingRole) != "":
		os.Exit(runThing())
	case os.Getenv(getRole) != "":
		os.Exit(runGet())
	}
	pgtest.Main(m)
}

var buildBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "lmosdir-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "lmosdir")
	out, err := osexec.CommandContext(context.Background(), "go", "build", "-race", "-ldflags", "-X main.version=itest", "-o", bin, "../cmd/lmosdir").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
})

func binary(t *testing.T) string {
	t.Helper()
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// lmosdir runs the binary to completion and returns its combined output.
func lmosdir(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

type process struct {
	cmd  *osexec.Cmd
	url  string
	logs *testsync.Buffer
	// exited is closed when the process has ended; err is its exit status then.
	exited chan struct{}
	err    error
}

// stop sends SIGTERM and waits for the exit, killing the process if it hangs.
func (p *process) stop(t *testing.T) error {
	t.Helper()
	select {
	case <-p.exited:
		return p.err
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("SIGTERM: %v", err)
	}
	select {
	case <-p.exited:
		return p.err
	case <-time.After(20 * time.Second):
		if err := p.cmd.Process.Kill(); err != nil {
			t.Errorf("kill: %v", err)
		}
		<-p.exited
		return errors.New("lmosdir did not stop within 20s of SIGTERM")
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// serve starts `lmosdir serve` on a free loopback port; it is stopped with SIGTERM at cleanup.
func serve(t *testing.T, databaseURL string, args ...string) *process {
	t.Helper()
	port := freePort(t)
	cmd := command(t, "", append([]string{"serve"}, args...)...)
	cmd.Env = append(cmd.Env,
		"LMOSDIR_DATABASE_URL="+databaseURL,
		fmt.Sprintf("LMOSDIR_LISTEN=127.0.0.1:%d", port),
	)
	return start(t, cmd, fmt.Sprintf("http://127.0.0.1:%d", port))
}

// command prepares the binary with text logs, in dir when it is not empty.
func command(t *testing.T, dir string, args ...string) *osexec.Cmd {
	t.Helper()
	// The process outlives the test's context on purpose: cleanup stops it with SIGTERM.
	cmd := osexec.CommandContext(context.WithoutCancel(t.Context()), binary(t), args...)
	cmd.Dir = dir
	// Processes of different tests must not answer for each other on the LAN.
	cmd.Env = append(os.Environ(), "LMOSDIR_LOG_FORMAT=text", "LMOSDIR_MDNS=false")
	return cmd
}

// start runs cmd in the background; it is stopped with SIGTERM at cleanup.
func start(t *testing.T, cmd *osexec.Cmd, url string) *process {
	t.Helper()
	p := &process{cmd: cmd, url: url, logs: &testsync.Buffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited: // the test ended it and judged how
		default:
			if err := p.stop(t); err != nil {
				t.Errorf("lmosdir exit: %v", err)
			}
		}
		if t.Failed() {
			t.Logf("lmosdir logs:\n%s", p.logs.String())
		}
	})
	return p
}

// waitLogged waits until the process's log holds each of wants, and reports those it still
// lacks after 10 s. The log arrives through a pipe, so a line may trail what it tells of.
func (p *process) waitLogged(t *testing.T, wants ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		logs := p.logs.String()
		var missing []string
		for _, want := range wants {
			if !strings.Contains(logs, want) {
				missing = append(missing, want)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("the log lacks %q:\n%s", missing, logs)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitHealthy polls /healthz until the process serves HTTP.
func (p *process) waitHealthy(t *testing.T) {
	t.Helper()
	p.waitOK(t, "/healthz")
}

// waitReady waits for /readyz to answer 200: a replica that has just started is rightly not
// ready until its store answers and it follows the directory's events.
func (p *process) waitReady(t *testing.T) {
	t.Helper()
	p.waitOK(t, "/readyz")
}

func (p *process) waitOK(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			t.Fatalf("lmosdir exited early: %v\n%s", p.err, p.logs.String())
		default:
		}
		if status, err := probe(t, p.url+path); err == nil && status == http.StatusOK {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("lmosdir %s did not answer 200\n%s", path, p.logs.String())
}

// probe asks for url once and reports the status, or why there was none.
func probe(t *testing.T, url string) (int, error) {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}

type reply struct {
	StatusCode int
	Header     http.Header
}

func request(t *testing.T, method, url, contentType string, body []byte) (reply, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{StatusCode: res.StatusCode, Header: res.Header}, data
}

func TestServeEndToEnd(t *testing.T) {
	db := pgtest.NewDatabase(t)
	p := serve(t, db)
	p.waitHealthy(t)
	td, err := os.ReadFile("../td/testdata/corpus/lmos/weather-agent.json")
	if err != nil {
		t.Fatal(err)
	}
	const id = "urn:uuid:6f1d3a7a-1f97-4e6b-b45f-f3c2e1c84c77"
	if res, body := request(t, http.MethodPut, p.url+"/things/"+id, "application/td+json", td); res.StatusCode != http.StatusCreated {
		t.Fatalf("PUT: %d %s", res.StatusCode, body)
	}
	res, body := request(t, http.MethodGet, p.url+"/things/"+id, "", nil)
	if res.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"registration":{"created":`)) || !bytes.Contains(body, []byte(`"title": "WeatherAgent"`)) {
		t.Fatalf("GET: %d %s", res.StatusCode, body)
	}
	res, body = request(t, http.MethodGet, p.url+"/things?limit=10", "", nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Header.Get("Link"), `rel="canonical"`) || !bytes.HasPrefix(body, []byte("[{")) {
		t.Fatalf("list: %d %v %s", res.StatusCode, res.Header, body)
	}
	res, body = request(t, http.MethodGet, p.url+"/.well-known/wot", "", nil)
	if res.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"base":"http://localhost:`)) {
		t.Fatalf("well-known: %d %s", res.StatusCode, body)
	}
	p.waitReady(t)

	// SIGTERM drains and exits cleanly.
	if err := p.stop(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	if !strings.Contains(p.logs.String(), "shutting down") {
		t.Errorf("no shutdown log:\n%s", p.logs.String())
	}

	// What was acknowledged is there after a restart.
	again := serve(t, db)
	again.waitHealthy(t)
	if res, body := request(t, http.MethodGet, again.url+"/things/"+id, "", nil); res.StatusCode != http.StatusOK {
		t.Fatalf("GET after restart: %d %s", res.StatusCode, body)
	}
}

func TestMigrateCommands(t *testing.T) {
	db := pgtest.NewDatabase(t)
	env := []string{"LMOSDIR_DATABASE_URL=" + db}

	// Without migrations the server runs but is not ready, and says what to do.
	p := serve(t, db, "--migrate-on-start=false")
	p.waitHealthy(t)
	res, body := request(t, http.MethodGet, p.url+"/readyz", "", nil)
	if res.StatusCode != http.StatusServiceUnavailable || !bytes.Contains(body, []byte("lmosdir migrate up")) {
		t.Fatalf("readyz before migrating: %d %s", res.StatusCode, body)
	}

	if out, err := lmosdir(t, env, "migrate", "up"); err != nil {
		t.Fatalf("migrate up: %v\n%s", err, out)
	}
	p.waitReady(t)
	latest := migrations.Latest(migrations.Postgres, "postgres")
	out, err := lmosdir(t, env, "migrate", "version")
	if err != nil || !strings.Contains(out, fmt.Sprintf("version %d dirty false", latest)) {
		t.Fatalf("migrate version: %v %q", err, out)
	}
	if out, err := lmosdir(t, env, "migrate", "down", "1"); err != nil {
		t.Fatalf("migrate down: %v\n%s", err, out)
	}
	if res, body := request(t, http.MethodGet, p.url+"/readyz", "", nil); res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("readyz after migrating down: %d %s", res.StatusCode, body)
	}
	if out, err := lmosdir(t, env, "migrate", "version"); err != nil || !strings.Contains(out, fmt.Sprintf("version %d dirty false", latest-1)) {
		t.Fatalf("migrate version after down: %v %q", err, out)
	}
	// force only records a version: after it the schema is reported as the latest again.
	if out, err := lmosdir(t, env, "migrate", "force", fmt.Sprint(latest)); err != nil {
		t.Fatalf("migrate force: %v\n%s", err, out)
	}
	if out, err := lmosdir(t, env, "migrate", "version"); err != nil || !strings.Contains(out, fmt.Sprintf("version %d dirty false", latest)) {
		t.Fatalf("migrate version after force: %v %q", err, out)
	}
	if out, err := lmosdir(t, env, "migrate", "down", "x"); err == nil || !strings.Contains(out, "not a valid number") {
		t.Fatalf("migrate down x: %v %q", err, out)
	}
}

func TestReplicasStartTogether(t *testing.T) {
	db := pgtest.NewDatabase(t)
	var procs []*process
	for range 3 {
		procs = append(procs, serve(t, db))
	}
	for _, p := range procs {
		p.waitReady(t)
	}
	// A write through one replica is read through another.
	td := `{"@context":"https://www.w3.org/2022/wot/td/v1.1","id":"urn:x:shared","title":"s","securityDefinitions":{"n":{"scheme":"nosec"}},"security":"n"}`
	if res, body := request(t, http.MethodPut, procs[0].url+"/things/urn:x:shared", "application/td+json", []byte(td)); res.StatusCode != http.StatusCreated {
		t.Fatalf("PUT: %d %s", res.StatusCode, body)
	}
	if res, body := request(t, http.MethodGet, procs[2].url+"/things/urn:x:shared", "", nil); res.StatusCode != http.StatusOK {
		t.Fatalf("GET on another replica: %d %s", res.StatusCode, body)
	}
}

func TestCommandLine(t *testing.T) {
	out, err := lmosdir(t, nil, "version")
	if err != nil || strings.TrimSpace(out) != "lmosdir itest" {
		t.Errorf("version: %v %q", err, out)
	}
	out, err = lmosdir(t, []string{"LMOSDIR_DATABASE_URL=", "LMOSDIR_MAX_PAGE_SIZE=many"}, "serve", "--database-url", "postgres://x")
	if err == nil || !strings.Contains(out, "LMOSDIR_MAX_PAGE_SIZE") {
		t.Errorf("bad variable: %v %q", err, out)
	}
	out, err = lmosdir(t, []string{"LMOSDIR_DATABASE_URL="}, "serve", "--database-url", "mysql://x")
	if err == nil || !strings.Contains(out, "postgres://") {
		t.Errorf("unsupported database: %v %q", err, out)
	}
	out, err = lmosdir(t, nil, "frobnicate")
	if err == nil || !strings.Contains(out, "unknown command") {
		t.Errorf("unknown command: %v %q", err, out)
	}
}

func TestExpiredThingsArePurged(t *testing.T) {
	db := pgtest.NewDatabase(t)
	p := serve(t, db, "--purge-interval=200ms")
	p.waitHealthy(t)
	td := `{"@context":"https://www.w3.org/2022/wot/td/v1.1","id":"urn:x:brief","title":"b","securityDefinitions":{"n":{"scheme":"nosec"}},"security":"n","registration":{"ttl":1}}`
	if res, body := request(t, http.MethodPut, p.url+"/things/urn:x:brief", "application/td+json", []byte(td)); res.StatusCode != http.StatusCreated {
		t.Fatalf("PUT: %d %s", res.StatusCode, body)
	}
	conn, err := pgx.Connect(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	deadline := time.Now().Add(15 * time.Second)
	for {
		var rows int
		if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM things WHERE id = 'urn:x:brief'`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the expired Thing is still stored 15s after registering it with ttl 1")
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.waitLogged(t, "purged expired things")
}
