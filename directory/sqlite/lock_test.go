package sqlite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/migrations"
)

// childEnv makes the test binary, started by a test, act as another lmosdir process that
// opens the database file the variable names.
const (
	childEnv     = "LMOSDIR_SQLITE_TEST_CHILD"
	childPutsEnv = "LMOSDIR_SQLITE_TEST_CHILD_PUTS"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		os.Exit(runChild(path))
	}
	os.Exit(m.Run())
}

// runChild opens the store at path, says "ready", registers as many Things as
// childPutsEnv asks, printing "acked <id>" once each Put has returned, and closes the
// store when its standard input ends.
func runChild(path string) int {
	ctx := context.Background()
	s, err := Open(ctx, path, Options{MigrateOnOpen: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	puts, _ := strconv.Atoi(os.Getenv(childPutsEnv))
	for i := range puts {
		id := fmt.Sprintf("urn:child:%06d", i)
		if _, err := s.Put(ctx, thing(id), t0); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("acked", id)
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
}

func startChild(t *testing.T, path string, puts int) *child {
	t.Helper()
	cmd := exec.CommandContext(testContext(t), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path, childPutsEnv+"="+strconv.Itoa(puts))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if !c.lines.Scan() || c.lines.Text() != "ready" {
		t.Fatalf("the child process did not open the store (%q, %v)", c.lines.Text(), c.lines.Err())
	}
	return c
}

// wantInUse checks that err is the refusal to open a database another process has open,
// and that it came at once rather than after a wait.
func wantInUse(t *testing.T, what string, err error, path string, pid int, took time.Duration) {
	t.Helper()
	want := fmt.Sprintf("database file %s is in use by another lmosdir process (pid %d); stop it or use another --data-dir", path, pid)
	if err == nil || err.Error() != want {
		t.Fatalf("%s = %v, want %q", what, err, want)
	}
	if took > 2*time.Second {
		t.Fatalf("%s took %v to fail; it must not wait for the lock", what, took)
	}
}

func TestSecondOpenInProcess(t *testing.T) {
	ctx := testContext(t)
	s, path := open(t)
	start := time.Now()
	_, err := Open(ctx, path, Options{})
	want := fmt.Sprintf("database file %s is already open in this lmosdir process (pid %d); close it first", path, os.Getpid())
	if err == nil || err.Error() != want || time.Since(start) > 2*time.Second {
		t.Fatalf("second Open = %v after %v, want %q at once", err, time.Since(start), want)
	}
	// The same file by a relative path is the same database.
	t.Chdir(filepath.Dir(path))
	if _, err := Open(ctx, filepath.Base(path), Options{}); err == nil || err.Error() != want {
		t.Fatalf("Open by a relative path = %v, want %q", err, want)
	}
	// Migrations must not change the schema under an open store either.
	if err := MigrateUp(ctx, path); err == nil || err.Error() != want {
		t.Fatalf("MigrateUp while open = %v, want %q", err, want)
	}
	if _, _, err := MigrateVersion(ctx, path); err != nil {
		t.Fatalf("MigrateVersion while open: %v; reading the version needs no lock", err)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenInUseByAnotherProcess(t *testing.T) {
	ctx := testContext(t)
	path := filepath.Join(t.TempDir(), "lmosdir.db")
	c := startChild(t, path, 0)
	pid := c.cmd.Process.Pid

	start := time.Now()
	_, err := Open(ctx, path, Options{MigrateOnOpen: true})
	wantInUse(t, "Open", err, path, pid, time.Since(start))
	start = time.Now()
	err = MigrateUp(ctx, path)
	wantInUse(t, "MigrateUp", err, path, pid, time.Since(start))

	// The child closes the store and exits; the file is free.
	if err := c.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("Open after the other process closed it: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestKilledProcessKeepsAcknowledgedWrites kills a process registering Things with
// SIGKILL: the lock goes with it, and every write it had acknowledged is in the file.
func TestKilledProcessKeepsAcknowledgedWrites(t *testing.T) {
	ctx := testContext(t)
	path := filepath.Join(t.TempDir(), "lmosdir.db")
	c := startChild(t, path, 1_000_000)
	var acked []string
	for len(acked) < 200 && c.lines.Scan() {
		acked = append(acked, strings.TrimPrefix(c.lines.Text(), "acked "))
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Lines already written to the pipe were acknowledged before the kill too.
	for c.lines.Scan() {
		acked = append(acked, strings.TrimPrefix(c.lines.Text(), "acked "))
	}
	if err := c.cmd.Wait(); err == nil {
		t.Fatal("the child exited normally; it should have been killed")
	}

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("Open after the other process was killed: %v", err)
	}
	defer s.Close()
	for _, id := range acked {
		if _, err := s.Get(ctx, id, t0); err != nil {
			t.Fatalf("acknowledged write %s lost: %v", id, err)
		}
	}
	t.Logf("%d acknowledged writes survived SIGKILL", len(acked))
}

func TestLockFileReleasedOnFailedOpen(t *testing.T) {
	ctx := testContext(t)
	path := filepath.Join(t.TempDir(), "lmosdir.db")
	if err := MigrateUp(ctx, path); err != nil {
		t.Fatal(err)
	}
	forceSchema(t, path, 1, true)
	for range 2 { // the second attempt finds the lock free again
		var dirty *migrations.DirtyError
		if _, err := Open(ctx, path, Options{}); !errors.As(err, &dirty) {
			t.Fatalf("Open of a dirty database = %v, want a DirtyError", err)
		}
	}
}

func TestOpenCreatesDirectory(t *testing.T) {
	ctx := testContext(t)
	dir := filepath.Join(t.TempDir(), "a", "b")
	s, err := Open(ctx, filepath.Join(dir, "lmosdir.db"), Options{MigrateOnOpen: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info, err := os.Stat(dir)
	if err != nil || !info.IsDir() || info.Mode().Perm()&0o700 != 0o700 {
		t.Fatalf("data directory: %v, %v; want a directory its owner can use", info, err)
	}
	if _, err := s.Put(ctx, thing("urn:x:1"), t0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "lmosdir.db")); err != nil {
		t.Fatal(err)
	}
}

// TestPathsNeedNoEscaping opens files whose names would mean something else in a URI.
func TestPathsNeedNoEscaping(t *testing.T) {
	ctx := testContext(t)
	for _, name := range []string{"with space", "query?mode=memory", "fragment#x", "percent%20", "colon:memory:", "file:x"} {
		dir := filepath.Join(t.TempDir(), name)
		path := filepath.Join(dir, name+".db")
		s, err := Open(ctx, path, Options{MigrateOnOpen: true})
		if err != nil {
			t.Fatalf("Open(%q): %v", path, err)
		}
		if _, err := s.Put(ctx, thing("urn:x:1"), t0); err != nil {
			t.Fatalf("Put in %q: %v", path, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Contains(names, name+".db") || !slices.Contains(names, name+".db.lock") || len(names) != 2 {
			t.Fatalf("files in %q = %q, want only %q and its lock file", dir, names, name+".db")
		}
		s, err = Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "urn:x:1", t0); err != nil {
			t.Fatalf("Get after reopening %q: %v", path, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
