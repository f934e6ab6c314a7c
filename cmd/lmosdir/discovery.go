package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/discovery"
	"github.com/lmosdir/lmosdir/httpapi"
)

// discoveryConfig is the settings of LAN discovery.
type discoveryConfig struct {
	MDNS              bool
	MDNSInstance      string
	MDNSInterfaces    string
	MDNSRegister      bool
	MDNSRecheck       time.Duration
	MDNSFetchTimeout  time.Duration
	MDNSFetchInterval time.Duration
	MDNSFetchPublic   bool
	MDNSMaxTDBytes    int64
	MDNSMaxInstances  int
}

func (c *discoveryConfig) addFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.MDNS, "mdns", true, "announce the directory on the LAN over DNS-SD/mDNS (_directory._sub._wot._tcp)")
	fs.StringVar(&c.MDNSInstance, "mdns-instance", "", `instance name of the announcement (default "lmosdir on <host name>")`)
	fs.StringVar(&c.MDNSInterfaces, "mdns-interfaces", "", "comma-separated network interfaces to announce, listen and query on (default: every interface that can multicast)")
	fs.BoolVar(&c.MDNSRegister, "mdns-register", true, "register the Things that announce themselves on the LAN (_wot._tcp) and list the other directories at /directories")
	fs.DurationVar(&c.MDNSRecheck, "mdns-recheck", time.Minute, "how often the Things on the LAN are asked for again and their TDs fetched again; one that misses two rechecks is removed")
	fs.DurationVar(&c.MDNSFetchTimeout, "mdns-fetch-timeout", 5*time.Second, "time limit of fetching one TD announced on the LAN")
	fs.DurationVar(&c.MDNSFetchInterval, "mdns-fetch-interval", 10*time.Second, "least time between two TD fetches from one address")
	fs.BoolVar(&c.MDNSFetchPublic, "mdns-fetch-public", false, "also fetch TDs from public addresses (default: only loopback, private and link-local ones)")
	fs.Int64Var(&c.MDNSMaxTDBytes, "mdns-max-td-bytes", 1<<20, "largest TD fetched from a Thing on the LAN")
	fs.IntVar(&c.MDNSMaxInstances, "mdns-max-instances", 1024, "most _wot._tcp instances followed at once; more are ignored")
}

func (c *discoveryConfig) check() error {
	if !c.MDNS {
		return nil
	}
	if c.MDNSInstance != "" {
		if err := discovery.CheckInstance(c.MDNSInstance); err != nil {
			return fmt.Errorf("mdns-instance: %w", err)
		}
	}
	switch {
	case c.MDNSRecheck < time.Second:
		return fmt.Errorf("mdns-recheck: %s is shorter than a second", c.MDNSRecheck)
	case c.MDNSFetchTimeout <= 0:
		return fmt.Errorf("mdns-fetch-timeout: %s is not positive", c.MDNSFetchTimeout)
	case c.MDNSFetchInterval <= 0:
		return fmt.Errorf("mdns-fetch-interval: %s is not positive", c.MDNSFetchInterval)
	case c.MDNSMaxTDBytes <= 0:
		return fmt.Errorf("mdns-max-td-bytes: %d is not positive", c.MDNSMaxTDBytes)
	case c.MDNSMaxInstances <= 0:
		return fmt.Errorf("mdns-max-instances: %d is not positive", c.MDNSMaxInstances)
	}
	_, err := c.interfaces()
	return err
}

// instance is the name the directory announces itself under.
func (c *discoveryConfig) instance() string {
	if c.MDNSInstance != "" {
		return c.MDNSInstance
	}
	host, _ := os.Hostname()
	return discovery.DefaultInstance(host)
}

// interfaces resolves --mdns-interfaces.
func (c *discoveryConfig) interfaces() ([]net.Interface, error) {
	var ifaces []net.Interface
	for _, name := range commaList(c.MDNSInterfaces) {
		iface, err := net.InterfaceByName(name)
		if err != nil {
			return nil, fmt.Errorf("mdns-interfaces: %q: %w", name, err)
		}
		ifaces = append(ifaces, *iface)
	}
	return ifaces, nil
}

// announce makes the directory known on the LAN, unless turned off; the returned function
// says goodbye, once. A failure to announce is logged, not fatal: the directory serves
// without it.
func announce(c discoveryConfig, listening net.Addr, baseURL string, log *slog.Logger) func() {
	if !c.MDNS {
		return func() {}
	}
	a := discovery.Announcement{Instance: c.instance(), Scheme: "http"}
	if u, err := url.Parse(baseURL); err == nil && u.Scheme == "https" {
		a.Scheme = "https"
	}
	if tcp, ok := listening.(*net.TCPAddr); ok {
		a.Port = tcp.Port
	}
	var err error
	if a.Interfaces, err = c.interfaces(); err == nil {
		var announcer discovery.Announcer
		if announcer, err = discovery.Announce(a); err == nil {
			log.Info("announcing on the LAN", "instance", a.Instance, "service", "_directory._sub."+discovery.ServiceType+"."+discovery.Domain, "port", a.Port)
			var once sync.Once
			return func() { once.Do(announcer.Shutdown) }
		}
	}
	log.Warn("not announcing on the LAN", "error", err)
	return func() {}
}

// registerFromLAN registers the Things that announce themselves on the LAN until ctx ends,
// unless turned off, and returns what knows the other directories (nil when off). A
// failure to listen is logged, not fatal.
func registerFromLAN(ctx context.Context, c discoveryConfig, dir *directory.Service, log *slog.Logger) httpapi.PeerSource {
	if !c.MDNS || !c.MDNSRegister {
		return nil
	}
	ifaces, err := c.interfaces()
	if err != nil {
		log.Warn("not following the LAN", "error", err)
		return nil
	}
	registrar := discovery.NewRegistrar(dir, discovery.RegistrarOptions{
		Refresh: c.MDNSRecheck, FetchTimeout: c.MDNSFetchTimeout, MaxTDBytes: c.MDNSMaxTDBytes,
		FetchInterval: c.MDNSFetchInterval, FetchPublic: c.MDNSFetchPublic, Self: c.instance(), Log: log,
	})
	go registrar.Run(ctx)
	go func() {
		opts := discovery.WatchOptions{Interfaces: ifaces, Recheck: c.MDNSRecheck, MaxInstances: c.MDNSMaxInstances}
		if err := discovery.Watch(ctx, opts, registrar.Handle); err != nil {
			log.Warn("not following the LAN", "error", err)
		}
	}()
	log.Info("registering the Things announced on the LAN", "service", discovery.ServiceType+"."+discovery.Domain)
	return registrar
}
