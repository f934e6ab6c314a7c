package gateway_test

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/lmosdir/lmosdir/internal/lmostest"
	"github.com/lmosdir/lmosdir/lmos"
	"github.com/lmosdir/lmosdir/lmos/gateway"
)

func tracedFixture(t *testing.T) (*fixture, *lmostest.Agent, *tracetest.SpanRecorder) {
	t.Helper()
	recorder := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	f, agent := newAgentFixture(t, func(c *gateway.Config) { c.Tracer = provider.Tracer("test") })
	return f, agent, recorder
}

// parseTraceParent splits a version 00 traceparent into its trace and parent span ids.
func parseTraceParent(t *testing.T, tp string) (traceID, spanID string) {
	t.Helper()
	parts := strings.Split(tp, "-")
	if len(parts) != 4 || parts[0] != "00" {
		t.Fatalf("traceparent %q", tp)
	}
	return parts[1], parts[2]
}

func TestTraceContextIsContinued(t *testing.T) {
	f, agent, recorder := tracedFixture(t)
	c := f.open(t, gateway.Consumer{})
	const traceID, consumerSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	c.send(agentID, `"traceparent":"00-`+traceID+`-`+consumerSpan+`-01","tracestate":"congo=t61rcWkgMzE","messageType":"readProperty","name":"temperature"`)
	upstream := agent.Next(t)
	c.reply()
	gotTrace, parent := parseTraceParent(t, upstream.TraceParent)
	if gotTrace != traceID || parent == consumerSpan {
		t.Errorf("upstream traceparent %s: want trace %s with the gateway's span as parent", upstream.TraceParent, traceID)
	}
	if upstream.TraceState != "congo=t61rcWkgMzE" {
		t.Errorf("tracestate %q", upstream.TraceState)
	}
	waitFor(t, func() bool { return len(recorder.Ended()) == 2 })
	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range recorder.Ended() {
		spans[s.Name()] = s
	}
	receive, forward := spans["lmos receive readProperty"], spans["lmos forward readProperty"]
	if receive == nil || forward == nil {
		t.Fatalf("spans %v", spans)
	}
	if receive.SpanKind() != trace.SpanKindServer || receive.Parent().SpanID().String() != consumerSpan || receive.SpanContext().TraceID().String() != traceID {
		t.Errorf("receive span: kind %v parent %s", receive.SpanKind(), receive.Parent().SpanID())
	}
	if forward.SpanKind() != trace.SpanKindClient || forward.Parent().SpanID() != receive.SpanContext().SpanID() || forward.SpanContext().SpanID().String() != parent {
		t.Errorf("forward span: kind %v parent %s id %s, upstream parent %s", forward.SpanKind(), forward.Parent().SpanID(), forward.SpanContext().SpanID(), parent)
	}
}

func TestTraceIsStartedWhenTheConsumerSendsNone(t *testing.T) {
	f, agent, recorder := tracedFixture(t)
	c := f.open(t, gateway.Consumer{})
	c.send(agentID, `"messageType":"invokeAction","action":"echo","input":{"text":"x"}`)
	upstream := agent.Next(t)
	c.reply()
	traceID, _ := parseTraceParent(t, upstream.TraceParent)
	waitFor(t, func() bool { return len(recorder.Ended()) == 2 })
	for _, s := range recorder.Ended() {
		if s.SpanContext().TraceID().String() != traceID {
			t.Errorf("span %s in trace %s, the upstream was told %s", s.Name(), s.SpanContext().TraceID(), traceID)
		}
	}
}

func TestRefusedMessageSpan(t *testing.T) {
	f, _, recorder := tracedFixture(t)
	c := f.open(t, gateway.Consumer{})
	c.send(agentID, `"messageType":"invokeAction","action":"fly"`)
	c.reply()
	waitFor(t, func() bool { return len(recorder.Ended()) == 1 })
	s := recorder.Ended()[0]
	if s.Status().Code.String() != "Error" || !strings.Contains(s.Status().Description, "fly") {
		t.Errorf("span %s status %v", s.Name(), s.Status())
	}
}

func TestTraceContextOverHTTP(t *testing.T) {
	recorder := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	tool := newHTTPTool(t, "")
	f := newFixture(t, func(c *gateway.Config) { c.Tracer = provider.Tracer("test") })
	f.register(t, toolID, tool.td())
	c := f.open(t, gateway.Consumer{})
	c.send(toolID, `"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","messageType":"readProperty","name":"temperature"`)
	if reply, _ := c.reply(); reply.Type() != lmos.TypePropertyReading {
		t.Fatalf("reply %s", reply.Type())
	}
	req, _ := tool.request(t)
	if traceID, _ := parseTraceParent(t, req.Header.Get("traceparent")); traceID != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("traceparent header %q", req.Header.Get("traceparent"))
	}
}
