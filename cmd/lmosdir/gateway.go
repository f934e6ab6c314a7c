package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/lmos/aos"
	"github.com/lmosdir/lmosdir/lmos/gateway"
)

// Trace exporters of --trace-exporter.
const (
	traceExporterNone   = "none"
	traceExporterStdout = "stdout"
	traceExporterOTLP   = "otlp"
)

func (c *gatewayConfig) addFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.GatewayMaxMessage, "gateway-max-message", gateway.DefaultMaxMessageBytes, "largest LMOS message a consumer may send, in bytes")
	fs.Float64Var(&c.GatewayRate, "gateway-rate", gateway.DefaultMessagesPerSecond, "LMOS messages per second one consumer connection may send (bursts of twice as many)")
	fs.IntVar(&c.GatewayMaxInFlight, "gateway-max-inflight", gateway.DefaultMaxInFlight, "requests waiting for a Thing's reply, over all consumers")
	fs.IntVar(&c.GatewayMaxWaiting, "gateway-max-inflight-per-connection", gateway.DefaultMaxWaiting, "requests one consumer connection may have waiting for a Thing's reply")
	fs.IntVar(&c.GatewayMaxSubs, "gateway-max-subscriptions", gateway.DefaultMaxSubscriptions, "event subscriptions and property observations per consumer connection")
	fs.DurationVar(&c.GatewayConnectTimeout, "gateway-connect-timeout", gateway.DefaultConnectTimeout, "longest wait for a connection to a Thing")
	fs.DurationVar(&c.GatewayReplyTimeout, "gateway-reply-timeout", gateway.DefaultReplyTimeout, "longest wait for a Thing's first reply to a request")
	fs.DurationVar(&c.GatewayActionTimeout, "gateway-action-timeout", gateway.DefaultActionTimeout, "longest an action is followed after its first status; then the consumer gets a 504")
	fs.DurationVar(&c.GatewayPingInterval, "gateway-ping-interval", gateway.DefaultPingInterval, "how often WebSocket peers (Things and consumers) are pinged; one silent for --gateway-connect-timeout is dropped")
	fs.StringVar(&c.GatewayAllowHosts, "gateway-allow-hosts", "", "comma-separated host patterns (*.example.com, 10.0.0.*) the gateway may connect to; empty: any host a registered TD names")
	fs.StringVar(&c.GuardianURL, "guardian-url", "", "URL of an AOS guardian asked before every invokeAction (empty: none)")
	fs.DurationVar(&c.GuardianTimeout, "guardian-timeout", gateway.DefaultGuardianTimeout, "longest wait for the guardian's answer")
	fs.BoolVar(&c.GuardianFailOpen, "guardian-fail-open", false, "forward actions when the guardian cannot be asked (default: refuse them)")
	fs.StringVar(&c.TraceExporter, "trace-exporter", traceExporterNone, "where the gateway's spans go: none, stdout or otlp (OTLP over HTTP)")
	fs.StringVar(&c.TraceEndpoint, "trace-endpoint", "", "OTLP/HTTP traces URL, e.g. http://collector:4318/v1/traces (default: the OTEL_EXPORTER_OTLP_* variables, else localhost:4318)")
}

func (c *gatewayConfig) check() error {
	switch {
	case c.GatewayMaxMessage <= 0 || c.GatewayRate <= 0 || c.GatewayMaxInFlight <= 0 || c.GatewayMaxWaiting <= 0 || c.GatewayMaxSubs <= 0:
		return errors.New("gateway-max-message, gateway-rate, gateway-max-inflight, gateway-max-inflight-per-connection and gateway-max-subscriptions must be positive")
	case c.GatewayConnectTimeout <= 0 || c.GatewayReplyTimeout <= 0 || c.GatewayActionTimeout <= 0 || c.GatewayPingInterval <= 0 || c.GuardianTimeout <= 0:
		return errors.New("gateway-connect-timeout, gateway-reply-timeout, gateway-action-timeout, gateway-ping-interval and guardian-timeout must be positive")
	}
	switch c.TraceExporter {
	case traceExporterNone, traceExporterStdout, traceExporterOTLP:
	default:
		return fmt.Errorf("trace-exporter %q: use none, stdout or otlp", c.TraceExporter)
	}
	if c.TraceEndpoint != "" {
		if c.TraceExporter != traceExporterOTLP {
			return errors.New("trace-endpoint needs --trace-exporter otlp")
		}
		// The exporter would otherwise drop a malformed URL for its default without a word.
		if u, err := url.Parse(c.TraceEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("trace-endpoint %q: give an absolute http or https URL, e.g. http://collector:4318/v1/traces", c.TraceEndpoint)
		}
	}
	return nil
}

// newGateway builds the LMOS gateway and the tracer provider of its spans; shutdown
// flushes the spans not yet exported.
func newGateway(ctx context.Context, c gatewayConfig, dir *directory.Service, baseURL string, log *slog.Logger) (gw *gateway.Gateway, shutdown func(context.Context) error, err error) {
	tracer, err := newTracerProvider(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	cfg := gateway.Config{
		SelfID:            strings.TrimSuffix(baseURL, "/") + "/lmos",
		MaxMessageBytes:   c.GatewayMaxMessage,
		MessagesPerSecond: c.GatewayRate,
		MaxInFlight:       c.GatewayMaxInFlight,
		MaxWaiting:        c.GatewayMaxWaiting,
		MaxSubscriptions:  c.GatewayMaxSubs,
		ConnectTimeout:    c.GatewayConnectTimeout,
		ReplyTimeout:      c.GatewayReplyTimeout,
		ActionTimeout:     c.GatewayActionTimeout,
		PingInterval:      c.GatewayPingInterval,
		AllowedHosts:      commaList(c.GatewayAllowHosts),
		GuardianTimeout:   c.GuardianTimeout,
		GuardianFailOpen:  c.GuardianFailOpen,
		Tracer:            tracer.Tracer("github.com/lmosdir/lmosdir/lmos/gateway"),
	}
	if c.GuardianURL != "" {
		if cfg.Guardian, err = aos.NewClient(c.GuardianURL, &http.Client{Transport: gateway.TraceTransport(http.DefaultTransport)}); err != nil {
			return nil, nil, fmt.Errorf("guardian-url: %w", err)
		}
	}
	if gw, err = gateway.New(cfg, dir, log); err != nil {
		return nil, nil, err
	}
	return gw, tracer.Shutdown, nil
}

// newTracerProvider always makes real spans, even with no exporter, so that every
// message relayed carries a traceparent: the consumer's trace continued, or a new one.
func newTracerProvider(ctx context.Context, c gatewayConfig) (*sdktrace.TracerProvider, error) {
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "lmosdir"), attribute.String("service.version", version))),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
	}
	var exporter sdktrace.SpanExporter
	var err error
	switch c.TraceExporter {
	case traceExporterStdout:
		exporter, err = stdouttrace.New()
	case traceExporterOTLP:
		var otlpOpts []otlptracehttp.Option
		if c.TraceEndpoint != "" {
			otlpOpts = append(otlpOpts, otlptracehttp.WithEndpointURL(c.TraceEndpoint))
		}
		exporter, err = otlptracehttp.New(ctx, otlpOpts...)
	}
	if err != nil {
		return nil, fmt.Errorf("trace exporter %s: %w", c.TraceExporter, err)
	}
	if exporter != nil {
		opts = append(opts, sdktrace.WithBatcher(exporter, sdktrace.WithBatchTimeout(5*time.Second)))
	}
	return sdktrace.NewTracerProvider(opts...), nil
}
