// Package discovery finds and is found on the local network: the directory announces
// itself over DNS-SD/multicast DNS as W3C WoT Discovery describes (service _wot._tcp,
// subtype _directory, the TD's path in TXT), and browses for the Things that announce
// themselves the same way.
package discovery

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/grandcat/zeroconf"
)

// DNS-SD names of WoT Discovery.
const (
	// ServiceType is the service of every WoT Thing and directory.
	ServiceType = "_wot._tcp"
	// DirectorySubtype marks the instances that are directories.
	DirectorySubtype = "_directory"
	// Domain is the multicast DNS domain.
	Domain = "local."
)

// TXT keys and values of WoT Discovery.
const (
	keyTD            = "td"
	keyType          = "type"
	keyScheme        = "scheme"
	typeDirectory    = "Directory"
	directoryTDPath  = "/.well-known/wot"
	maxInstanceBytes = 63 // a DNS label
)

// Announcement is how the directory makes itself known.
type Announcement struct {
	// Instance is the service instance name people see, e.g. "lmosdir on host-7".
	Instance string
	// Port is the port the directory serves HTTP on.
	Port int
	// Scheme is "http" or "https".
	Scheme string
	// Interfaces are the interfaces to announce on, and to answer queries on; none: every
	// interface that can multicast.
	Interfaces []net.Interface
}

// TXT is the announcement's TXT record.
func (a Announcement) TXT() []string {
	return []string{keyTD + "=" + directoryTDPath, keyType + "=" + typeDirectory, keyScheme + "=" + a.Scheme}
}

// CheckInstance says what is wrong with an instance name: DNS-SD puts it in one DNS label.
func CheckInstance(name string) error {
	switch {
	case name == "":
		return errors.New("the instance name is empty")
	case len(name) > maxInstanceBytes:
		return fmt.Errorf("the instance name %q is longer than %d bytes", name, maxInstanceBytes)
	}
	return nil
}

func (a Announcement) check() error {
	if err := CheckInstance(a.Instance); err != nil {
		return err
	}
	switch {
	case a.Port <= 0 || a.Port > 65535:
		return fmt.Errorf("port %d is not a TCP port", a.Port)
	case a.Scheme != "http" && a.Scheme != "https":
		return fmt.Errorf("scheme %q: announce http or https", a.Scheme)
	}
	return nil
}

// Announcer answers queries for the directory until Shutdown.
type Announcer interface {
	// Shutdown says goodbye (records with a zero TTL) and stops answering.
	Shutdown()
}

// Announce starts announcing the directory as _directory._sub._wot._tcp.local.
func Announce(a Announcement) (Announcer, error) {
	if err := a.check(); err != nil {
		return nil, fmt.Errorf("mDNS announcement: %w", err)
	}
	server, err := zeroconf.Register(a.Instance, ServiceType+","+DirectorySubtype, Domain, a.Port, a.TXT(), a.Interfaces)
	if err != nil {
		return nil, fmt.Errorf("mDNS announcement: %w", err)
	}
	return server, nil
}

// DefaultInstance is the instance name of a directory on host.
func DefaultInstance(host string) string {
	host, _, _ = strings.Cut(host, ".")
	name := "lmosdir on " + host
	if len(name) > maxInstanceBytes {
		name = name[:maxInstanceBytes]
	}
	return name
}
