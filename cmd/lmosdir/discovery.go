package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"sync"

	"github.com/lmosdir/lmosdir/discovery"
)

// discoveryConfig is the settings of LAN discovery.
type discoveryConfig struct {
	MDNS           bool
	MDNSInstance   string
	MDNSInterfaces string
}

func (c *discoveryConfig) addFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.MDNS, "mdns", true, "announce the directory on the LAN over DNS-SD/mDNS (_directory._sub._wot._tcp)")
	fs.StringVar(&c.MDNSInstance, "mdns-instance", "", `instance name of the announcement (default "lmosdir on <host name>")`)
	fs.StringVar(&c.MDNSInterfaces, "mdns-interfaces", "", "comma-separated network interfaces to announce on (default: every interface that can multicast)")
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
	_, err := c.interfaces()
	return err
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
	a := discovery.Announcement{Instance: c.MDNSInstance, Scheme: "http"}
	if u, err := url.Parse(baseURL); err == nil && u.Scheme == "https" {
		a.Scheme = "https"
	}
	if tcp, ok := listening.(*net.TCPAddr); ok {
		a.Port = tcp.Port
	}
	if a.Instance == "" {
		host, _ := os.Hostname()
		a.Instance = discovery.DefaultInstance(host)
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
