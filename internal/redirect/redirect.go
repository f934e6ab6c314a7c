// Package redirect is the redirect policy of the HTTP clients lmosdir calls other parties
// with: the LMOS gateway's HTTP binding and the AOS guardian client. A server may move a
// resource on its own origin; it may never send lmosdir to another host, nor turn the
// request into a different one.
package redirect

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// SameOrigin returns an http.Client CheckRedirect that follows at most limit redirects,
// each to the origin of the first request and with its method: net/http turns a POST into
// a bodiless GET on 301, 302 and 303, which would ask for something other than what was
// meant. next, when not nil, is asked after these rules and may only restrict further.
func SameOrigin(limit int, next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > limit {
			return fmt.Errorf("stopped after %d redirects", limit)
		}
		first := via[0]
		if Origin(req.URL) != Origin(first.URL) {
			return fmt.Errorf("refused a redirect to %s, another origin than %s: only redirects on the same scheme, host and port are followed", Origin(req.URL), Origin(first.URL))
		}
		if req.Method != first.Method {
			return fmt.Errorf("refused a redirect that turns %s into %s", first.Method, req.Method)
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
}

// Origin is scheme://host:port with the default port made explicit, so that http://g and
// http://g:80 compare equal.
func Origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
