package main

import (
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestConfigDefaults(t *testing.T) {
	t.Setenv("LMOSDIR_DATABASE_URL", "postgres://db/x")
	cfg, err := parseConfig("serve", nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := config{
		Listen: ":8080", DatabaseURL: "postgres://db/x", DataDir: "data", MaxBodyBytes: 1 << 20,
		DefaultPageSize: 100, MaxPageSize: 1000, PurgeInterval: time.Minute, MaxTTL: 720 * time.Hour,
		LogLevel: "info", LogFormat: "json", MigrateOnStart: true, DBMaxConns: 16, ReadCacheMiB: 64, ShutdownTimeout: 15 * time.Second,
		ExpandWorkers: max(1, runtime.GOMAXPROCS(0)/2), QueryTimeout: 5 * time.Second, MaxResultBytes: 16 << 20,
		EventsRetention: 24 * time.Hour, EventsKeepAlive: 25 * time.Second, EventsBuffer: 256, EventsMaxSubs: 10000,
		gatewayConfig: gatewayConfig{
			GatewayMaxMessage: 1 << 20, GatewayRate: 1000, GatewayMaxInFlight: 10000, GatewayMaxWaiting: 256, GatewayMaxSubs: 256,
			GatewayConnectTimeout: 5 * time.Second, GatewayReplyTimeout: 30 * time.Second, GatewayActionTimeout: 15 * time.Minute, GatewayPingInterval: 30 * time.Second,
			GuardianTimeout: 2 * time.Second, TraceExporter: "none",
		},
		discoveryConfig: discoveryConfig{
			MDNS: true, MDNSRegister: true, MDNSRecheck: time.Minute, MDNSFetchTimeout: 5 * time.Second,
			MDNSFetchInterval: 10 * time.Second, MDNSMaxTDBytes: 1 << 20, MDNSMaxInstances: 1024,
		},
	}
	if cfg != want {
		t.Errorf("defaults\n got %+v\nwant %+v", cfg, want)
	}
}

func TestConfigEnvironmentAndFlags(t *testing.T) {
	t.Setenv("LMOSDIR_DATABASE_URL", "postgres://env/x")
	t.Setenv("LMOSDIR_LISTEN", "127.0.0.1:9000")
	t.Setenv("LMOSDIR_MAX_TTL", "1h")
	t.Setenv("LMOSDIR_MIGRATE_ON_START", "false")
	cfg, err := parseConfig("serve", []string{"--database-url", "postgres://flag/x", "--log-format=text"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DatabaseURL != "postgres://flag/x" {
		t.Errorf("a flag given on the command line must win over the variable: %q", cfg.DatabaseURL)
	}
	if cfg.Listen != "127.0.0.1:9000" || cfg.MaxTTL != time.Hour || cfg.MigrateOnStart || cfg.LogFormat != "text" {
		t.Errorf("variables not applied: %+v", cfg)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{args: []string{"--db-max-conns=0"}, want: "db-max-conns"},
		{env: map[string]string{"LMOSDIR_MAX_PAGE_SIZE": "many"}, args: []string{"--database-url=x"}, want: `LMOSDIR_MAX_PAGE_SIZE="many"`},
		{args: []string{"--database-url=x", "--default-page-size=2000"}, want: "default-page-size"},
		{args: []string{"--database-url=x", "--log-level=loud"}, want: "log-level"},
		{args: []string{"--database-url=x", "--log-format=xml"}, want: "log-format"},
		{args: []string{"--database-url=x", "--listen=nocolon"}, want: "listen address"},
		{args: []string{"--database-url=x", "--max-body-bytes=0"}, want: "max-body-bytes"},
		{args: []string{"--database-url=x", "stray"}, want: "unexpected arguments"},
		{args: []string{"--no-such-flag"}, want: "no-such-flag"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, err := parseConfig("serve", tt.args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestEnvName(t *testing.T) {
	if got := envName("max-body-bytes"); got != "LMOSDIR_MAX_BODY_BYTES" {
		t.Errorf("envName = %q", got)
	}
}

func TestChooseBackend(t *testing.T) {
	tests := []struct {
		url, dataDir, kind, location, err string
	}{
		{url: "", dataDir: "/var/lib/lmosdir", kind: "sqlite", location: "/var/lib/lmosdir/lmosdir.db"},
		{url: "postgres://u@h/db", kind: "postgres", location: "postgres://u@h/db"},
		{url: "postgresql://u@h/db", kind: "postgres", location: "postgresql://u@h/db"},
		{url: "sqlite:///tmp/x.db", kind: "sqlite", location: "/tmp/x.db"},
		{url: "mysql://u@h/db", err: "postgres://"},
	}
	for _, tt := range tests {
		b, err := chooseBackend(config{DatabaseURL: tt.url, DataDir: tt.dataDir})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want one mentioning %q", tt.url, err, tt.err)
			}
			continue
		}
		if err != nil || b.kind != tt.kind || b.location != tt.location {
			t.Errorf("%q: %+v %v, want %s at %s", tt.url, b, err, tt.kind, tt.location)
		}
	}
	if d := (backend{kind: "postgres", location: "postgres://u:secret@h/db"}).describe(); strings.Contains(d, "secret") {
		t.Errorf("describe shows the password: %s", d)
	}
}

func TestBaseURL(t *testing.T) {
	listening := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 41234}
	if got := (&config{}).baseURL(listening); got != "http://localhost:41234" {
		t.Errorf("derived base URL %q", got)
	}
	if got := (&config{BaseURL: "https://dir.example/lmos"}).baseURL(listening); got != "https://dir.example/lmos" {
		t.Errorf("configured base URL %q", got)
	}
}

func TestGatewayConfig(t *testing.T) {
	t.Setenv("LMOSDIR_GATEWAY_ALLOW_HOSTS", " *.example.com ,10.0.0.*,")
	cfg, err := parseConfig("serve", []string{"--trace-exporter", "otlp", "--trace-endpoint", "http://collector:4318/v1/traces", "--guardian-fail-open"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if hosts := commaList(cfg.GatewayAllowHosts); len(hosts) != 2 || hosts[0] != "*.example.com" || hosts[1] != "10.0.0.*" {
		t.Errorf("allowed hosts %q", hosts)
	}
	if !cfg.GuardianFailOpen || cfg.TraceEndpoint != "http://collector:4318/v1/traces" {
		t.Errorf("config %+v", cfg.gatewayConfig)
	}
	for _, args := range [][]string{
		{"--trace-exporter", "jaeger"},
		{"--trace-endpoint", "http://collector:4318"},
		{"--trace-exporter", "otlp", "--trace-endpoint", "collector:4318"},
		{"--trace-exporter", "otlp", "--trace-endpoint", "http://"},
		{"--gateway-rate", "0"},
		{"--gateway-reply-timeout", "0s"},
		{"--gateway-action-timeout", "0s"},
		{"--gateway-max-inflight-per-connection", "0"},
	} {
		if _, err := parseConfig("serve", args, io.Discard); err == nil {
			t.Errorf("%v was accepted", args)
		}
	}
}

func TestDiscoveryConfig(t *testing.T) {
	if _, err := parseConfig("serve", []string{"--mdns-interfaces", "no-such-interface0"}, io.Discard); err == nil || !strings.Contains(err.Error(), "no-such-interface0") {
		t.Errorf("an unknown interface: %v", err)
	}
	if _, err := parseConfig("serve", []string{"--mdns-instance", strings.Repeat("x", 64)}, io.Discard); err == nil || !strings.Contains(err.Error(), "63 bytes") {
		t.Errorf("an instance name longer than a DNS label: %v", err)
	}
	if _, err := parseConfig("serve", []string{"--mdns=false", "--mdns-interfaces", "no-such-interface0"}, io.Discard); err != nil {
		t.Errorf("interfaces of a turned-off announcement are not looked up: %v", err)
	}
	for _, args := range [][]string{
		{"--mdns-recheck", "500ms"},
		{"--mdns-fetch-timeout", "0s"},
		{"--mdns-fetch-interval", "-1s"},
		{"--mdns-fetch-interval", "0s"},
		{"--mdns-max-td-bytes", "0"},
		{"--mdns-max-instances", "0"},
	} {
		if _, err := parseConfig("serve", args, io.Discard); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: %v", args, err)
		}
	}
	cfg, err := parseConfig("serve", []string{"--mdns-interfaces", "lo", "--mdns-recheck", "2s", "--mdns-fetch-public"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if ifaces, err := cfg.interfaces(); err != nil || len(ifaces) != 1 || ifaces[0].Name != "lo" {
		t.Errorf("interfaces %v, %v", ifaces, err)
	}
	if cfg.MDNSRecheck != 2*time.Second || !cfg.MDNSFetchPublic {
		t.Errorf("recheck %v, fetch public %v", cfg.MDNSRecheck, cfg.MDNSFetchPublic)
	}
}
