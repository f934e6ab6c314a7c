package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestTraceExporterOTLP checks that spans leave for the configured OTLP/HTTP endpoint.
func TestTraceExporterOTLP(t *testing.T) {
	received := make(chan *http.Request, 10)
	collector := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		received <- r
	}))
	defer collector.Close()
	provider, err := newTracerProvider(context.Background(), gatewayConfig{TraceExporter: traceExporterOTLP, TraceEndpoint: collector.URL + "/v1/traces"})
	if err != nil {
		t.Fatal(err)
	}
	_, span := provider.Tracer("test").Start(context.Background(), "lmos receive readProperty")
	span.End()
	if err := provider.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-received:
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("the collector got %s %s (%s)", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
	default:
		t.Fatal("no span reached the collector")
	}
}

// TestTracesWithoutExporter checks that spans, and so trace ids, exist with no exporter.
func TestTracesWithoutExporter(t *testing.T) {
	provider, err := newTracerProvider(context.Background(), gatewayConfig{TraceExporter: traceExporterNone})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = provider.Shutdown(context.Background()) }()
	_, span := provider.Tracer("test").Start(context.Background(), "lmos receive readProperty")
	defer span.End()
	if !span.SpanContext().IsValid() || !span.SpanContext().IsSampled() {
		t.Errorf("span context %+v", span.SpanContext())
	}
}
