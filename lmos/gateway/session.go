package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"

	"github.com/lmosdir/lmosdir/lmos"
	"github.com/lmosdir/lmosdir/lmos/target"
)

// Consumer says who sends on a session.
type Consumer struct {
	// ID is the consumer's own identity, its Thing id when it is registered; "" when it
	// did not say.
	ID string
	// Session is the session the guardian is told of; "" takes the session's own id.
	Session string
}

// Reply is one message for the consumer.
type Reply struct {
	Data []byte
	// Final says that no more replies follow for the request this one answers.
	Final bool
}

// Answer is what a consumer may expect after Handle.
type Answer int

// Answers.
const (
	// AnswerNone: the message gets no reply (ending a subscription or an observation).
	AnswerNone Answer = iota
	// AnswerOne: one reply; a refusal is this, and is already queued.
	AnswerOne
	// AnswerProgress: action statuses until a Final one.
	AnswerProgress
	// AnswerStream: events or property readings until an error, the consumer ends the
	// subscription, or the session closes.
	AnswerStream
)

// ErrTooSlow ends a session whose consumer did not take its replies fast enough.
var ErrTooSlow = errors.New("the consumer did not read its replies fast enough")

// Session is one consumer's conversation with the gateway: a WebSocket connection, or one
// HTTP request. Replies come on Replies in the order the gateway produced them.
type Session struct {
	g        *Gateway
	id       string
	consumer Consumer
	limiter  *rate.Limiter
	replies  chan Reply
	done     chan struct{}

	mu            sync.Mutex
	closed        bool
	closeErr      error
	routes        map[*route]struct{}
	waiting       int // routes waiting for a reply
	subscriptions int
}

// Open starts a session for a consumer. Close it when the consumer leaves.
func (g *Gateway) Open(consumer Consumer) *Session {
	s := &Session{
		g:        g,
		id:       uuid.NewString(),
		consumer: consumer,
		limiter:  rate.NewLimiter(rate.Limit(g.cfg.MessagesPerSecond), max(1, int(2*g.cfg.MessagesPerSecond))),
		replies:  make(chan Reply, replyQueue),
		done:     make(chan struct{}),
		routes:   map[*route]struct{}{},
	}
	if s.consumer.Session == "" {
		s.consumer.Session = s.id
	}
	g.sessionsMu.Lock()
	stopped := g.stopped
	if !stopped {
		g.sessions[s] = struct{}{}
	}
	g.sessionsMu.Unlock()
	if stopped {
		s.closeFor(ErrStopped)
	}
	return s
}

// Replies delivers the replies for the consumer.
func (s *Session) Replies() <-chan Reply { return s.replies }

// Done is closed when the session has ended; Err then says why.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err is why the session ended: nil after Close, ErrTooSlow for a consumer that fell
// behind.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeErr
}

// Close ends the session: its subscriptions and observations are ended upstream, and
// replies still to come are dropped.
func (s *Session) Close() { s.closeFor(nil) }

func (s *Session) closeFor(err error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed, s.closeErr = true, err
	routes := make([]*route, 0, len(s.routes))
	for r := range s.routes {
		routes = append(routes, r)
	}
	s.mu.Unlock()
	close(s.done)
	s.g.sessionsMu.Lock()
	delete(s.g.sessions, s)
	s.g.sessionsMu.Unlock()
	for _, r := range routes {
		r.end(errConsumerLeft, true)
	}
}

var errConsumerLeft = errors.New("the consumer left")

// send queues a reply without blocking: the caller may be the reader of an upstream
// connection that other consumers share.
func (s *Session) send(reply Reply) {
	select {
	case <-s.done:
		return
	default:
	}
	select {
	case s.replies <- reply:
	default:
		go s.closeFor(ErrTooSlow)
	}
}

// Handle takes one message from the consumer: a refusal is answered at once; otherwise the
// message is forwarded and its replies follow on Replies. Messages of one session are
// meant to be handled one after the other, in the order the consumer sent them.
func (s *Session) Handle(ctx context.Context, frame []byte) Answer {
	if len(frame) > s.g.cfg.MaxMessageBytes {
		s.refuse(nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("a message may have at most %d bytes", s.g.cfg.MaxMessageBytes))
		return AnswerOne
	}
	m, err := lmos.Parse(frame)
	ctx, span := s.g.startReceive(ctx, m, s.consumer)
	defer span.End()
	if err != nil {
		s.refuseSpan(span, m, http.StatusBadRequest, err.Error())
		return AnswerOne
	}
	if !s.limiter.Allow() {
		s.refuseSpan(span, m, http.StatusTooManyRequests, fmt.Sprintf("a connection may send %g messages per second", s.g.cfg.MessagesPerSecond))
		return AnswerOne
	}
	th, err := s.g.thing(ctx, m.ThingID)
	switch {
	case errors.Is(err, errThingGone):
		s.refuseSpan(span, m, http.StatusNotFound, fmt.Sprintf("no Thing with id %s is registered in this directory", m.ThingID))
		return AnswerOne
	case err != nil:
		s.g.log.Error("gateway: reading a Thing", "thing", m.ThingID, "error", err)
		s.refuseSpan(span, m, http.StatusServiceUnavailable, "the directory could not be read; try again")
		return AnswerOne
	}
	if r := th.Check(m); r != nil {
		s.refuseSpan(span, m, r.Status, r.Detail)
		return AnswerOne
	}
	switch m.Type() {
	case lmos.TypeUnsubscribeEvent, lmos.TypeUnsubscribeAllEvents, lmos.TypeUnobserveProperty:
		return s.unsubscribe(ctx, span, m)
	case lmos.TypeCancelAction, lmos.TypeQueryAction:
		if invocation := s.invocation(m); invocation != nil {
			invocation.followUp(ctx, m)
			return AnswerNone
		}
	}
	return s.forward(ctx, span, m, th)
}

// forward sends an accepted request to the Thing over the first binding it offers.
func (s *Session) forward(ctx context.Context, span trace.Span, m *lmos.Message, th *target.Thing) Answer {
	kind, name, forms := classify(m, th)
	endpoint, overWebSocket := th.LMOSEndpoint(forms)
	var form target.Form
	if !overWebSocket {
		var ok bool
		if form, ok = httpFormFor(m, th, forms); !ok {
			s.refuseSpan(span, m, http.StatusNotImplemented, fmt.Sprintf("the TD of %s has no WebSocket form with subprotocol lmosprotocol and no HTTP form for %s", th.ID, m.Type()))
			return AnswerOne
		}
		endpoint = form.Href
	}
	if !s.g.hostAllowed(endpoint.Hostname()) {
		s.refuseSpan(span, m, http.StatusForbidden, fmt.Sprintf("the gateway does not connect to %s: the host is not among the allowed ones", endpoint.Host))
		return AnswerOne
	}
	var guarded *guardedCall
	if invoke, ok := m.Body.(*lmos.InvokeAction); ok && s.g.cfg.Guardian != nil {
		allowed, call, refusal := s.guard(ctx, m, th, invoke)
		if refusal != nil {
			s.refuseSpan(span, m, refusal.Status, refusal.Detail)
			return AnswerOne
		}
		m, guarded = allowed, call
	}
	forwardCtx, forwardSpan := s.g.startForward(ctx, m, endpoint)
	// After the guardian let the action through, it hears how it ended, even when the
	// gateway is what ended it.
	reject := func(status int, detail string) Answer {
		endSpan(forwardSpan, errors.New(detail))
		if guarded != nil {
			go s.g.reportResult(guarded, failure(status, detail))
		}
		s.refuseSpan(span, m, status, detail)
		return AnswerOne
	}
	var conn *upstreamConn
	if overWebSocket {
		var err error
		if conn, err = s.g.upstreams.get(ctx, endpoint); err != nil {
			return reject(http.StatusBadGateway, fmt.Sprintf("could not connect to %s: %v", endpoint, err))
		}
	}
	r := &route{
		s: s, key: uuid.NewString(), kind: kind, thingID: th.ID, name: name,
		replyTo: m.CorrelationID, spelling: m.Spelling(), span: forwardSpan, upstream: conn, guard: guarded,
	}
	if r.replyTo == "" {
		r.replyTo = m.MessageID
	}
	if refusal := s.register(r); refusal != nil {
		return reject(refusal.Status, refusal.Detail)
	}
	if overWebSocket {
		s.forwardWebSocket(forwardCtx, r, m)
	} else {
		go s.forwardHTTP(forwardCtx, r, m, th, form)
	}
	return kind.answer()
}

// refuse answers a message that is not forwarded with an LMOS error.
func (s *Session) refuse(m *lmos.Message, status int, detail string) {
	reply := lmos.NewError(m, status, http.StatusText(status), detail)
	if reply.ThingID == "" {
		reply.ThingID = s.g.cfg.SelfID
	}
	data, err := reply.MarshalJSON()
	if err != nil {
		s.g.log.Error("gateway: encoding an error message", "error", err)
		return
	}
	s.send(Reply{Data: data, Final: true})
}

func (s *Session) refuseSpan(span trace.Span, m *lmos.Message, status int, detail string) {
	refused(span, status, detail)
	s.refuse(m, status, detail)
}

// invocation is the action in progress that a cancelAction or queryAction names by its
// correlation id, when it was invoked on this session over a WebSocket.
func (s *Session) invocation(m *lmos.Message) *route {
	if m.CorrelationID == "" {
		return nil
	}
	action := ""
	switch b := m.Body.(type) {
	case *lmos.CancelAction:
		action = b.Action
	case *lmos.QueryAction:
		action = b.Action
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for r := range s.routes {
		if r.kind == routeProgress && r.upstream != nil && r.thingID == m.ThingID && r.name == action && r.replyTo == m.CorrelationID {
			return r
		}
	}
	return nil
}

// unsubscribe ends the consumer's subscriptions or observations that the message names,
// upstream too: all of them for the event or property, or, when the message carries a
// correlation id, the one subscription it names. It is refused when there is none.
func (s *Session) unsubscribe(ctx context.Context, span trace.Span, m *lmos.Message) Answer {
	var kind routeKind
	var name string
	switch b := m.Body.(type) {
	case *lmos.UnsubscribeEvent:
		kind, name = routeEvent, b.Event
	case *lmos.UnsubscribeAllEvents:
		kind = routeAllEvents
	case *lmos.UnobserveProperty:
		kind, name = routeObservation, b.Name
	}
	var ended []*route
	s.mu.Lock()
	for r := range s.routes {
		if r.kind == kind && r.thingID == m.ThingID && r.name == name && (m.CorrelationID == "" || m.CorrelationID == r.replyTo) {
			ended = append(ended, r)
		}
	}
	s.mu.Unlock()
	if len(ended) == 0 {
		s.refuseSpan(span, m, http.StatusNotFound, fmt.Sprintf("this connection has no %s of %s to end", kind.noun(name), m.ThingID))
		return AnswerOne
	}
	for _, r := range ended {
		r.endWith(ctx, m)
	}
	return AnswerNone
}
