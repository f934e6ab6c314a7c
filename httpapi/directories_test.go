package httpapi

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/discovery"
)

func TestDirectoriesWithoutDiscovery(t *testing.T) {
	f := newFixture(t, "sqlite")
	r := f.get("/directories").want(t, http.StatusOK)
	if ct := r.header.Get("Content-Type"); ct != "application/ld+json" || string(r.body) != "[]" {
		t.Errorf("GET /directories: %q %s", ct, r.body)
	}
	head := f.do(http.MethodHead, "/directories", "", "").want(t, http.StatusOK)
	if len(head.body) != 0 || head.header.Get("Content-Length") != "2" {
		t.Errorf("HEAD /directories: %v %q", head.header, head.body)
	}
	p := f.get("/directories?limit=1").want(t, http.StatusBadRequest).problem(t)
	if p.Detail != "/directories takes no query parameters" {
		t.Errorf("detail %q", p.Detail)
	}
}

func TestDirectoriesListsPeersAsThingLinks(t *testing.T) {
	registrar := discovery.NewRegistrar(nil, discovery.RegistrarOptions{Self: "lmosdir on here"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { registrar.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	peer := func(name, ip string) discovery.Instance {
		return discovery.Instance{Name: name, Port: 8080, IPv4: []net.IP{net.ParseIP(ip)}, TXT: map[string]string{"td": "/.well-known/wot", "type": "Directory"}}
	}
	registrar.Handle(discovery.Event{Change: discovery.Found, Instance: peer("lmosdir on here", "10.0.0.1")})
	registrar.Handle(discovery.Event{Change: discovery.Found, Instance: peer("lmosdir on there", "10.0.0.2")})
	for deadline := time.Now().Add(10 * time.Second); len(registrar.Peers()) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the peer was not recorded")
		}
	}

	f := newFixture(t, "sqlite", func(c *Config) { c.Peers = registrar })
	r := f.get("/directories").want(t, http.StatusOK)
	href := "http://10.0.0.2:8080/.well-known/wot"
	want := `[{"@context":["https://www.w3.org/2022/wot/td/v1.1","https://www.w3.org/2022/wot/discovery"],"@type":"ThingLink",` +
		`"id":"` + directory.RetrievedID(href) + `","title":"lmosdir on there",` +
		`"description":"A Thing Description Directory announced on the local network over mDNS",` +
		`"securityDefinitions":{"nosec_sc":{"scheme":"nosec"}},"security":"nosec_sc",` +
		`"links":[{"rel":"describedby","href":"` + href + `","type":"application/td+json"}]}]`
	if string(r.body) != want {
		t.Fatalf("GET /directories\n got %s\nwant %s", r.body, want)
	}
	// A Thing Link is a TD.
	var links []json.RawMessage
	if err := json.Unmarshal(r.body, &links); err != nil {
		t.Fatal(err)
	}
	v, err := validator()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Validate(links[0]); err != nil {
		t.Errorf("the Thing Link is not a valid TD: %v", err)
	}
}
