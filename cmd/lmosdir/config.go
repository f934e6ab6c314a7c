package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/httpapi"
)

// config is every setting of lmosdir serve. Each is a flag and an LMOSDIR_* variable named
// after it (--max-ttl is LMOSDIR_MAX_TTL); a flag given on the command line wins.
type config struct {
	Listen          string
	DatabaseURL     string
	DataDir         string
	BaseURL         string
	MaxBodyBytes    int64
	DefaultPageSize int
	MaxPageSize     int
	PurgeInterval   time.Duration
	MaxTTL          time.Duration
	LogLevel        string
	LogFormat       string
	MigrateOnStart  bool
	DBMaxConns      int
	ReadCacheMiB    int
	ShutdownTimeout time.Duration
	ContextDir      string
	ContextAllow    string
	ExpandWorkers   int
	QueryTimeout    time.Duration
	MaxResultBytes  int
	EventsRetention time.Duration
	EventsKeepAlive time.Duration
	EventsBuffer    int
	EventsMaxSubs   int
	gatewayConfig
	discoveryConfig
}

// gatewayConfig is the settings of the LMOS gateway, its guardian and tracing.
type gatewayConfig struct {
	GatewayMaxMessage     int
	GatewayRate           float64
	GatewayMaxInFlight    int
	GatewayMaxWaiting     int
	GatewayMaxSubs        int
	GatewayConnectTimeout time.Duration
	GatewayReplyTimeout   time.Duration
	GatewayActionTimeout  time.Duration
	GatewayPingInterval   time.Duration
	GatewayAllowHosts     string
	GuardianURL           string
	GuardianTimeout       time.Duration
	GuardianFailOpen      bool
	TraceExporter         string
	TraceEndpoint         string
}

// parseConfig reads the settings of command from args and the LMOSDIR_* variables; extra
// adds the command's own flags (which get variables the same way).
func parseConfig(command string, args []string, stderr io.Writer, extra ...func(*flag.FlagSet)) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("lmosdir "+command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, add := range extra {
		add(fs)
	}
	fs.StringVar(&cfg.Listen, "listen", ":8080", "address to serve HTTP on")
	fs.StringVar(&cfg.DatabaseURL, "database-url", "", "postgres://user:pass@host:5432/db for PostgreSQL, sqlite:///path/file.db for the embedded store; empty: the embedded store in --data-dir")
	fs.StringVar(&cfg.DataDir, "data-dir", "data", "folder of the embedded store's file lmosdir.db, when no --database-url is given")
	fs.StringVar(&cfg.BaseURL, "base-url", "", "absolute URL clients reach the directory at (default http://localhost:<port listened on>)")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body-bytes", 1<<20, "largest request body accepted, in bytes")
	fs.IntVar(&cfg.DefaultPageSize, "default-page-size", 100, "page size of /things when offset is given without limit")
	fs.IntVar(&cfg.MaxPageSize, "max-page-size", 1000, "largest page of /things; larger limits are cut to it")
	fs.DurationVar(&cfg.PurgeInterval, "purge-interval", time.Minute, "how often expired registrations are deleted")
	fs.DurationVar(&cfg.MaxTTL, "max-ttl", 30*24*time.Hour, "longest registration a client may ask for with ttl or expires (0: no limit)")
	fs.StringVar(&cfg.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&cfg.LogFormat, "log-format", "json", "json or text")
	fs.BoolVar(&cfg.MigrateOnStart, "migrate-on-start", true, "apply pending database migrations at start")
	fs.IntVar(&cfg.DBMaxConns, "db-max-conns", 16, "largest number of PostgreSQL connections")
	fs.IntVar(&cfg.ReadCacheMiB, "read-cache-mib", 64, "memory for recently read TDs with the embedded store (0: off)")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight requests may finish after SIGTERM")
	fs.StringVar(&cfg.ContextDir, "context-dir", "", "folder of extra JSON-LD context files with an index.json mapping URLs to files")
	fs.StringVar(&cfg.ContextAllow, "context-allow", "", "comma-separated context URLs that may be fetched once over the network (default: none)")
	fs.IntVar(&cfg.ExpandWorkers, "expand-workers", max(1, runtime.GOMAXPROCS(0)/2), "goroutines expanding registered TDs as JSON-LD in the background")
	fs.DurationVar(&cfg.QueryTimeout, "query-timeout", 5*time.Second, "longest a /search or JSONPath query may run")
	fs.IntVar(&cfg.MaxResultBytes, "max-result-bytes", 16<<20, "largest JSONPath search answer, in bytes")
	fs.DurationVar(&cfg.EventsRetention, "events-retention", directory.DefaultEventRetention, "how long events are kept for replay with Last-Event-ID")
	fs.DurationVar(&cfg.EventsKeepAlive, "events-keepalive", httpapi.DefaultEventKeepAlive, "interval of keep-alive comments on event streams (none in a stream's first 10 s)")
	fs.IntVar(&cfg.EventsBuffer, "events-buffer", directory.DefaultEventBuffer, "events a subscriber may fall behind before it is disconnected (it resumes with Last-Event-ID)")
	fs.IntVar(&cfg.EventsMaxSubs, "events-max-subscribers", directory.DefaultMaxSubscribers, "largest number of open event streams")
	cfg.gatewayConfig.addFlags(fs)
	cfg.discoveryConfig.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if err := applyEnvironment(fs); err != nil {
		return cfg, err
	}
	return cfg, cfg.complete()
}

// applyEnvironment sets every flag not given on the command line from its variable.
func applyEnvironment(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		name := envName(f.Name)
		value, ok := os.LookupEnv(name)
		if given[f.Name] || !ok {
			return
		}
		if err := fs.Set(f.Name, value); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", name, value, err))
		}
	})
	return errors.Join(errs...)
}

func envName(flagName string) string {
	return "LMOSDIR_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (c *config) complete() error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("listen address %q: %w", c.Listen, err)
	}
	switch {
	case c.MaxBodyBytes <= 0:
		return errors.New("max-body-bytes must be positive")
	case c.DefaultPageSize <= 0 || c.MaxPageSize <= 0:
		return errors.New("page sizes must be positive")
	case c.DefaultPageSize > c.MaxPageSize:
		return errors.New("default-page-size must not exceed max-page-size")
	case c.PurgeInterval <= 0:
		return errors.New("purge-interval must be positive")
	case c.ReadCacheMiB < 0:
		return errors.New("read-cache-mib must not be negative")
	case c.MaxTTL < 0:
		return errors.New("max-ttl must not be negative")
	case c.DBMaxConns <= 0 || c.DBMaxConns > 10000:
		return errors.New("db-max-conns must be between 1 and 10000")
	case c.ExpandWorkers <= 0:
		return errors.New("expand-workers must be positive")
	case c.QueryTimeout <= 0:
		return errors.New("query-timeout must be positive")
	case c.MaxResultBytes <= 0:
		return errors.New("max-result-bytes must be positive")
	case c.EventsRetention <= 0 || c.EventsKeepAlive <= 0:
		return errors.New("events-retention and events-keepalive must be positive")
	case c.EventsBuffer <= 0 || c.EventsMaxSubs <= 0:
		return errors.New("events-buffer and events-max-subscribers must be positive")
	}
	if err := c.gatewayConfig.check(); err != nil {
		return err
	}
	if err := c.discoveryConfig.check(); err != nil {
		return err
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		return err
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		return fmt.Errorf("log-format %q: use json or text", c.LogFormat)
	}
	return nil
}

func parseLevel(name string) (slog.Level, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(name)); err != nil {
		return level, fmt.Errorf("log-level %q: use debug, info, warn or error", name)
	}
	return level, nil
}

func newLogger(cfg config) *slog.Logger {
	level, _ := parseLevel(cfg.LogLevel)
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, opts))
}

// commaList is the items of a comma-separated setting, spaces trimmed, empty ones dropped.
func commaList(setting string) []string {
	var items []string
	for item := range strings.SplitSeq(setting, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

// baseURL is the configured base URL, or one on localhost with the port actually listened
// on (which the kernel picks for :0).
func (c *config) baseURL(listening net.Addr) string {
	if c.BaseURL != "" {
		return c.BaseURL
	}
	if tcp, ok := listening.(*net.TCPAddr); ok {
		return fmt.Sprintf("http://localhost:%d", tcp.Port)
	}
	return "http://localhost"
}
