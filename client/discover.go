package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/lmosdir/lmosdir/discovery"
)

// ErrNoDirectory means no directory answered on the LAN before the context ended.
var ErrNoDirectory = errors.New("no directory announced itself on the LAN")

// DiscoverDirectory browses the LAN over mDNS (on interfaces; none: all) for a directory
// announcing itself as WoT Discovery describes, and returns the base URL to pass to New.
// It waits until the first one answers or ctx ends (ErrNoDirectory); give ctx a deadline.
func DiscoverDirectory(ctx context.Context, interfaces ...net.Interface) (string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var base string
	err := discovery.Browse(ctx, interfaces, func(i discovery.Instance) {
		if base != "" || !i.IsDirectory() {
			return
		}
		if url, err := i.TDURL(); err == nil {
			base = directoryBase(url)
			cancel()
		}
	})
	if err != nil {
		return "", err
	}
	if base == "" {
		return "", ErrNoDirectory
	}
	return base, nil
}

// DirectoryTD returns the directory's own Thing Description (/.well-known/wot).
func (c *Client) DirectoryTD(ctx context.Context) ([]byte, error) {
	_, td, err := c.do(ctx, http.MethodGet, c.base+wellKnownTD, http.Header{"Accept": {mediaTD + ", application/json"}}, nil)
	return td, err
}

// wellKnownTD is where a WoT Discovery directory serves its TD.
const wellKnownTD = "/.well-known/wot"

// directoryBase is a directory's base URL given its TD URL: the well-known path removed.
func directoryBase(tdURL string) string {
	base, _ := strings.CutSuffix(tdURL, wellKnownTD)
	return base
}
