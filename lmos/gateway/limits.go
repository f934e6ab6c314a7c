package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
)

// maxRedirects bounds the redirects the gateway follows on one call to a Thing.
const maxRedirects = 3

var errCrossHostRedirect = errors.New("the Thing redirected to another host; the gateway only follows redirects on the same scheme, host and port")

// sameHostRedirects lets a Thing move a resource on its own host, never send the gateway
// to a host no registered TD names.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return errCrossHostRedirect
	}
	return nil
}

func checkHostPattern(pattern string) error {
	if _, err := path.Match(pattern, ""); err != nil {
		return fmt.Errorf("allowed host pattern %q: %w", pattern, err)
	}
	return nil
}

// hostAllowed reports whether the gateway may connect to host (without port).
func (g *Gateway) hostAllowed(host string) bool {
	if len(g.cfg.AllowedHosts) == 0 {
		return true
	}
	host = strings.ToLower(host)
	for _, pattern := range g.cfg.AllowedHosts {
		if ok, _ := path.Match(strings.ToLower(pattern), host); ok {
			return true
		}
	}
	return false
}
