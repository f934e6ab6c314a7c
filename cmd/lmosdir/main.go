// Command lmosdir is the directory and discovery hub for AI agents and tools described as
// W3C WoT Thing Descriptions.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/httpapi"
	"github.com/lmosdir/lmosdir/td"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// gcPercent is the GC target unless GOGC says otherwise: validating a TD allocates
// thousands of short-lived objects while the live heap stays small, so collecting less
// often buys throughput for little memory.
const gcPercent = 400

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lmosdir:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	command := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		command, args = args[0], args[1:]
	}
	switch command {
	case "serve":
		cfg, err := parseConfig("serve", args, stderr)
		if err != nil {
			return err
		}
		return serve(ctx, cfg)
	case "migrate":
		return migrate(ctx, args, stdout, stderr)
	case "version":
		_, err := fmt.Fprintln(stdout, "lmosdir", version)
		return err
	case "help", "-h", "--help":
		_, err := fmt.Fprint(stdout, usage)
		return err
	default:
		return fmt.Errorf("unknown command %q\n%s", command, usage)
	}
}

const usage = `usage: lmosdir [command] [flags]

commands:
  serve                 run the directory (default); lmosdir serve -h lists its flags
  migrate up            apply all pending database migrations
  migrate down N        roll back N migrations
  migrate version       print the schema version and whether it is dirty
  migrate force V       mark the schema as version V after repairing a failed migration
  version               print the version
`

func serve(ctx context.Context, cfg config) error {
	log := newLogger(cfg)
	backend, err := chooseBackend(cfg)
	if err != nil {
		return err
	}
	store, err := backend.open(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	validator, err := td.NewValidator()
	if err != nil {
		return err
	}
	dir := directory.NewService(store, validator, directory.Options{MaxTTL: cfg.MaxTTL, ReadCacheBytes: backend.readCacheBytes(cfg)})
	api, err := httpapi.New(httpapi.Config{
		BaseURL:         cfg.BaseURL,
		MaxBodyBytes:    cfg.MaxBodyBytes,
		DefaultPageSize: cfg.DefaultPageSize,
		MaxPageSize:     cfg.MaxPageSize,
		Version:         version,
	}, dir, log)
	if err != nil {
		return err
	}
	listener, err := new(net.ListenConfig).Listen(ctx, "tcp", cfg.Listen)
	if err != nil {
		return err
	}
	go dir.RunExpiry(ctx, cfg.PurgeInterval, log)
	server := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("lmosdir serving", "version", version, "url", cfg.BaseURL, "listen", listener.Addr().String(), "store", backend.kind, "data", backend.describe())
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}
