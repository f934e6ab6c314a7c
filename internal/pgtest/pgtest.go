// Package pgtest gives each test its own empty PostgreSQL database.
//
// The server comes from LMOSDIR_TEST_DATABASE_URL when it is set (make test
// sets it through scripts/with-postgres.sh). Otherwise the first NewDatabase
// of a test process starts a throwaway cluster from the local PostgreSQL
// server binaries, or, when there are none, a container through
// testcontainers-go if a Docker engine answers. Packages that use NewDatabase
// call Main from their TestMain so that this server is stopped and removed:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// Without any of these the tests are skipped, except under CI=true, where a
// missing database is a failure.
package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
)

// EnvURL names the variable holding the URL of a server the tests may use.
// Its role must be allowed to create and drop databases.
const EnvURL = "LMOSDIR_TEST_DATABASE_URL"

const (
	dbPrefix  = "lmosdir_test_"
	dirPrefix = "lmosdir-pgtest-"
	// containerImage matches the server of docker-compose.yml.
	containerImage = "postgres:17"
)

// server is a PostgreSQL server that this process started and must stop.
type server struct {
	url  string // superuser URL of the "postgres" database
	what string // for messages
	dir  string // the cluster's directory, for a local cluster
	stop func() error
	// postmaster is the local cluster's server process.
	postmaster *postmaster
}

var (
	mu       sync.Mutex
	attempt  bool
	started  *server
	startErr error
)

// Main runs the tests of a package and then stops the server NewDatabase may
// have started. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if err := shutdown(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: stopping the test server: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func shutdown() error {
	mu.Lock()
	defer mu.Unlock()
	s := started
	started = nil
	// A later NewDatabase (there should be none) must not reuse a dead server.
	attempt, startErr = true, errors.New("pgtest: the test server was already stopped by pgtest.Main")
	if s == nil {
		return nil
	}
	return s.stop()
}

// NewDatabase returns the URL of a new, empty database that is dropped when
// the test ends. It is safe to call from parallel tests.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	admin := adminURL(tb)

	name, err := randomName()
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	dbURL, err := withDatabase(admin, name)
	if err != nil {
		tb.Fatalf("pgtest: %s: %v", EnvURL, err)
	}

	ctx, cancel := context.WithTimeout(tb.Context(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Fatalf("pgtest: connecting to the test server: %v", err)
	}
	defer func() { _ = conn.Close(context.Background()) }()

	// template0 and an explicit C locale give the same database whatever the
	// server's defaults or whatever someone installed into template1.
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident+
		" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"); err != nil {
		tb.Fatalf("pgtest: creating database %s: %v", name, err)
	}

	tb.Cleanup(func() {
		// The test's context is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			tb.Errorf("pgtest: connecting to drop database %s: %v", name, err)
			return
		}
		defer func() { _ = conn.Close(context.Background()) }()
		// FORCE: a pool the test forgot to close must not keep the database.
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			tb.Errorf("pgtest: dropping database %s: %v", name, err)
		}
	})
	return dbURL
}

func randomName() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random database name: %w", err)
	}
	return dbPrefix + hex.EncodeToString(b), nil
}

// withDatabase returns rawURL with its database replaced by name.
func withDatabase(rawURL, name string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("not a URL: %w", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return "", fmt.Errorf("want a postgres:// URL, got scheme %q", u.Scheme)
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}

// adminURL returns the URL of the server to create databases on, starting
// one at the first call if needed; it ends the test when there is none.
func adminURL(tb testing.TB) string {
	tb.Helper()
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	mu.Lock()
	defer mu.Unlock()
	if !attempt {
		attempt = true
		started, startErr = startServer()
		if started != nil {
			tb.Logf("pgtest: %s unset; started %s", EnvURL, started.what)
		}
	}
	if started == nil {
		unavailable(tb, startErr)
	}
	return started.url
}

// unavailable ends a test that cannot have a database: a failure in CI, where
// the setup is broken, and a skip on a developer's machine without PostgreSQL.
func unavailable(tb testing.TB, err error) {
	tb.Helper()
	msg := fmt.Sprintf("pgtest: no PostgreSQL server for tests: %s is unset and %v.\n"+
		"Fix: run the tests as `make test` or `scripts/with-postgres.sh go test ./...` "+
		"(as root it installs Debian's postgresql package), "+
		"or install the PostgreSQL server binaries (apt-get install postgresql), "+
		"or set %s to a postgres:// URL of a role that may create databases", EnvURL, err, EnvURL)
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg + "\n(skipped, not failed, because CI is not \"true\")")
}

func startServer() (*server, error) {
	bindir, localErr := findBinDir()
	if localErr == nil {
		s, err := startLocal(bindir)
		if err == nil {
			return s, nil
		}
		localErr = fmt.Errorf("starting a cluster from %s failed: %w", bindir, err)
	}
	s, dockerErr := startContainer()
	if dockerErr == nil {
		return s, nil
	}
	return nil, fmt.Errorf("%w; and testcontainers-go could not be used: %w", localErr, dockerErr)
}

// serverPrograms are the binaries startLocal runs.
var serverPrograms = []string{"initdb", "postgres"}

// findBinDir returns the first directory holding the PostgreSQL server
// programs. pg_config may come from libpq-dev without a server, so each
// candidate is checked rather than trusted.
func findBinDir() (string, error) {
	var dirs []string
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	// Debian's layout, newest major version first.
	versioned, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(versioned, func(a, b string) int {
		return majorVersion(b) - majorVersion(a)
	})
	dirs = append(dirs, versioned...)
	for _, prog := range serverPrograms {
		if p, err := exec.LookPath(prog); err == nil {
			dirs = append(dirs, filepath.Dir(p))
		}
	}
	for _, dir := range dirs {
		if hasPrograms(dir) {
			return dir, nil
		}
	}
	return "", errors.New("no PostgreSQL server binaries (initdb, postgres) were found " +
		"in `pg_config --bindir`, /usr/lib/postgresql/*/bin or PATH")
}

func majorVersion(bindir string) int {
	v, err := strconv.Atoi(filepath.Base(filepath.Dir(bindir)))
	if err != nil {
		return -1
	}
	return v
}

func hasPrograms(dir string) bool {
	if dir == "" {
		return false
	}
	for _, prog := range serverPrograms {
		fi, err := os.Stat(filepath.Join(dir, prog))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// errPortTaken reports that another process bound the port first.
var errPortTaken = errors.New("port already in use")

// startLocal creates a cluster in a temporary directory and starts it as a
// child of this process on a free port of 127.0.0.1.
//
// If the process dies without Main (a panic in a test, a timeout, a signal),
// the kernel stops the server (Pdeathsig) and the next test process that
// starts a cluster removes the directory (sweepStale).
func startLocal(bindir string) (s *server, err error) {
	sweepStale()

	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	// The pid in the name tells sweepStale whether the owner is still alive.
	dir, err := os.MkdirTemp("", dirPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, fmt.Errorf("creating the cluster directory: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, fmt.Errorf("handing %s to the server's user: %w", dir, err)
		}
	}

	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	initdb := exec.CommandContext(ctx, filepath.Join(bindir, "initdb"),
		"-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}

	for range 10 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		c, err := launch(bindir, dir, port, cred)
		if errors.Is(err, errPortTaken) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &server{
			url:  fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
			what: fmt.Sprintf("a PostgreSQL cluster from %s on 127.0.0.1:%d in %s", bindir, port, dir),
			dir:  dir,
			stop: func() error {
				c.stop()
				return os.RemoveAll(dir)
			},
			postmaster: c,
		}, nil
	}
	return nil, errors.New("found no free TCP port for PostgreSQL after 10 tries")
}

// serverCredential returns the unprivileged account the server runs as when
// this process is root, since initdb and postgres refuse to run as root.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var errs []error
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			errs = append(errs, fmt.Errorf("user %s has a non-numeric uid or gid", name))
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("running as root and no account to run PostgreSQL as: %w", errors.Join(errs...))
}

func freePort() (int, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type postmaster struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc // stops the postmaster
	done   chan struct{}      // closed when the postmaster has exited
}

func launch(bindir, dir string, port int, cred *syscall.Credential) (*postmaster, error) {
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating the server log: %w", err)
	}
	defer func() { _ = logFile.Close() }()

	ctx, cancel := context.WithCancel(context.Background())
	// fsync=off keeps what a commit wrote in the kernel's cache, which survives the server's
	// crash (Cluster.Restart) though not the machine's. synchronous_commit stays on: off, a
	// crash would lose commits already acknowledged, which no production server does.
	cmd := exec.CommandContext(ctx, filepath.Join(bindir, "postgres"),
		"-D", filepath.Join(dir, "data"),
		"-p", strconv.Itoa(port),
		"-k", dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=300",
		"-c", "fsync=off",
		"-c", "full_page_writes=off",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Immediate shutdown: the data is deleted next, a checkpoint would be waste.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 30 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: cred,
		// SIGQUIT is PostgreSQL's immediate shutdown: the postmaster takes its
		// backends down with it.
		Pdeathsig: syscall.SIGQUIT,
		// A Ctrl-C meant for the tests must not stop the server under them;
		// it goes away with this process anyway.
		Setpgid: true,
	}

	p := &postmaster{cmd: cmd, cancel: cancel, done: make(chan struct{})}
	startErr := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that forked the child ends, not the
		// process (prctl(2)), and Go may end idle threads: pin the thread for
		// as long as the server lives. Returning locked then retires the thread.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			cancel()
			startErr <- err
			return
		}
		startErr <- nil
		_ = cmd.Wait()
		cancel()
		close(p.done)
	}()
	if err := <-startErr; err != nil {
		return nil, fmt.Errorf("starting postgres: %w", err)
	}

	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", port)
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case <-p.done:
			log, _ := os.ReadFile(logPath)
			if bytes.Contains(log, []byte("could not bind")) || bytes.Contains(log, []byte("already in use")) {
				return nil, errPortTaken
			}
			return nil, fmt.Errorf("postgres exited: %s\n%s", cmd.ProcessState, log)
		default:
		}
		if ready(url) {
			return p, nil
		}
		if time.Now().After(deadline) {
			p.stop()
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("postgres did not accept connections within a minute:\n%s", log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ready(url string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return false
	}
	_ = conn.Close(ctx)
	return true
}

// stop shuts the postmaster down and waits for it; cmd.WaitDelay bounds the
// wait by killing it.
func (p *postmaster) stop() {
	p.cancel()
	<-p.done
}

// sweepStale removes cluster directories whose test process has died without
// Main, and stops a server still running there.
func sweepStale() {
	entries, err := os.ReadDir(os.TempDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), dirPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || alive(pid) {
			continue
		}
		dir := filepath.Join(os.TempDir(), e.Name())
		stopOrphan(dir)
		_ = os.RemoveAll(dir)
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// stopOrphan stops the postmaster of dir if one survived its parent. It checks
// the command line so that a recycled pid is never signaled.
func stopOrphan(dir string) {
	pidFile, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		return
	}
	first, _, _ := strings.Cut(string(pidFile), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGQUIT)
}

// startContainer runs PostgreSQL in a container when a Docker engine answers.
// The container is removed by Main, or by testcontainers' reaper when this
// process dies first.
func startContainer() (s *server, err error) {
	// testcontainers panics in places when it finds no Docker host.
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("no Docker engine: %v", r)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	quiet := testcontainers.WithLogger(tclog.NewNoopLogger())
	provider, err := testcontainers.NewDockerProvider(quiet)
	if err != nil {
		return nil, fmt.Errorf("no Docker engine: %w", err)
	}
	healthErr := provider.Health(ctx)
	_ = provider.Close()
	if healthErr != nil {
		return nil, fmt.Errorf("no Docker engine answered: %w", healthErr)
	}

	ctr, err := tcpostgres.Run(ctx, containerImage,
		quiet,
		tcpostgres.WithDatabase("postgres"),
		tcpostgres.WithUsername("postgres"),
		tcpostgres.WithPassword("postgres"),
		tcpostgres.BasicWaitStrategies(),
		testcontainers.WithCmd("postgres",
			"-c", "max_connections=300",
			"-c", "fsync=off",
			"-c", "full_page_writes=off"),
	)
	if err != nil {
		_ = testcontainers.TerminateContainer(ctr)
		return nil, fmt.Errorf("starting a %s container: %w", containerImage, err)
	}
	connURL, err := ctr.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		_ = testcontainers.TerminateContainer(ctr)
		return nil, fmt.Errorf("reading the container's address: %w", err)
	}
	return &server{
		url:  connURL,
		what: "a " + containerImage + " container through testcontainers-go",
		stop: func() error { return testcontainers.TerminateContainer(ctr) },
	}, nil
}

// Cluster is a PostgreSQL server of one test's own, for tests that stop or restart the
// server under the code they test.
type Cluster struct {
	bindir string
	dir    string
	port   int
	cred   *syscall.Credential
	pm     *postmaster
	// URL is the superuser URL of the cluster's "postgres" database; it stays the same
	// across restarts.
	URL string
}

// NewCluster starts a cluster from the local server binaries, stopped and removed when
// the test ends. Without the binaries the test fails under CI=true and is skipped
// elsewhere.
func NewCluster(tb testing.TB) *Cluster {
	tb.Helper()
	bindir, err := findBinDir()
	if err != nil {
		unavailable(tb, err)
	}
	s, err := startLocal(bindir)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.stop(); err != nil {
			tb.Errorf("pgtest: stopping the cluster: %v", err)
		}
	})
	u, err := url.Parse(s.url)
	if err != nil {
		tb.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		tb.Fatal(err)
	}
	cred, err := serverCredential()
	if err != nil {
		tb.Fatal(err)
	}
	c := &Cluster{bindir: bindir, dir: s.dir, port: port, cred: cred, URL: s.url}
	c.pm = s.postmaster
	s.stop = func() error {
		c.pm.stop()
		return os.RemoveAll(c.dir)
	}
	return c
}

// Restart stops the server at once, as a crash would (every connection breaks), and
// starts it again on the same port.
func (c *Cluster) Restart(tb testing.TB) {
	tb.Helper()
	c.pm.stop()
	// The old server's socket may hold the port for a moment.
	for try := 0; ; try++ {
		pm, err := launch(c.bindir, c.dir, c.port, c.cred)
		if errors.Is(err, errPortTaken) && try < 20 {
			time.Sleep(250 * time.Millisecond)
			continue
		}
		if err != nil {
			tb.Fatalf("pgtest: restarting the cluster: %v", err)
		}
		c.pm = pm
		return
	}
}
