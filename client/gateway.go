package client

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/lmosdir/lmosdir/lmos"
)

const (
	// maxGatewayFrameBytes bounds one message received over the WebSocket, like
	// maxEventBytes bounds one event of a stream.
	maxGatewayFrameBytes = 16 << 20
	// maxUnreadReplies is how many replies may wait for a Stream's loop. The reader of a
	// connection never waits for a loop, so that one slow loop — or a loop body that makes
	// a Call on the same connection — cannot hold up the replies to every other request.
	maxUnreadReplies = 1024
)

// ErrGatewayClosed is the error of requests on a GatewayConn after its Close.
var ErrGatewayClosed = errors.New("lmos gateway: the connection is closed")

// GatewayOptions identify the consumer to the gateway; both optional.
type GatewayOptions struct {
	// Consumer is the consumer's own identity, e.g. its Thing id.
	Consumer string
	// Session groups the consumer's messages for the AOS guardian.
	Session string
}

func (o GatewayOptions) query() string {
	v := url.Values{}
	if o.Consumer != "" {
		v.Set("consumer", o.Consumer)
	}
	if o.Session != "" {
		v.Set("session", o.Session)
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// GatewayConn is one consumer connection to the directory's LMOS gateway. It is safe for
// concurrent use: many requests, to any Things, may be in flight at once, and a reader
// goroutine routes each reply to its request by correlation id.
//
// Frames that name no request in flight are dropped: replies to requests that have ended,
// and frames without a correlation id or that are no JSON object. A frame that is an object
// but no valid LMOS message fails the request its correlation id names, which then gets no
// further replies: one broken message says nothing about the other requests, so the
// connection stays open for them. A frame larger than 16 MiB, though, makes the WebSocket
// library close the connection.
type GatewayConn struct {
	ws *websocket.Conn
	// done is closed once the reader has returned and every request has its error.
	done    chan struct{}
	closing atomic.Bool

	mu       sync.Mutex
	requests map[string]*gatewayRequest // by correlation key
	// err is why the connection ended, set once by the reader; nil while it is open.
	err error
}

// gatewayRequest is a request waiting for replies.
type gatewayRequest struct {
	replies chan *lmos.Message
	// single marks a request whose first reply is its last: a Call of anything but an
	// invokeAction.
	single bool
	// ended is closed, after err is set, when the request ends without a further reply:
	// the connection ended, the gateway sent an invalid reply, or replies went unread.
	ended chan struct{}
	err   error
}

// DialGateway opens a WebSocket connection to the directory's LMOS gateway. ctx bounds the
// handshake only; the connection lasts until Close or until either side ends it. The
// handshake is sent by the client's http.Client, whose Timeout also bounds only the
// handshake.
func (c *Client) DialGateway(ctx context.Context, opts GatewayOptions) (*GatewayConn, error) {
	target, err := url.Parse(c.base + "/lmos" + opts.query())
	if err != nil {
		return nil, err
	}
	if target.Scheme == "https" {
		target.Scheme = "wss"
	} else {
		target.Scheme = "ws"
	}
	//nolint:bodyclose // the library closes the handshake's body itself
	ws, resp, err := websocket.Dial(ctx, target.String(), &websocket.DialOptions{
		HTTPClient:   c.http,
		Subprotocols: []string{lmos.Subprotocol},
	})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			// The library keeps the first KiB of a refusal's body, enough for the
			// gateway's problem details; readProblem copes with a cut one.
			body, _ := readLimited(resp.Body, c.maxResponseBytes)
			return nil, readProblem(resp, body)
		}
		return nil, fmt.Errorf("lmos gateway %s: %w", target.Redacted(), err)
	}
	if ws.Subprotocol() != lmos.Subprotocol {
		// Without the agreement the peer is some other WebSocket service, which would not
		// understand a message, or behind a proxy that dropped the header; either may not
		// answer a close handshake, so there is none.
		_ = ws.CloseNow()
		return nil, fmt.Errorf("lmos gateway %s: the server did not agree to the subprotocol %s", target.Redacted(), lmos.Subprotocol)
	}
	ws.SetReadLimit(maxGatewayFrameBytes)
	g := &GatewayConn{ws: ws, done: make(chan struct{}), requests: map[string]*gatewayRequest{}}
	go g.read()
	return g, nil
}

// read routes every frame until the connection ends, then fails the requests in flight.
func (g *GatewayConn) read() {
	defer close(g.done)
	for {
		// The connection's own lifetime bounds the read: the library closes the connection
		// when a read's context ends.
		_, data, err := g.ws.Read(context.Background())
		if err != nil {
			if g.closing.Load() {
				err = ErrGatewayClosed
			} else {
				err = fmt.Errorf("lmos gateway: the connection ended: %w", err)
			}
			g.shutdown(err)
			return
		}
		g.route(data)
	}
}

func (g *GatewayConn) route(data []byte) {
	m, err := lmos.Parse(data)
	if m == nil || m.CorrelationID == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	key := m.CorrelationID
	r := g.requests[key]
	switch {
	case r == nil:
	case err != nil:
		g.end(key, r, fmt.Errorf("lmos gateway: an invalid reply to %s: %w", key, err))
	default:
		select {
		case r.replies <- m:
			// Forgetting the request now lets later replies count as for nobody and frees
			// its key for a new request before the caller has even seen the reply.
			if r.single || m.Ends() {
				delete(g.requests, key)
			}
		default:
			g.end(key, r, fmt.Errorf("lmos gateway: more than %d replies to %s waited unread; later ones are dropped", maxUnreadReplies, key))
		}
	}
}

// end removes a request and gives it its error; g.mu must be held. Only requests still in
// the map are ended, so each is ended once.
func (g *GatewayConn) end(key string, r *gatewayRequest, err error) {
	delete(g.requests, key)
	r.err = err
	close(r.ended)
}

func (g *GatewayConn) shutdown(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.err = err
	for key, r := range g.requests {
		g.end(key, r, err)
	}
}

// start registers a request under its correlation key and sends it. The request is
// registered first, so that a reply faster than the return of the write still finds it.
func (g *GatewayConn) start(ctx context.Context, m *lmos.Message, single bool) (string, *gatewayRequest, error) {
	if expectsNoReply(m.Type()) {
		return "", nil, fmt.Errorf("lmos gateway: %s gets no reply; send it with Send", m.Type())
	}
	data, err := m.MarshalJSON()
	if err != nil {
		return "", nil, err
	}
	key := cmp.Or(m.CorrelationID, m.MessageID)
	buffer := maxUnreadReplies
	if single {
		buffer = 1
	}
	r := &gatewayRequest{replies: make(chan *lmos.Message, buffer), single: single, ended: make(chan struct{})}
	g.mu.Lock()
	switch {
	case g.err != nil:
		err = g.err
	case g.requests[key] != nil:
		err = fmt.Errorf("lmos gateway: a request with correlation key %s is already waiting for replies; give each request its own message or correlation id", key)
	default:
		g.requests[key] = r
	}
	g.mu.Unlock()
	if err != nil {
		return "", nil, err
	}
	if err := g.write(ctx, data); err != nil {
		g.forget(key, r)
		return "", nil, err
	}
	return key, r, nil
}

// write sends one frame. The library closes the whole connection when the context of a write
// ends in the middle of it, since half a frame cannot be taken back, and would so fail every
// request in flight for the deadline of one. So the frame goes out under the connection's
// own lifetime, and ctx bounds only the caller's wait for it; a frame whose wait ended may
// still be sent, and its replies are then dropped.
func (g *GatewayConn) write(ctx context.Context, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	written := make(chan error, 1)
	go func() { written <- g.ws.Write(context.Background(), websocket.MessageText, data) }()
	select {
	case err := <-written:
		if err == nil {
			return nil
		}
		if ended := g.ended(); ended != nil {
			return ended
		}
		return fmt.Errorf("lmos gateway: sending: %w", err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ended returns why the connection ended, or nil while it is open.
func (g *GatewayConn) ended() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// forget removes a request its caller no longer waits for, unless the reader has already
// removed it (and maybe registered another request under the same key).
func (g *GatewayConn) forget(key string, r *gatewayRequest) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.requests[key] == r {
		delete(g.requests, key)
	}
}

// next waits for the request's next reply. It returns a nil message and nil error when ctx
// ended. Replies that arrived before the request ended come before its error.
func (r *gatewayRequest) next(ctx context.Context) (*lmos.Message, error) {
	select {
	case m := <-r.replies:
		return m, nil
	case <-r.ended:
		select {
		case m := <-r.replies:
			return m, nil
		default:
			return nil, r.err
		}
	case <-ctx.Done():
		return nil, nil
	}
}

// Call sends a request and returns its last reply: the one reply of a readProperty,
// writeProperty, writeMultipleProperties, queryAction or cancelAction, and the final
// actionStatus of an invokeAction, whose progress it skips as the gateway's HTTP binding
// does (Stream yields the progress too). An LMOS error message is a reply, not a Go error:
// the Go errors are those of the transport, an invalid m or reply, and the end of ctx.
// Subscriptions and observations, which have no last reply, are refused; Stream them.
func (g *GatewayConn) Call(ctx context.Context, m *lmos.Message) (*lmos.Message, error) {
	switch m.Type() {
	case lmos.TypeSubscribeEvent, lmos.TypeSubscribeAllEvents, lmos.TypeObserveProperty:
		return nil, fmt.Errorf("lmos gateway: %s gets a stream of replies; send it with Stream", m.Type())
	}
	key, r, err := g.start(ctx, m, m.Type() != lmos.TypeInvokeAction)
	if err != nil {
		return nil, err
	}
	defer g.forget(key, r)
	for {
		reply, err := r.next(ctx)
		switch {
		case err != nil:
			return nil, err
		case reply == nil:
			return nil, ctx.Err()
		case r.single || reply.Ends():
			return reply, nil
		}
	}
}

// Stream sends a request when a loop over the sequence starts (each loop sends it anew) and
// yields its replies. The last is an actionStatus of a final status (completed, failed, or
// canceled in either spelling) or an LMOS error message. The sequence also ends without an
// error when ctx ends or the loop breaks, and with the error last when the connection ends or
// an invalid reply arrives. Breaking out sends nothing upstream: a subscription or
// observation goes on at the Thing until the caller sends unsubscribeEvent,
// unsubscribeAllEvents or unobserveProperty itself, and its replies are dropped meanwhile.
//
// The reader keeps up to 1024 replies for a loop; more unread ones end the stream with an
// error rather than hold up the connection's other requests.
func (g *GatewayConn) Stream(ctx context.Context, m *lmos.Message) iter.Seq2[*lmos.Message, error] {
	return func(yield func(*lmos.Message, error) bool) {
		key, r, err := g.start(ctx, m, false)
		if err != nil {
			if ctx.Err() == nil {
				yield(nil, err)
			}
			return
		}
		defer g.forget(key, r)
		for {
			reply, err := r.next(ctx)
			switch {
			case err != nil:
				yield(nil, err)
				return
			case reply == nil:
				return
			case !yield(reply, nil) || reply.Ends():
				return
			}
		}
	}
}

// Send sends a message that expects no reply: unsubscribeEvent, unsubscribeAllEvents or
// unobserveProperty.
func (g *GatewayConn) Send(ctx context.Context, m *lmos.Message) error {
	data, err := m.MarshalJSON()
	if err != nil {
		return err
	}
	if err := g.ended(); err != nil {
		return err
	}
	return g.write(ctx, data)
}

// Close ends the connection with a WebSocket close handshake; requests still in flight get
// ErrGatewayClosed. The gateway ends the subscriptions of a consumer that goes away.
func (g *GatewayConn) Close() error {
	if g.closing.Swap(true) {
		<-g.done
		return nil
	}
	err := g.ws.Close(websocket.StatusNormalClosure, "")
	<-g.done
	// The gateway may have ended the connection first; closing it again is no failure.
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// expectsNoReply tells the message types the gateway never answers, which a Call or Stream
// would wait for in vain.
func expectsNoReply(t lmos.Type) bool {
	return t == lmos.TypeUnsubscribeEvent || t == lmos.TypeUnsubscribeAllEvents || t == lmos.TypeUnobserveProperty
}

// SendMessage posts one message for the Thing thingID to the gateway's HTTP endpoint and
// yields the reply, or, for subscribeEvent, subscribeAllEvents and observeProperty, the
// replies of the event stream the gateway answers with. With stream set it also asks for the
// status updates of an invokeAction as a stream (Accept: text/event-stream); without, the
// gateway answers an invokeAction with its final status only. An LMOS error message (the
// gateway's refusal, or the Thing's failure) is yielded as a reply, last; answers other than
// 2xx are yielded as a *ProblemError.
//
// A stream ends after a final actionStatus or an error message. The loop breaking or ctx
// ending closes it without an error, and the gateway then ends the subscription upstream;
// a stream that breaks off before a final reply yields an error.
//
// The request is sent by a copy of the client's http.Client without its Timeout, which would
// cut every stream after that long; the Timeout bounds the wait for the answer instead, and
// the reading of a single reply.
func (c *Client) SendMessage(ctx context.Context, thingID string, m *lmos.Message, opts GatewayOptions, stream bool) iter.Seq2[*lmos.Message, error] {
	return func(yield func(*lmos.Message, error) bool) {
		if err := c.sendMessage(ctx, thingID, m, opts, stream, yield); err != nil && ctx.Err() == nil {
			yield(nil, err)
		}
	}
}

// errNoAnswer is the cause of canceling a message whose answer took longer than the
// http.Client's Timeout.
var errNoAnswer = errors.New("lmos gateway: no answer within the client's timeout")

// sendMessage returns nil once the replies are yielded or the loop broke.
func (c *Client) sendMessage(ctx context.Context, thingID string, m *lmos.Message, opts GatewayOptions, stream bool, yield func(*lmos.Message, error) bool) error {
	body, err := m.MarshalJSON()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.thingURL(thingID)+"/messages"+opts.query(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream, application/json")
	}
	hc := *c.http
	hc.Timeout = 0
	var timer *time.Timer
	if c.http.Timeout > 0 {
		timer = time.AfterFunc(c.http.Timeout, func() { cancel(errNoAnswer) })
		defer timer.Stop()
	}
	// failed names the timeout rather than the "context canceled" it caused.
	failed := func(err error) error {
		if errors.Is(context.Cause(ctx), errNoAnswer) {
			return fmt.Errorf("POST %s: %w", req.URL.Redacted(), errNoAnswer)
		}
		return err
	}

	resp, err := hc.Do(req)
	if err != nil {
		return failed(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// A cut or broken error body still tells what went wrong; readProblem copes with it.
		data, _ := readLimited(resp.Body, c.maxResponseBytes)
		return readProblem(resp, data)
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case media == "text/event-stream":
		if timer != nil && !timer.Stop() {
			return failed(context.Cause(ctx))
		}
		return readReplies(&eventReader{r: bufio.NewReader(resp.Body), limit: maxEventBytes}, yield)
	case isJSON(media):
		data, err := readLimited(resp.Body, c.maxResponseBytes)
		if err != nil {
			return failed(fmt.Errorf("POST %s: %w", req.URL.Redacted(), err))
		}
		reply, err := lmos.Parse(data)
		if err != nil {
			return fmt.Errorf("lmos gateway: an invalid reply: %w", err)
		}
		yield(reply, nil)
		return nil
	default:
		return fmt.Errorf("POST %s: the answer is %q, neither an LMOS message nor an event stream", req.URL.Redacted(), resp.Header.Get("Content-Type"))
	}
}

// readReplies yields the LMOS messages of an event stream up to the final one.
func readReplies(events *eventReader, yield func(*lmos.Message, error) bool) error {
	for {
		raw, err := events.nextRaw()
		if err != nil {
			return fmt.Errorf("lmos gateway: the stream of replies broke off before a final reply: %w", err)
		}
		// An event without a type is a "message" event; other types are no replies.
		if raw.event.Type != "" && raw.event.Type != "message" {
			continue
		}
		reply, err := lmos.Parse(raw.data)
		if err != nil {
			return fmt.Errorf("lmos gateway: an invalid reply: %w", err)
		}
		if !yield(reply, nil) || reply.Ends() {
			return nil
		}
	}
}
