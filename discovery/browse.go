package discovery

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/grandcat/zeroconf"
)

// Instance is one _wot._tcp service instance seen on the LAN.
type Instance struct {
	Name string
	Host string // the SRV target
	Port int
	IPv4 []net.IP
	IPv6 []net.IP
	TXT  map[string]string
	// TTL is the SRV record's TTL; Watch fills it in, Browse does not.
	TTL time.Duration
	// Interface is the name of the interface the instance was heard on; Watch fills it in,
	// Browse does not.
	Interface string
}

// IsDirectory reports whether the instance announces a directory (TXT type=Directory).
func (i Instance) IsDirectory() bool { return i.TXT[keyType] == typeDirectory }

// TDURL is where the instance's TD is: scheme (TXT, default http), its first address
// (IPv4 first), the SRV port and the TXT td path.
func (i Instance) TDURL() (string, error) {
	addrs := i.addrs()
	if len(addrs) == 0 {
		return "", fmt.Errorf("instance %q has no address", i.Name)
	}
	return i.tdURLAt(addrs[0])
}

// addrs are the instance's addresses, IPv4 first; link-local IPv6 addresses carry the
// interface the instance was heard on as their zone, without which they cannot be dialed.
func (i Instance) addrs() []netip.Addr {
	var addrs []netip.Addr
	for _, ip := range slices.Concat(i.IPv4, i.IPv6) {
		addr, ok := netip.AddrFromSlice(ip)
		if !ok {
			continue
		}
		addr = addr.Unmap()
		if addr.Is6() && addr.IsLinkLocalUnicast() {
			addr = addr.WithZone(i.Interface)
		}
		addrs = append(addrs, addr)
	}
	return addrs
}

// tdURLAt is the URL of the instance's TD at addr: scheme (TXT, default http), the SRV
// port and the TXT td path.
func (i Instance) tdURLAt(addr netip.Addr) (string, error) {
	path := i.TXT[keyTD]
	if path == "" || path[0] != '/' {
		return "", fmt.Errorf("instance %q: TXT td %q is not an absolute path", i.Name, path)
	}
	scheme := i.TXT[keyScheme]
	switch scheme {
	case "":
		scheme = "http"
	case "http", "https":
	default:
		return "", fmt.Errorf("instance %q: TXT scheme %q is not http or https", i.Name, scheme)
	}
	if i.Port <= 0 || i.Port > 65535 {
		return "", fmt.Errorf("instance %q: port %d is not a TCP port", i.Name, i.Port)
	}
	origin := url.URL{Scheme: scheme, Host: netip.AddrPortFrom(addr, uint16(i.Port)).String()}
	return origin.String() + path, nil
}

// Browse reports the _wot._tcp instances that answer on the interfaces (none: all) until
// ctx ends.
func Browse(ctx context.Context, interfaces []net.Interface, found func(Instance)) error {
	var opts []zeroconf.ClientOption
	if len(interfaces) > 0 {
		opts = append(opts, zeroconf.SelectIfaces(interfaces))
	}
	resolver, err := zeroconf.NewResolver(opts...)
	if err != nil {
		return fmt.Errorf("mDNS browsing: %w", err)
	}
	entries := make(chan *zeroconf.ServiceEntry, 16)
	if err := resolver.Browse(ctx, ServiceType, Domain, entries); err != nil {
		return fmt.Errorf("mDNS browsing: %w", err)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-entries:
			if !ok {
				return nil
			}
			found(instanceOf(e))
		}
	}
}

func instanceOf(e *zeroconf.ServiceEntry) Instance {
	return Instance{Name: unescapeLabel(e.Instance), Host: e.HostName, Port: e.Port, IPv4: e.AddrIPv4, IPv6: e.AddrIPv6, TXT: txtMap(e.Text)}
}

// txtMap is the key/value pairs of a TXT record's strings.
func txtMap(strs []string) map[string]string {
	txt := map[string]string{}
	for _, kv := range strs {
		key, value, _ := strings.Cut(kv, "=")
		// The first of repeated keys counts (RFC 6763, 6.4); keys are case-insensitive.
		if key = strings.ToLower(key); key != "" {
			if _, seen := txt[key]; !seen {
				txt[key] = value
			}
		}
	}
	return txt
}

// unescapeLabel undoes the DNS escapes (a backslash before a character, or before three
// decimal digits) that the resolver leaves in instance names: "lmosdir\ on\ lab-1".
func unescapeLabel(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] != '\\' || i+1 == len(s):
			b.WriteByte(s[i])
		case i+3 < len(s) && isDigits(s[i+1:i+4]):
			n, _ := strconv.Atoi(s[i+1 : i+4])
			b.WriteByte(byte(n))
			i += 3
		default:
			b.WriteByte(s[i+1])
			i++
		}
	}
	return b.String()
}

func isDigits(s string) bool {
	return strings.Trim(s, "0123456789") == ""
}
