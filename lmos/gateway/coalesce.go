package gateway

import (
	"net"
	"sync"
	"time"
)

const (
	// maxPendingWrite bounds what a coalescingConn holds for its socket: a writer beyond
	// it waits, as it would on a full socket buffer.
	maxPendingWrite = 4 << 20
	// maxSpareWrite is the largest batch buffer kept for the next batch.
	maxSpareWrite = 64 << 10
	// closeFlushTimeout is how long Close waits for what is pending, such as the close
	// frame the WebSocket has just written, to be sent.
	closeFlushTimeout = 100 * time.Millisecond
)

// coalescingConn sends what is written to a Thing's connection from a goroutine of its own,
// and gathers the frames written while it is sending into the next system call. The
// connection is shared by every consumer of the Thing, which write one after the other:
// written directly, each frame would cost a system call, most of what relaying costs under
// load. A write returns once its bytes are queued; a failed send fails the writes after
// it, and the WebSocket's read of the same connection notices the failure as well.
type coalescingConn struct {
	net.Conn

	mu      sync.Mutex
	cond    sync.Cond // broadcast when pending was taken, or the connection failed
	pending []byte
	spare   []byte // the previous batch's buffer, for reuse
	sending bool
	err     error
}

func newCoalescingConn(c net.Conn) *coalescingConn {
	cc := &coalescingConn{Conn: c}
	cc.cond.L = &cc.mu
	return cc
}

func (c *coalescingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.err == nil && len(c.pending) > maxPendingWrite {
		c.cond.Wait()
	}
	if c.err != nil {
		return 0, c.err
	}
	c.pending = append(c.pending, p...)
	if !c.sending {
		c.sending = true
		go c.send()
	}
	return len(p), nil
}

// send writes batches until nothing is pending.
func (c *coalescingConn) send() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.pending) > 0 && c.err == nil {
		batch := c.pending
		c.pending, c.spare = c.spare[:0], nil
		c.mu.Unlock()
		_, err := c.Conn.Write(batch)
		c.mu.Lock()
		if cap(batch) <= maxSpareWrite {
			c.spare = batch[:0]
		}
		if err != nil && c.err == nil {
			c.err = err
		}
		c.cond.Broadcast()
	}
	c.sending = false
	c.cond.Broadcast()
}

// Close waits briefly for what is pending to be sent, then closes the connection, which
// also ends a send blocked on a peer that stopped reading.
func (c *coalescingConn) Close() error {
	c.mu.Lock()
	if c.sending && c.err == nil {
		expired := false
		timer := time.AfterFunc(closeFlushTimeout, func() {
			c.mu.Lock()
			expired = true
			c.cond.Broadcast()
			c.mu.Unlock()
		})
		for c.sending && c.err == nil && !expired {
			c.cond.Wait()
		}
		timer.Stop()
	}
	if c.err == nil {
		c.err = net.ErrClosed
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	return c.Conn.Close()
}
