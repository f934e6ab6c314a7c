package gateway

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/lmosdir/lmosdir/lmos"
	"github.com/lmosdir/lmosdir/lmos/target"
)

// routeKind is how long a forwarded request keeps receiving replies.
type routeKind int

const (
	routeSingle      routeKind = iota // one reply
	routeProgress                     // action statuses until a terminal one
	routeEvent                        // events of one event until unsubscribed
	routeAllEvents                    // all events until unsubscribed
	routeObservation                  // readings of one property until unobserved
)

func (k routeKind) answer() Answer {
	switch k {
	case routeSingle:
		return AnswerOne
	case routeProgress:
		return AnswerProgress
	default:
		return AnswerStream
	}
}

// waits reports whether the route waits for a reply and so holds an in-flight slot and a
// reply timeout; the others are subscriptions.
func (k routeKind) waits() bool { return k == routeSingle || k == routeProgress }

func (k routeKind) noun(name string) string {
	switch k {
	case routeEvent:
		return "subscription to event " + name
	case routeAllEvents:
		return "subscription to all events"
	default:
		return "observation of property " + name
	}
}

// endMessage is the message that ends a subscription of this kind upstream.
func (k routeKind) endMessage(name string) lmos.Body {
	switch k {
	case routeEvent:
		return &lmos.UnsubscribeEvent{Event: name}
	case routeAllEvents:
		return &lmos.UnsubscribeAllEvents{}
	default:
		return &lmos.UnobserveProperty{Name: name}
	}
}

// classify says how a request is answered, which affordance it names, and the forms that
// may carry it, the affordance's own first.
func classify(m *lmos.Message, th *target.Thing) (kind routeKind, name string, forms []target.Form) {
	switch b := m.Body.(type) {
	case *lmos.InvokeAction:
		return routeProgress, b.Action, th.Actions[b.Action].Forms
	case *lmos.CancelAction:
		return routeSingle, b.Action, th.Actions[b.Action].Forms
	case *lmos.QueryAction:
		return routeSingle, b.Action, th.Actions[b.Action].Forms
	case *lmos.ReadProperty:
		return routeSingle, b.Name, th.Properties[b.Name].Forms
	case *lmos.WriteProperty:
		return routeSingle, b.Name, th.Properties[b.Name].Forms
	case *lmos.ObserveProperty:
		return routeObservation, b.Name, th.Properties[b.Name].Forms
	case *lmos.SubscribeEvent:
		return routeEvent, b.Event, th.Events[b.Event].Forms
	case *lmos.SubscribeAllEvents:
		return routeAllEvents, "", nil
	default: // writeMultipleProperties: Thing-level forms
		return routeSingle, "", nil
	}
}

// route connects a forwarded request to the consumer that sent it: replies carrying its
// key as correlation id go back with the consumer's own correlation id.
type route struct {
	s        *Session
	key      string // the correlation id upstream
	kind     routeKind
	thingID  string
	name     string // the event or property a subscription is about
	replyTo  string // the consumer's correlation id: its correlation id, else its message id
	spelling lmos.Spelling
	span     trace.Span
	timer    atomic.Pointer[time.Timer] // the reply timeout, set after the route is visible
	upstream *upstreamConn              // nil over HTTP

	guard *guardedCall // an action the guardian allowed, to report its outcome to

	answered atomic.Bool
	ended    atomic.Bool
}

// register admits a route the consumer asks for, or says why not; it holds an in-flight
// slot or a place among the session's subscriptions until released.
func (s *Session) register(r *route) *target.Refusal {
	if r.kind.waits() {
		select {
		case s.g.inFlight <- struct{}{}:
		default:
			return refusal(http.StatusServiceUnavailable, fmt.Sprintf("the gateway has %d requests waiting for replies, its limit; try again", s.g.cfg.MaxInFlight))
		}
	}
	s.mu.Lock()
	var problem *target.Refusal
	switch {
	case s.closed:
		problem = refusal(http.StatusServiceUnavailable, "the session has ended")
	case r.kind.waits() && s.waiting >= s.g.cfg.MaxWaiting:
		problem = refusal(http.StatusTooManyRequests, fmt.Sprintf("a connection may have %d requests waiting for replies", s.g.cfg.MaxWaiting))
	case !r.kind.waits() && s.subscriptions >= s.g.cfg.MaxSubscriptions:
		problem = refusal(http.StatusTooManyRequests, fmt.Sprintf("a connection may hold %d subscriptions and observations", s.g.cfg.MaxSubscriptions))
	default:
		s.routes[r] = struct{}{}
		if r.kind.waits() {
			s.waiting++
		} else {
			s.subscriptions++
		}
	}
	s.mu.Unlock()
	if problem != nil {
		if r.kind.waits() {
			<-s.g.inFlight
		}
		return problem
	}
	if r.kind.waits() {
		r.timer.Store(time.AfterFunc(s.g.cfg.ReplyTimeout, r.timedOut))
	}
	return nil
}

func refusal(status int, detail string) *target.Refusal {
	return &target.Refusal{Status: status, Title: http.StatusText(status), Detail: detail}
}

func (r *route) timedOut() {
	if !r.answered.Load() {
		r.fail(http.StatusGatewayTimeout, fmt.Sprintf("%s did not reply within %s", r.thingID, r.s.g.cfg.ReplyTimeout))
	}
}

// actionTimedOut stops following an action that has not finished: the consumer is told, and
// the Thing may still finish it (a queryAction asks it).
func (r *route) actionTimedOut() {
	r.fail(http.StatusGatewayTimeout, fmt.Sprintf("the action %s of %s did not finish within %s of its first status; the gateway no longer follows it", r.name, r.thingID, r.s.g.cfg.ActionTimeout))
}

// deliver passes a reply of the Thing on to the consumer.
func (r *route) deliver(m *lmos.Message) {
	if r.ended.Load() {
		return
	}
	final := r.kind == routeSingle || m.Type() == lmos.TypeError
	if status, ok := m.Body.(*lmos.ActionStatus); ok && r.kind == routeProgress && status.Over() {
		final = true
	}
	if r.answered.CompareAndSwap(false, true) {
		r.stopTimer()
		if !final && r.kind == routeProgress {
			r.timer.Store(time.AfterFunc(r.s.g.cfg.ActionTimeout, r.actionTimedOut))
		}
	}
	m.CorrelationID = r.replyTo
	data, err := m.Encode(r.spelling)
	if err != nil {
		r.fail(http.StatusBadGateway, "the Thing's reply could not be passed on: "+err.Error())
		return
	}
	if final {
		if !r.ended.CompareAndSwap(false, true) {
			return
		}
		r.release(nil, false)
		if r.guard != nil {
			go r.s.g.reportResult(r.guard, m)
		}
	}
	r.s.send(Reply{Data: data, Final: final})
}

func (r *route) stopTimer() {
	if t := r.timer.Load(); t != nil {
		t.Stop()
	}
}

// fail ends the route with an LMOS error for the consumer.
func (r *route) fail(status int, detail string) {
	if !r.ended.CompareAndSwap(false, true) {
		return
	}
	reply := lmos.NewError(nil, status, http.StatusText(status), detail)
	reply.ThingID, reply.CorrelationID = r.thingID, r.replyTo
	data, err := reply.Encode(r.spelling)
	if err != nil {
		r.s.g.log.Error("gateway: encoding an error message", "error", err)
	} else {
		r.s.send(Reply{Data: data, Final: true})
	}
	if r.guard != nil {
		go r.s.g.reportResult(r.guard, reply)
	}
	r.release(fmt.Errorf("%d %s", status, detail), true)
}

// end ends the route without a reply; a subscription is ended upstream when told to.
func (r *route) end(reason error, endUpstream bool) {
	if r.ended.CompareAndSwap(false, true) {
		if r.guard != nil {
			go r.s.g.reportResult(r.guard, failure(http.StatusServiceUnavailable, "the gateway stopped following the action: "+reason.Error()))
		}
		r.release(reason, endUpstream)
	}
}

// endWith ends a subscription at the consumer's request, passing its message upstream.
func (r *route) endWith(ctx context.Context, m *lmos.Message) {
	if !r.ended.CompareAndSwap(false, true) {
		return
	}
	if r.upstream != nil {
		up := *m
		up.MessageID, up.CorrelationID = uuid.NewString(), r.key
		r.upstream.send(ctx, &up, r.spelling)
	}
	r.release(nil, false)
}

// followUp passes a cancelAction or queryAction about the route's action to the Thing under
// the invocation's correlation id, so that the Thing knows which invocation it is about;
// the statuses it answers with come to the consumer as the invocation's.
func (r *route) followUp(ctx context.Context, m *lmos.Message) {
	up := *m
	up.MessageID, up.CorrelationID = uuid.NewString(), r.key
	up.TraceParent, up.TraceState = traceContext(ctx)
	r.upstream.send(ctx, &up, r.spelling)
}

// release frees what the route held; the caller won the ended flag.
func (r *route) release(reason error, endUpstream bool) {
	r.stopTimer()
	s := r.s
	if r.kind.waits() {
		<-s.g.inFlight
	}
	s.mu.Lock()
	delete(s.routes, r)
	if r.kind.waits() {
		s.waiting--
	} else {
		s.subscriptions--
	}
	s.mu.Unlock()
	if r.upstream != nil {
		r.upstream.remove(r.key)
		if endUpstream && !r.kind.waits() {
			end := &lmos.Message{ThingID: r.thingID, MessageID: uuid.NewString(), CorrelationID: r.key, Body: r.kind.endMessage(r.name)}
			go r.upstream.send(context.Background(), end, r.spelling)
		}
	}
	if r.span != nil {
		endSpan(r.span, reason)
	}
}
