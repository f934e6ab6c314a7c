package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/lmosdir/lmosdir/httpapi"
)

// serve runs the directory until ctx ends, then drains in-flight requests.
func serve(ctx context.Context, cfg config) error {
	log := newLogger(cfg)
	tuneGC()
	dir, backend, store, err := openDirectory(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	listener, err := new(net.ListenConfig).Listen(ctx, "tcp", cfg.Listen)
	if err != nil {
		return err
	}
	baseURL := cfg.baseURL(listener.Addr())
	gw, stopTracing, err := newGateway(ctx, cfg.gatewayConfig, dir, baseURL, log)
	if err != nil {
		listener.Close()
		return err
	}
	defer flushSpans(stopTracing, log)
	sayGoodbye := announce(cfg.discoveryConfig, listener.Addr(), baseURL, log)
	defer sayGoodbye()
	peers := registerFromLAN(ctx, cfg.discoveryConfig, dir, log)
	api, err := httpapi.New(httpapi.Config{
		BaseURL:         baseURL,
		MaxBodyBytes:    cfg.MaxBodyBytes,
		DefaultPageSize: cfg.DefaultPageSize,
		MaxPageSize:     cfg.MaxPageSize,
		Version:         version,
		EventKeepAlive:  cfg.EventsKeepAlive,
		Gateway:         gw,
		Peers:           peers,
	}, dir, log)
	if err != nil {
		listener.Close()
		return err
	}
	go dir.RunExpiry(ctx, cfg.PurgeInterval, cfg.EventsRetention, log)
	go func() {
		if err := dir.RunEvents(ctx, log); err != nil {
			log.Error("event delivery stopped", "error", err)
		}
	}()
	go dir.RunExpansion(ctx, cfg.ExpandWorkers, expansionInterval, log)
	go gw.Run(ctx)
	server := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("lmosdir serving", "version", version, "url", baseURL, "listen", listener.Addr().String(), "store", backend.kind, "data", backend.describe())
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	sayGoodbye()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}

// flushSpans exports the spans still buffered, within a bound of its own.
func flushSpans(shutdown func(context.Context) error, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		log.Warn("exporting the last spans", "error", err)
	}
}

// expansionInterval is how often the expansion looks for TDs that other processes sharing
// the database registered; this process's own writes wake it at once.
const expansionInterval = 10 * time.Second

// gcPercent is the GC target unless GOGC says otherwise: validating a TD allocates
// thousands of short-lived objects while the live heap stays small, so collecting less
// often buys throughput.
const gcPercent = 400

// tuneGC collects less often than Go's default unless GOGC is set.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}
