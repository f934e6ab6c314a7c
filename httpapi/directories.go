package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/discovery"
)

// PeerSource knows the other directories announced on the LAN.
type PeerSource interface {
	Peers() []discovery.Peer
}

// thingLink is a WoT Discovery Thing Link: a TD that only points at another TD.
type thingLink struct {
	Context             []string                  `json:"@context"`
	Type                string                    `json:"@type"`
	ID                  string                    `json:"id"`
	Title               string                    `json:"title"`
	Description         string                    `json:"description"`
	SecurityDefinitions map[string]map[string]any `json:"securityDefinitions"`
	Security            string                    `json:"security"`
	Links               []tdLink                  `json:"links"`
}

type tdLink struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
	Type string `json:"type"`
}

// listDirectories answers the peer directories seen on the LAN as Thing Links to their
// TDs; their Things are theirs to serve, so nothing of them is copied.
func (s *Server) listDirectories(c *echo.Context) error {
	if len(c.QueryParams()) > 0 {
		return errorf(http.StatusBadRequest, "/directories takes no query parameters")
	}
	links := []thingLink{}
	if s.cfg.Peers != nil {
		for _, p := range s.cfg.Peers.Peers() {
			links = append(links, thingLink{
				Context: []string{tdContext, directoryContext}, Type: "ThingLink",
				ID: directory.RetrievedID(p.TD), Title: p.Instance,
				Description:         "A Thing Description Directory announced on the local network over mDNS",
				SecurityDefinitions: map[string]map[string]any{"nosec_sc": {"scheme": "nosec"}}, Security: "nosec_sc",
				Links: []tdLink{{Rel: "describedby", Href: p.TD, Type: mediaTD}},
			})
		}
	}
	body, err := json.Marshal(links)
	if err != nil {
		return err
	}
	return writeBody(c, http.StatusOK, mediaLDJSON, body)
}
