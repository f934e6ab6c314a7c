package pgtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func queryInt(t *testing.T, conn *pgx.Conn, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(t.Context(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

const userRelations = `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'`

func databaseExists(t *testing.T, name string) bool {
	t.Helper()
	admin := connect(t, adminURL(t))
	return queryInt(t, admin, "SELECT count(*) FROM pg_database WHERE datname = $1", name) == 1
}

func dbName(t *testing.T, url string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Database
}

func TestTwoDatabasesAreDistinctEmptyAndWorking(t *testing.T) {
	t.Parallel()
	url1, url2 := NewDatabase(t), NewDatabase(t)
	if url1 == url2 {
		t.Fatalf("both calls returned %s", url1)
	}
	c1, c2 := connect(t, url1), connect(t, url2)
	for _, c := range []struct {
		conn *pgx.Conn
		url  string
	}{{c1, url1}, {c2, url2}} {
		var current string
		if err := c.conn.QueryRow(t.Context(), "SELECT current_database()").Scan(&current); err != nil {
			t.Fatal(err)
		}
		if want := dbName(t, c.url); current != want || !strings.HasPrefix(current, dbPrefix) {
			t.Errorf("connected to %q, want %q with prefix %q", current, want, dbPrefix)
		}
		if n := queryInt(t, c.conn, userRelations); n != 0 {
			t.Errorf("%s: new database has %d relations", current, n)
		}
	}

	if _, err := c1.Exec(t.Context(), "CREATE TABLE things (id text PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c1.Exec(t.Context(), "INSERT INTO things VALUES ('urn:a')"); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, c1, "SELECT count(*) FROM things"); n != 1 {
		t.Errorf("first database: %d rows, want 1", n)
	}
	if n := queryInt(t, c2, userRelations); n != 0 {
		t.Errorf("a table created in the first database shows in the second (%d relations)", n)
	}
}

func TestDatabaseIsUTF8WithCCollation(t *testing.T) {
	t.Parallel()
	conn := connect(t, NewDatabase(t))
	var enc, collate string
	err := conn.QueryRow(t.Context(), `SELECT pg_encoding_to_char(encoding), datcollate
		FROM pg_database WHERE datname = current_database()`).Scan(&enc, &collate)
	if err != nil {
		t.Fatal(err)
	}
	if enc != "UTF8" || collate != "C" {
		t.Errorf("encoding %s, collation %s; want UTF8, C", enc, collate)
	}
}

func TestDatabaseIsDroppedAfterCleanup(t *testing.T) {
	t.Parallel()
	var name string
	outer := t
	t.Run("user", func(t *testing.T) {
		url := NewDatabase(t)
		name = dbName(t, url)
		// A connection still open at the drop must not keep the database.
		conn, err := pgx.Connect(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		outer.Cleanup(func() { _ = conn.Close(context.Background()) })
		if !databaseExists(t, name) {
			t.Fatalf("database %s does not exist during the test", name)
		}
	})
	if name == "" {
		t.Fatal("subtest did not run")
	}
	if databaseExists(t, name) {
		t.Errorf("database %s still exists after the subtest's cleanup", name)
	}
}

func TestParallelCalls(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]bool{}
	for i := range 8 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			url := NewDatabase(t)
			mu.Lock()
			dup := seen[url]
			seen[url] = true
			mu.Unlock()
			if dup {
				t.Errorf("%s handed out twice", url)
			}
			conn := connect(t, url)
			if _, err := conn.Exec(t.Context(), "CREATE TABLE t (n int)"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestWithDatabase(t *testing.T) {
	t.Parallel()
	got, err := withDatabase("postgres://u:p@h:5/postgres?sslmode=disable", "lmosdir_test_x")
	if err != nil || got != "postgres://u:p@h:5/lmosdir_test_x?sslmode=disable" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := withDatabase("host=h dbname=postgres", "x"); err == nil {
		t.Error("a keyword/value string was accepted")
	}
}

// fakeTB records how unavailable ends a test. Fatal and Skip stop the calling
// goroutine, as the real ones do.
type fakeTB struct {
	testing.TB
	ended string
	msg   string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatal(args ...any) {
	f.ended, f.msg = "fatal", fmt.Sprint(args...)
	runtime.Goexit()
}
func (f *fakeTB) Skip(args ...any) {
	f.ended, f.msg = "skip", fmt.Sprint(args...)
	runtime.Goexit()
}

func TestUnavailableFailsInCIAndSkipsElsewhere(t *testing.T) {
	for _, tc := range []struct{ ci, want string }{{"true", "fatal"}, {"", "skip"}, {"false", "skip"}} {
		t.Setenv("CI", tc.ci)
		f := &fakeTB{}
		done := make(chan struct{})
		go func() {
			defer close(done)
			unavailable(f, errors.New("no binaries here"))
		}()
		<-done
		if f.ended != tc.want {
			t.Errorf("CI=%q: test ended with %q, want %q", tc.ci, f.ended, tc.want)
		}
		for _, part := range []string{EnvURL, "no binaries here", "with-postgres.sh", "apt-get install postgresql"} {
			if !strings.Contains(f.msg, part) {
				t.Errorf("CI=%q: message lacks %q: %s", tc.ci, part, f.msg)
			}
		}
	}
}

// needBinaries returns the server binaries' directory; without them the test
// fails in CI (make test installs them) and is skipped elsewhere.
func needBinaries(t *testing.T) string {
	t.Helper()
	bindir, err := findBinDir()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return bindir
}

// running reports whether pid is a live process; a zombie counts as gone,
// since a container's init may be slow to reap what it inherits.
func running(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

func postmasterPID(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func waitGone(pid int, within time.Duration) bool {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if !running(pid) {
			return true
		}
	}
	return false
}

// The self-started cluster is exercised here even when EnvURL is set, which
// is how make test runs, so that CI covers it.
func TestLocalClusterStartsAndIsRemoved(t *testing.T) {
	t.Parallel()
	s, err := startLocal(needBinaries(t))
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = s.stop()
		}
	})
	conn := connect(t, s.url)
	if n := queryInt(t, conn, "SELECT current_setting('max_connections')::int"); n != 300 {
		t.Errorf("max_connections = %d, want 300", n)
	}
	_ = conn.Close(t.Context())
	pid := postmasterPID(t, s.dir)

	stopped = true
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cluster directory %s remains: %v", s.dir, err)
	}
	if running(pid) {
		t.Errorf("postmaster %d still runs after stop", pid)
	}
}

const helperEnv = "PGTEST_PANIC_HELPER"

// A test process that dies without Main must not leave a server behind, and
// its directory goes with the next cluster's sweep.
func TestPanickingProcessDoesNotLeak(t *testing.T) {
	if os.Getenv(helperEnv) == "1" {
		s, err := startLocal(needBinaries(t))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("cluster %d %s\n", postmasterPID(t, s.dir), s.dir)
		panic("deliberate panic with a running cluster")
	}
	needBinaries(t)
	t.Parallel()

	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestPanickingProcessDoesNotLeak$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"=1", EnvURL+"=")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("helper did not panic:\n%s", out)
	}
	var pid int
	var dir string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "cluster %d %s", &pid, &dir); err == nil {
			break
		}
	}
	if pid == 0 || dir == "" {
		t.Fatalf("helper printed no cluster:\n%s", out)
	}
	if !waitGone(pid, 15*time.Second) {
		t.Errorf("postmaster %d outlived its panicking test process", pid)
	}
	sweepStale()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sweep left %s: %v", dir, err)
	}
}
