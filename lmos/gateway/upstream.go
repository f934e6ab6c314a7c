package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/lmosdir/lmosdir/lmos"
)

// minUpstreamReadLimit lets a Thing's replies be larger than what consumers may send: an
// action's output is often bigger than its input.
const minUpstreamReadLimit = 16 << 20

// upstreamPool holds one WebSocket connection per Thing endpoint, shared by all consumers.
type upstreamPool struct {
	g     *Gateway
	mu    sync.Mutex
	conns map[string]*upstreamConn
}

func newUpstreamPool(g *Gateway) *upstreamPool {
	return &upstreamPool{g: g, conns: map[string]*upstreamConn{}}
}

// upstreamConn is one connection to a Thing; replies are routed by correlation id.
type upstreamConn struct {
	pool  *upstreamPool
	url   string
	ready chan struct{} // closed once the dial has finished
	conn  *websocket.Conn
	err   error // why the dial failed

	mu       sync.Mutex
	routes   map[string]*route
	closed   bool
	lastUsed time.Time
}

// get returns the open connection to endpoint, dialing it when there is none; callers
// asking while a dial is under way wait for that one.
func (p *upstreamPool) get(ctx context.Context, endpoint *url.URL) (*upstreamConn, error) {
	key := endpoint.String()
	p.mu.Lock()
	c := p.conns[key]
	dial := c == nil
	if dial {
		c = &upstreamConn{pool: p, url: key, ready: make(chan struct{}), routes: map[string]*route{}, lastUsed: time.Now()}
		p.conns[key] = c
	}
	p.mu.Unlock()
	if dial {
		c.dial()
	}
	select {
	case <-c.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if c.err != nil {
		return nil, c.err
	}
	return c, nil
}

// dial opens the connection with a deadline of its own, since the consumer that happened
// to ask first is not the only one waiting.
func (c *upstreamConn) dial() {
	defer close(c.ready)
	g := c.pool.g
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.ConnectTimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, c.url, &websocket.DialOptions{HTTPClient: g.wsHTTP, Subprotocols: []string{lmos.Subprotocol}})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		c.err = fmt.Errorf("no connection within %s", g.cfg.ConnectTimeout)
	case err != nil:
		c.err = err
	case conn.Subprotocol() != lmos.Subprotocol:
		conn.Close(websocket.StatusProtocolError, "the subprotocol lmosprotocol is required")
		c.err = errors.New("the Thing did not agree to the subprotocol lmosprotocol")
	}
	if c.err != nil {
		c.pool.drop(c)
		return
	}
	conn.SetReadLimit(int64(max(minUpstreamReadLimit, g.cfg.MaxMessageBytes)))
	c.conn = conn
	go c.read()
}

func (p *upstreamPool) drop(c *upstreamConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns[c.url] == c {
		delete(p.conns, c.url)
	}
}

// add routes the replies for r to it, unless the connection has already failed.
func (c *upstreamConn) add(r *route) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.routes[r.key] = r
	c.lastUsed = time.Now()
	return true
}

func (c *upstreamConn) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.routes, key)
	c.lastUsed = time.Now()
}

// send writes a message; a failed write breaks the connection, which fails its routes.
func (c *upstreamConn) send(ctx context.Context, m *lmos.Message, spelling lmos.Spelling) {
	data, err := m.Encode(spelling)
	if err != nil {
		c.pool.g.log.Error("gateway: encoding a message for a Thing", "error", err)
		return
	}
	c.write(ctx, data)
}

func (c *upstreamConn) write(ctx context.Context, data []byte) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.pool.g.cfg.ConnectTimeout)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, data); err != nil {
		c.fail(fmt.Errorf("writing to the Thing: %w", err))
	}
}

// read routes the Thing's messages until the connection ends.
func (c *upstreamConn) read() {
	for {
		_, data, err := c.conn.Read(context.Background())
		if err != nil {
			c.fail(err)
			return
		}
		c.dispatch(data)
	}
}

func (c *upstreamConn) dispatch(data []byte) {
	m, err := lmos.Parse(data)
	if m == nil || m.CorrelationID == "" {
		c.pool.g.log.Debug("gateway: a Thing's message answers no request", "url", c.url, "error", err)
		return
	}
	c.mu.Lock()
	r := c.routes[m.CorrelationID]
	c.mu.Unlock()
	switch {
	case r == nil:
		c.pool.g.log.Debug("gateway: a Thing's reply came for no request", "url", c.url, "correlation", m.CorrelationID)
	case err != nil:
		r.fail(http.StatusBadGateway, "the Thing sent an invalid message: "+err.Error())
	default:
		r.deliver(m)
	}
}

// fail closes the connection and fails every request it carried.
func (c *upstreamConn) fail(err error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	routes := make([]*route, 0, len(c.routes))
	for _, r := range c.routes {
		routes = append(routes, r)
	}
	clear(c.routes)
	c.mu.Unlock()
	c.pool.drop(c)
	_ = c.conn.CloseNow()
	for _, r := range routes {
		r.fail(http.StatusBadGateway, fmt.Sprintf("the connection to %s ended: %v", c.url, err))
	}
}

// reapIdle closes connections that carried nothing for the idle timeout.
func (p *upstreamPool) reapIdle(ctx context.Context) {
	ticker := time.NewTicker(p.g.cfg.IdleTimeout / 2)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-ticker.C:
			for _, c := range p.snapshot() {
				if c.idleSince(now) >= p.g.cfg.IdleTimeout {
					c.fail(errors.New("idle"))
				}
			}
		}
	}
}

// keepAlive pings every connection each PingInterval and drops those that do not answer.
func (p *upstreamPool) keepAlive(ctx context.Context) {
	ticker := time.NewTicker(p.g.cfg.PingInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			for _, c := range p.snapshot() {
				go c.ping(ctx)
			}
		}
	}
}

func (c *upstreamConn) ping(ctx context.Context) {
	pingCtx, cancel := context.WithTimeout(ctx, c.pool.g.cfg.ConnectTimeout)
	defer cancel()
	if err := c.conn.Ping(pingCtx); err != nil && ctx.Err() == nil {
		c.fail(fmt.Errorf("no answer to a ping within %s", c.pool.g.cfg.ConnectTimeout))
	}
}

func (p *upstreamPool) snapshot() []*upstreamConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	conns := make([]*upstreamConn, 0, len(p.conns))
	for _, c := range p.conns {
		select {
		case <-c.ready:
			if c.err == nil {
				conns = append(conns, c)
			}
		default:
		}
	}
	return conns
}

func (c *upstreamConn) idleSince(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.routes) > 0 {
		return 0
	}
	return now.Sub(c.lastUsed)
}

func (p *upstreamPool) closeAll() {
	for _, c := range p.snapshot() {
		c.fail(errors.New("the gateway is stopping"))
	}
}

// forwardWebSocket sends a request over the Thing's shared connection under the route's
// key, so that the Thing's replies find their way back.
func (s *Session) forwardWebSocket(ctx context.Context, r *route, m *lmos.Message) {
	c := r.upstream
	if !c.add(r) {
		r.fail(http.StatusBadGateway, fmt.Sprintf("the connection to %s ended", c.url))
		return
	}
	up := *m
	up.MessageID, up.CorrelationID = r.key, r.key
	up.TraceParent, up.TraceState = traceContext(ctx)
	data, err := up.Encode(r.spelling)
	if err != nil {
		r.fail(http.StatusBadGateway, "the message could not be encoded for the Thing: "+err.Error())
		return
	}
	c.write(ctx, data)
}
