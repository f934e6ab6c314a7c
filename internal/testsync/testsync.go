// Package testsync holds what tests use to watch code that runs concurrently with them: a
// buffer that goroutines and processes may write while the test reads it, and a wait for a
// condition with a deadline.
package testsync

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// Buffer is a bytes.Buffer that may be written and read concurrently, such as a process's
// output or a logger's.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Await polls cond, about 300 times over within, until it holds; the test fails when it
// still does not after within.
func Await(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(within / 300) {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
	}
}
