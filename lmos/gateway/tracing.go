package gateway

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/lmosdir/lmosdir/lmos"
)

// traceContextPropagator reads and writes W3C Trace Context, which is what the LMOS
// traceparent and tracestate members carry.
var traceContextPropagator = propagation.TraceContext{}

// startReceive starts the span of a message arriving from a consumer, as a child of the
// trace the message carries, or of a new trace.
func (g *Gateway) startReceive(ctx context.Context, m *lmos.Message, consumer Consumer) (context.Context, trace.Span) {
	if m != nil && m.TraceParent != "" {
		carrier := propagation.MapCarrier{"traceparent": m.TraceParent}
		if m.TraceState != "" {
			carrier["tracestate"] = m.TraceState
		}
		ctx = traceContextPropagator.Extract(ctx, carrier)
	}
	name := "lmos receive"
	attrs := make([]attribute.KeyValue, 0, 4)
	if m != nil && m.Body != nil {
		name += " " + string(m.Type())
		attrs = append(attrs, attribute.String("lmos.message_type", string(m.Type())), attribute.String("lmos.thing_id", m.ThingID), attribute.String("lmos.message_id", m.MessageID))
	}
	if consumer.ID != "" {
		attrs = append(attrs, attribute.String("lmos.consumer", consumer.ID))
	}
	return g.cfg.Tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

// startForward starts the span of the hop to the Thing; its context is the one the Thing
// is told of.
func (g *Gateway) startForward(ctx context.Context, m *lmos.Message, endpoint *url.URL) (context.Context, trace.Span) {
	return g.cfg.Tracer.Start(ctx, "lmos forward "+string(m.Type()), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("lmos.thing_id", m.ThingID), attribute.String("url.full", endpoint.String())))
}

// startGuardianCall starts the span of a call to the AOS guardian.
func (g *Gateway) startGuardianCall(ctx context.Context, method, thingID string) (context.Context, trace.Span) {
	return g.cfg.Tracer.Start(ctx, "aos "+method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("rpc.system", "jsonrpc"), attribute.String("rpc.method", method), attribute.String("lmos.thing_id", thingID)))
}

// TraceTransport sends the trace context of each request's context as W3C Trace Context
// headers, so that a guardian's own spans join the trace of the message it decides on.
func TraceTransport(base http.RoundTripper) http.RoundTripper {
	return traceTransport{base: base}
}

type traceTransport struct{ base http.RoundTripper }

func (t traceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	injectTraceContext(req.Context(), req.Header)
	return t.base.RoundTrip(req)
}

// traceContext is the traceparent and tracestate of ctx's span, empty when it has none.
func traceContext(ctx context.Context) (traceParent, traceState string) {
	carrier := propagation.MapCarrier{}
	traceContextPropagator.Inject(ctx, carrier)
	return carrier["traceparent"], carrier["tracestate"]
}

// injectTraceContext sets the Trace Context headers of an HTTP request to ctx's span.
func injectTraceContext(ctx context.Context, header http.Header) {
	traceContextPropagator.Inject(ctx, propagation.HeaderCarrier(header))
}

// refused marks a span whose message was answered with an LMOS error.
func refused(span trace.Span, status int, detail string) {
	span.SetAttributes(attribute.String("lmos.error_status", strconv.Itoa(status)))
	span.SetStatus(codes.Error, detail)
}

func endSpan(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
