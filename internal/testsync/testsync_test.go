package testsync

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestBufferTakesConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			for range 100 {
				fmt.Fprintf(&b, "%d", i%10)
			}
		})
	}
	wg.Wait()
	if n := len(b.String()); n != 1000 {
		t.Errorf("%d bytes written, want 1000", n)
	}
}

func TestAwaitReturnsOnceTheConditionHolds(t *testing.T) {
	var polls atomic.Int32
	Await(t, "the third poll", time.Second, func() bool { return polls.Add(1) == 3 })
	if n := polls.Load(); n != 3 {
		t.Errorf("%d polls, want 3", n)
	}
}

// failure records Fatalf instead of failing the test.
type failure struct {
	testing.TB
	failed bool
}

func (f *failure) Helper() {}

func (f *failure) Fatalf(string, ...any) {
	f.failed = true
	runtime.Goexit()
}

func TestAwaitFailsAfterTheDeadline(t *testing.T) {
	start := time.Now()
	var f failure
	done := make(chan struct{})
	go func() {
		defer close(done)
		Await(&f, "nothing", 30*time.Millisecond, func() bool { return false })
	}()
	<-done
	if elapsed := time.Since(start); !f.failed || elapsed < 30*time.Millisecond {
		t.Errorf("failed %t after %s, want a failure after 30ms", f.failed, elapsed)
	}
}
