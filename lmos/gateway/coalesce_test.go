package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// tcpPair is a connected pair of loopback TCP connections.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	l, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	client, err = new(net.Dialer).DialContext(t.Context(), "tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("no connection accepted")
	}
	t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
	return client, server
}

// countingConn counts the writes that reach the socket.
type countingConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

func TestCoalescingConnBatchesInOrder(t *testing.T) {
	client, server := tcpPair(t)
	counted := &countingConn{Conn: client}
	conn := newCoalescingConn(counted)
	const frames = 20000
	var want bytes.Buffer
	for i := range frames {
		frame := fmt.Appendf(nil, "frame %d;", i)
		want.Write(frame)
		if _, err := conn.Write(frame); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]byte, want.Len())
	if _, err := io.ReadFull(server, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatal("the bytes arrived changed or out of order")
	}
	if n := counted.writes.Load(); n >= frames {
		t.Errorf("%d system calls for %d frames written in a burst", n, frames)
	}
}

func TestCoalescingConnCloseSendsWhatIsPending(t *testing.T) {
	client, server := tcpPair(t)
	conn := newCoalescingConn(client)
	if _, err := conn.Write([]byte("close frame")); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(server)
	if err != nil || string(got) != "close frame" {
		t.Errorf("the peer read %q, %v", got, err)
	}
	if _, err := conn.Write([]byte("more")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a write after Close: %v", err)
	}
}

// TestCoalescingConnCloseEndsABlockedWrite: a peer that stops reading fills the socket and
// then the pending bytes; the writer waits, and Close releases it.
func TestCoalescingConnCloseEndsABlockedWrite(t *testing.T) {
	client, _ := tcpPair(t)
	conn := newCoalescingConn(client)
	blocked := make(chan error, 1)
	go func() {
		chunk := make([]byte, 1<<20)
		for {
			if _, err := conn.Write(chunk); err != nil {
				blocked <- err
				return
			}
		}
	}()
	select {
	case err := <-blocked:
		t.Fatalf("a write failed before the peer's buffers were full: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	conn.mu.Lock()
	pending := len(conn.pending)
	conn.mu.Unlock()
	if pending <= maxPendingWrite {
		t.Fatalf("%d bytes pending while the writer is not waiting yet", pending)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-blocked:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("the blocked write ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not release the blocked write")
	}
}

func TestCoalescingConnFailsAfterThePeerLeft(t *testing.T) {
	client, server := tcpPair(t)
	conn := newCoalescingConn(client)
	_ = server.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := conn.Write([]byte("frame")); err != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("writes kept succeeding after the peer closed")
		}
		time.Sleep(time.Millisecond)
	}
}
