// Package dirtest helps tests run a directory.Service as lmosdir serve does.
package dirtest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
)

// StartEvents runs the directory's event delivery until the test ends and waits until it
// accepts subscribers. Call it after starting an HTTP server on dir: cleanups run in
// reverse, so the delivery ends first, and with it the event streams that the server's
// Close would wait for.
func StartEvents(t testing.TB, dir *directory.Service) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- dir.RunEvents(ctx, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Error(err)
		}
	})
	for dir.Ready(t.Context()) != nil {
		time.Sleep(time.Millisecond)
	}
}
