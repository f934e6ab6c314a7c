// Package gateway relays LMOS protocol messages from consumers to the agents and tools the
// directory has registered. Every message is parsed, checked against the Thing's TD and,
// for action invocations, optionally put to an AOS guardian before it leaves; replies are
// routed back to the consumer that asked, in the spelling it used. Upstreams are reached
// over the Thing's WebSocket "lmosprotocol" form, whose connections are shared by all
// consumers, or over its plain HTTP forms.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/internal/redirect"
	"github.com/lmosdir/lmosdir/lmos/aos"
)

// Defaults of Config.
const (
	DefaultMaxMessageBytes   = 1 << 20
	DefaultMessagesPerSecond = 1000
	DefaultMaxInFlight       = 10000
	DefaultMaxWaiting        = 256
	DefaultMaxSubscriptions  = 256
	DefaultConnectTimeout    = 5 * time.Second
	DefaultReplyTimeout      = 30 * time.Second
	DefaultActionTimeout     = 15 * time.Minute
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultGuardianTimeout   = 2 * time.Second
	DefaultPingInterval      = 30 * time.Second
	// replyQueue is how many replies may wait for a consumer's connection before the
	// consumer counts as too slow and is disconnected.
	replyQueue = 1024
)

// Config tunes the gateway. Zero values take the defaults above.
type Config struct {
	// SelfID is the thing id of errors that concern no Thing the consumer named, e.g. a
	// message whose thing id could not be read: the gateway's own URL.
	SelfID string
	// MaxMessageBytes is the largest message a consumer may send.
	MaxMessageBytes int
	// MessagesPerSecond is the sustained rate a consumer connection may send at; twice as
	// many may come in a burst.
	MessagesPerSecond float64
	// MaxInFlight bounds the requests waiting for their Thing's reply, over all consumers.
	MaxInFlight int
	// MaxWaiting bounds the requests one consumer connection may have waiting, so that a
	// single consumer cannot take every in-flight slot.
	MaxWaiting int
	// MaxSubscriptions bounds the event subscriptions and property observations one
	// consumer connection may hold.
	MaxSubscriptions int
	// ConnectTimeout bounds opening a connection to a Thing.
	ConnectTimeout time.Duration
	// ReplyTimeout bounds the wait for a Thing's first reply to a request.
	ReplyTimeout time.Duration
	// ActionTimeout bounds how long an action is followed after its first status: one
	// that never reaches a final status would otherwise hold its in-flight slot for as
	// long as its consumer stays.
	ActionTimeout time.Duration
	// IdleTimeout closes an upstream connection that carried nothing for this long.
	IdleTimeout time.Duration
	// PingInterval is how often WebSocket peers, Things and consumers, are pinged; one
	// that does not answer within ConnectTimeout is dropped, so that a peer that vanished
	// without closing does not hold subscriptions for ever.
	PingInterval time.Duration
	// AllowedHosts, when not empty, restricts the upstream hosts further than to those
	// registered TDs name: path.Match patterns such as "*.example.com" or "10.0.0.*",
	// matched against the host name without the port.
	AllowedHosts []string
	// Guardian, when set, decides on every invokeAction before it is forwarded.
	Guardian *aos.Client
	// GuardianTimeout bounds each guardian call.
	GuardianTimeout time.Duration
	// GuardianFailOpen forwards actions when the guardian cannot be asked; by default
	// they are refused.
	GuardianFailOpen bool
	// Tracer makes the spans of every hop; nil: no spans, and a traceparent is only
	// carried, never started.
	Tracer trace.Tracer
	// Transport carries the HTTP binding's requests and the WebSocket connections; nil:
	// http.DefaultTransport's settings with ConnectTimeout for connecting, and the frames
	// written to a Thing's WebSocket gathered into as few system calls as the load allows.
	Transport http.RoundTripper
}

func (c *Config) applyDefaults() {
	setDefault(&c.MaxMessageBytes, DefaultMaxMessageBytes)
	setDefault(&c.MessagesPerSecond, DefaultMessagesPerSecond)
	setDefault(&c.MaxInFlight, DefaultMaxInFlight)
	setDefault(&c.MaxWaiting, DefaultMaxWaiting)
	setDefault(&c.MaxSubscriptions, DefaultMaxSubscriptions)
	setDefault(&c.ConnectTimeout, DefaultConnectTimeout)
	setDefault(&c.ReplyTimeout, DefaultReplyTimeout)
	setDefault(&c.ActionTimeout, DefaultActionTimeout)
	setDefault(&c.IdleTimeout, DefaultIdleTimeout)
	setDefault(&c.GuardianTimeout, DefaultGuardianTimeout)
	setDefault(&c.PingInterval, DefaultPingInterval)
	if c.Tracer == nil {
		c.Tracer = noop.NewTracerProvider().Tracer("")
	}
}

// defaultTransport has http.DefaultTransport's settings with connectTimeout for connecting;
// wrap, when not nil, wraps each connection it opens.
func defaultTransport(connectTimeout time.Duration, wrap func(net.Conn) net.Conn) *http.Transport {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	dial := (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext
	transport.DialContext = dial
	if wrap != nil {
		transport.DialContext = func(ctx context.Context, network, address string) (net.Conn, error) {
			conn, err := dial(ctx, network, address)
			if err != nil {
				return nil, err
			}
			return wrap(conn), nil
		}
	}
	transport.TLSHandshakeTimeout = connectTimeout
	transport.MaxIdleConnsPerHost = 64
	return transport
}

func setDefault[T int | float64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Directory is what the gateway reads of the directory: the registered Things, and the
// changes to them, which keep its cache of parsed TDs current.
type Directory interface {
	Get(ctx context.Context, id string) (directory.Thing, error)
	Subscribe(ctx context.Context, lastEventID *int64, filter directory.EventFilter) (*directory.Subscription, error)
	Now() time.Time
}

// Gateway relays messages for any number of consumer sessions. Safe for concurrent use.
type Gateway struct {
	cfg       Config
	dir       Directory
	log       *slog.Logger
	things    *thingCache
	upstreams *upstreamPool
	http      *http.Client
	wsHTTP    *http.Client  // dials the Things' WebSocket connections
	inFlight  chan struct{} // a slot per request waiting for its reply

	guardianMu    sync.Mutex
	guardianReady guardianProbe

	sessionsMu sync.Mutex
	sessions   map[*Session]struct{}
	stopped    bool
}

// ErrStopped ends the sessions open when the gateway stops.
var ErrStopped = errors.New("the gateway stopped")

// New builds a gateway over dir. Run must be running for TDs to be cached between
// messages; without it every message reads its Thing from dir.
func New(cfg Config, dir Directory, log *slog.Logger) (*Gateway, error) {
	cfg.applyDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.SelfID == "" {
		return nil, errors.New("gateway: SelfID is required")
	}
	for _, pattern := range cfg.AllowedHosts {
		if err := checkHostPattern(pattern); err != nil {
			return nil, err
		}
	}
	g := &Gateway{
		cfg:      cfg,
		dir:      dir,
		log:      log,
		things:   newThingCache(),
		http:     &http.Client{Transport: cfg.Transport, CheckRedirect: redirect.SameOrigin(maxRedirects, nil)},
		inFlight: make(chan struct{}, cfg.MaxInFlight),
		wsHTTP:   &http.Client{Transport: cfg.Transport, CheckRedirect: redirect.SameOrigin(maxRedirects, nil)},
		sessions: map[*Session]struct{}{},
	}
	if cfg.Transport == nil {
		g.http.Transport = defaultTransport(cfg.ConnectTimeout, nil)
		g.wsHTTP.Transport = defaultTransport(cfg.ConnectTimeout, func(c net.Conn) net.Conn { return newCoalescingConn(c) })
	}
	g.upstreams = newUpstreamPool(g)
	return g, nil
}

// MaxMessageBytes is the largest message a consumer may send; a transport reads up to one
// byte more so that Handle can tell a message that is too large.
func (g *Gateway) MaxMessageBytes() int { return g.cfg.MaxMessageBytes }

// Ping is how often a transport pings its consumer, and how long it waits for the answer.
func (g *Gateway) Ping() (interval, timeout time.Duration) {
	return g.cfg.PingInterval, g.cfg.ConnectTimeout
}

// Run keeps the cache of parsed TDs in step with the directory until ctx ends: every
// change to a Thing drops its entry. While it is not subscribed, nothing is cached.
func (g *Gateway) Run(ctx context.Context) {
	go g.upstreams.reapIdle(ctx)
	go g.upstreams.keepAlive(ctx)
	for ctx.Err() == nil {
		err := g.follow(ctx)
		if ctx.Err() != nil {
			break
		}
		// Until the directory delivers events, as at start-up, TDs are read for every message.
		level := slog.LevelWarn
		if errors.Is(err, directory.ErrEventsStopped) {
			level = slog.LevelDebug
		}
		g.log.Log(ctx, level, "gateway: following the directory's changes", "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	g.stop()
}

// stop ends every session and upstream connection; sessions opened later end at once.
func (g *Gateway) stop() {
	g.sessionsMu.Lock()
	g.stopped = true
	sessions := make([]*Session, 0, len(g.sessions))
	for s := range g.sessions {
		sessions = append(sessions, s)
	}
	g.sessionsMu.Unlock()
	for _, s := range sessions {
		s.closeFor(ErrStopped)
	}
	g.upstreams.closeAll()
}

func (g *Gateway) follow(ctx context.Context) error {
	sub, err := g.dir.Subscribe(ctx, nil, directory.EventFilter{})
	if err != nil {
		return err
	}
	defer sub.Close()
	g.things.enable()
	defer g.things.disable()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			return err
		}
		g.things.forget(e.ThingID)
	}
}

// Ready reports whether the gateway can relay: when a guardian is configured and the
// gateway does not fail open, the guardian must answer ping.
func (g *Gateway) Ready(ctx context.Context) error {
	if g.cfg.Guardian == nil || g.cfg.GuardianFailOpen {
		return nil
	}
	if err := g.pingGuardian(ctx); err != nil {
		return fmt.Errorf("the guardian: %w", err)
	}
	return nil
}
