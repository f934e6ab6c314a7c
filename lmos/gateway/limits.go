package gateway

import (
	"fmt"
	"path"
	"strings"
)

// maxRedirects bounds the redirects the gateway follows on one call to a Thing.
const maxRedirects = 3

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
