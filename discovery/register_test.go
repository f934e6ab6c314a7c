package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/internal/dirtest"
	"github.com/lmosdir/lmosdir/internal/testsync"
)

// thingServer serves one TD at /td, as a Thing on the LAN does, and counts the requests.
type thingServer struct {
	*httptest.Server
	mu       sync.Mutex
	td       string
	status   int
	requests atomic.Int32
	hold     chan struct{} // when set, requests wait for it to close
}

func newThingServer(t *testing.T, ip, td string) *thingServer {
	t.Helper()
	s := &thingServer{td: td, status: http.StatusOK}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.mu.Lock()
		body, status, hold := s.td, s.status, s.hold
		s.mu.Unlock()
		if hold != nil {
			<-hold
		}
		if r.URL.Path != "/td" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/td+json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	listener, err := new(net.ListenConfig).Listen(context.Background(), "tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	s.Listener = listener
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *thingServer) serve(td string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.td, s.status = td, status
}

func (s *thingServer) port() int { return s.Listener.Addr().(*net.TCPAddr).Port }

// instanceOn is a Thing instance announcing the TD of s.
func instanceOn(name string, s *thingServer) Instance {
	addr := s.Listener.Addr().(*net.TCPAddr)
	return Instance{
		Name: name, Host: "thing.local.", Port: addr.Port, IPv4: []net.IP{addr.IP}, Interface: "lo",
		TXT: map[string]string{keyTD: "/td", keyType: "Thing"}, TTL: 120 * time.Second,
	}
}

func thingTD(id, title string) string {
	return fmt.Sprintf(`{"@context":"https://www.w3.org/2022/wot/td/v1.1","id":%q,"title":%q,"securityDefinitions":{"n":{"scheme":"nosec"}},"security":"n"}`, id, title)
}

type registrarLab struct {
	dir       *directory.Service
	registrar *Registrar
	log       *testsync.Buffer
}

// newRegistrarLab runs a registrar on a directory of its own until the test ends.
func newRegistrarLab(t *testing.T, opts RegistrarOptions) *registrarLab {
	t.Helper()
	lab := &registrarLab{dir: dirtest.NewEmbedded(t, directory.Options{}), log: &testsync.Buffer{}}
	if opts.Refresh == 0 {
		opts.Refresh = time.Hour
	}
	if opts.FetchInterval == 0 {
		opts.FetchInterval = time.Millisecond
	}
	opts.Log = slog.New(slog.NewTextHandler(lab.log, nil))
	lab.registrar = NewRegistrar(lab.dir, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		lab.registrar.Run(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return lab
}

// await waits until cond holds, failing the test after a generous deadline.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testsync.Await(t, what, 15*time.Second, cond)
}

func (lab *registrarLab) get(id string) (directory.Thing, error) {
	return lab.dir.Get(context.Background(), id)
}

func (lab *registrarLab) awaitTitle(t *testing.T, id, title string) directory.Thing {
	t.Helper()
	var thing directory.Thing
	await(t, fmt.Sprintf("%s titled %q", id, title), func() bool {
		var err error
		thing, err = lab.get(id)
		return err == nil && bytes.Contains(thing.Document, []byte(`"title":"`+title+`"`))
	})
	return thing
}

func (lab *registrarLab) awaitGone(t *testing.T, id string) {
	t.Helper()
	await(t, id+" removed", func() bool {
		_, err := lab.get(id)
		return errors.Is(err, directory.ErrNotFound)
	})
}

// registration decodes the registration information the directory serves for thing.
func registration(t *testing.T, thing directory.Thing) map[string]any {
	t.Helper()
	var doc struct {
		Registration map[string]any `json:"registration"`
	}
	if err := json.Unmarshal(thing.Enriched(time.Now()), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Registration
}

func TestRegistrarRegistersUpdatesAndRemovesThings(t *testing.T) {
	lab := newRegistrarLab(t, RegistrarOptions{Refresh: 50 * time.Millisecond})
	thing := newThingServer(t, "127.0.0.1", thingTD("urn:x:lamp", "lamp"))
	lamp := instanceOn("lamp on lab", thing)
	before := time.Now()
	lab.registrar.Handle(Event{Change: Found, Instance: lamp})

	registered := lab.awaitTitle(t, "urn:x:lamp", "lamp")
	href := fmt.Sprintf("http://127.0.0.1:%d/td", thing.port())
	reg := registration(t, registered)
	origin, _ := json.Marshal(reg["origin"])
	if want := fmt.Sprintf(`{"href":%q,"instance":"lamp on lab","via":"mdns"}`, href); string(origin) != want {
		t.Errorf("origin = %s, want %s", origin, want)
	}
	// The SRV TTL (120 s) is longer than two refreshes, so it is the registration's.
	if reg["ttl"] != 120.0 || registered.Expires.IsZero() {
		t.Errorf("ttl %v, expires %v", reg["ttl"], registered.Expires)
	}
	retrieved, err := time.Parse(time.RFC3339Nano, reg["retrieved"].(string))
	if err != nil || retrieved.Before(before.Truncate(time.Microsecond)) || retrieved.After(time.Now()) {
		t.Errorf("retrieved %v (%v), want the time of the fetch", reg["retrieved"], err)
	}
	if again := registration(t, registered)["retrieved"]; again != reg["retrieved"] {
		t.Errorf("retrieved changes from read to read: %v then %v", reg["retrieved"], again)
	}

	// A Thing that changes its TD is updated at the next refresh, with no mDNS change.
	thing.serve(thingTD("urn:x:lamp", "lamp, repainted"), http.StatusOK)
	lab.awaitTitle(t, "urn:x:lamp", "lamp, repainted")

	lab.registrar.Handle(Event{Change: Gone, Instance: lamp, Reason: "goodbye"})
	lab.awaitGone(t, "urn:x:lamp")
	if !strings.Contains(lab.log.String(), "reason=goodbye") {
		t.Errorf("the removal is not logged with its reason:\n%s", lab.log)
	}
}

func TestRegistrarNamesAnonymousThingsByTheirURL(t *testing.T) {
	lab := newRegistrarLab(t, RegistrarOptions{})
	thing := newThingServer(t, "127.0.0.1", `{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"anonymous","securityDefinitions":{"n":{"scheme":"nosec"}},"security":"n"}`)
	lab.registrar.Handle(Event{Change: Found, Instance: instanceOn("anonymous", thing)})
	id := directory.RetrievedID(fmt.Sprintf("http://127.0.0.1:%d/td", thing.port()))
	registered := lab.awaitTitle(t, id, "anonymous")
	if !bytes.Contains(registered.Document, []byte(`"id":"`+id+`"`)) {
		t.Errorf("the served TD does not carry its id: %s", registered.Document)
	}
}

func TestRegistrarLogsInvalidTDsOnce(t *testing.T) {
	lab := newRegistrarLab(t, RegistrarOptions{Refresh: 20 * time.Millisecond})
	thing := newThingServer(t, "127.0.0.1", `{"id":"urn:x:broken","title":"no context, no security"}`)
	lab.registrar.Handle(Event{Change: Found, Instance: instanceOn("broken", thing)})
	await(t, "several fetches", func() bool { return thing.requests.Load() >= 4 })
	if _, err := lab.get("urn:x:broken"); !errors.Is(err, directory.ErrNotFound) {
		t.Fatalf("an invalid TD was registered: %v", err)
	}
	logged := lab.log.String()
	if n := strings.Count(logged, "mDNS: thing not registered"); n != 1 {
		t.Errorf("the lasting problem is logged %d times, want once:\n%s", n, logged)
	}
	if !strings.Contains(logged, "security") {
		t.Errorf("the log does not say what is wrong:\n%s", logged)
	}

	// Once fixed, the Thing is registered at the next refresh.
	thing.serve(thingTD("urn:x:broken", "fixed"), http.StatusOK)
	lab.awaitTitle(t, "urn:x:broken", "fixed")
}

func TestRegistrarRefusesWhatItShouldNotFetch(t *testing.T) {
	lab := newRegistrarLab(t, RegistrarOptions{MaxTDBytes: 512})
	large := newThingServer(t, "127.0.0.1", thingTD("urn:x:large", strings.Repeat("x", 600)))
	lab.registrar.Handle(Event{Change: Found, Instance: instanceOn("large", large)})

	// A redirect is not followed, wherever it leads.
	elsewhere := newThingServer(t, "127.0.0.1", thingTD("urn:x:elsewhere", "elsewhere"))
	redirecting := newThingServer(t, "127.0.0.1", "")
	redirecting.Config.Handler = http.RedirectHandler(elsewhere.URL+"/td", http.StatusFound)
	lab.registrar.Handle(Event{Change: Found, Instance: instanceOn("redirecting", redirecting)})

	// An instance whose only address is public is not fetched from at all.
	public := instanceOn("public", large)
	public.IPv4 = []net.IP{net.ParseIP("203.0.113.7")}
	lab.registrar.Handle(Event{Change: Found, Instance: public})

	await(t, "the three refusals logged", func() bool {
		logged := lab.log.String()
		return strings.Contains(logged, "larger than 512 bytes") && strings.Contains(logged, "302 Found") &&
			strings.Contains(logged, "only public addresses (203.0.113.7)")
	})
	if n := elsewhere.requests.Load(); n != 0 {
		t.Errorf("the redirect was followed: %d requests", n)
	}
	for _, id := range []string{"urn:x:large", "urn:x:elsewhere"} {
		if _, err := lab.get(id); !errors.Is(err, directory.ErrNotFound) {
			t.Errorf("%s registered: %v", id, err)
		}
	}
}

func TestRegistrarFetchesPublicAddressesOnlyWhenAllowed(t *testing.T) {
	var refused, allowed Registrar
	refused.opts = RegistrarOptions{}.withDefaults()
	allowed.opts = RegistrarOptions{FetchPublic: true}.withDefaults()
	for _, c := range []struct {
		ip              string
		private, public bool
	}{
		{"10.1.2.3", true, true},
		{"192.168.0.9", true, true},
		{"172.16.5.5", true, true},
		{"169.254.3.3", true, true},
		{"127.0.0.1", true, true},
		{"fd00::7", true, true},
		{"fe80::1", true, true},
		{"203.0.113.7", false, true},
		{"8.8.8.8", false, true},
		{"2001:db8::1", false, true},
		{"224.0.0.251", false, false},
		{"0.0.0.0", false, false},
	} {
		ip := net.ParseIP(c.ip)
		if got := refused.checkDial("tcp", net.JoinHostPort(c.ip, "80"), nil) == nil; got != c.private {
			t.Errorf("%s: dial allowed by default = %v, want %v", ip, got, c.private)
		}
		if got := allowed.checkDial("tcp", net.JoinHostPort(c.ip, "80"), nil) == nil; got != c.public {
			t.Errorf("%s: dial allowed with FetchPublic = %v, want %v", ip, got, c.public)
		}
	}
}

func TestRegistrarLimitsFetchesPerAddress(t *testing.T) {
	lab := newRegistrarLab(t, RegistrarOptions{FetchInterval: time.Hour})
	first := newThingServer(t, "127.0.0.1", thingTD("urn:x:first", "first"))
	firstInstance := instanceOn("first", first)
	lab.registrar.Handle(Event{Change: Found, Instance: firstInstance})
	lab.awaitTitle(t, "urn:x:first", "first")

	// The same announcer changes: it is not fetched again within the interval, while
	// another address is fetched at once.
	first.serve(thingTD("urn:x:first", "changed"), http.StatusOK)
	firstInstance.TXT = map[string]string{keyTD: "/td", keyType: "Thing", "v": "2"}
	lab.registrar.Handle(Event{Change: Updated, Instance: firstInstance})
	other := newThingServer(t, "127.0.0.2", thingTD("urn:x:other", "other"))
	lab.registrar.Handle(Event{Change: Found, Instance: instanceOn("other", other)})
	lab.awaitTitle(t, "urn:x:other", "other")
	if n := first.requests.Load(); n != 1 {
		t.Errorf("the first announcer was fetched %d times within the interval", n)
	}
	if thing, err := lab.get("urn:x:first"); err != nil || !bytes.Contains(thing.Document, []byte(`"title":"first"`)) {
		t.Errorf("the first Thing changed within the interval: %s %v", thing.Document, err)
	}
}

// barrier returns once the registrar has handled every event passed before it: events are
// handled in order, and a peer directory's shows at once.
func (lab *registrarLab) barrier(t *testing.T) {
	t.Helper()
	name := fmt.Sprintf("barrier %d", time.Now().UnixNano())
	lab.registrar.Handle(Event{Change: Found, Instance: Instance{Name: name, Port: 1, IPv4: []net.IP{net.IPv4(10, 9, 9, 9)}, TXT: map[string]string{keyTD: directoryTDPath, keyType: typeDirectory}}})
	await(t, "the registrar to catch up", func() bool {
		return slices.ContainsFunc(lab.registrar.Peers(), func(p Peer) bool { return p.Instance == name })
	})
}

func TestRegistrarBoundsConcurrentFetches(t *testing.T) {
	lab := newRegistrarLab(t, RegistrarOptions{MaxFetches: 2})
	release := make(chan struct{})
	releaseOnce := sync.OnceFunc(func() { close(release) })
	// Registered after the servers' cleanups, so it runs first and lets held requests end.
	defer releaseOnce()
	var servers []*thingServer
	for i := range 3 {
		s := newThingServer(t, fmt.Sprintf("127.0.0.%d", i+1), thingTD(fmt.Sprintf("urn:x:held-%d", i), "held"))
		s.hold = release
		servers = append(servers, s)
		lab.registrar.Handle(Event{Change: Found, Instance: instanceOn(fmt.Sprintf("held %d", i), s)})
	}
	requests := func() (n int32) {
		for _, s := range servers {
			n += s.requests.Load()
		}
		return n
	}
	await(t, "two fetches", func() bool { return requests() >= 2 })
	lab.barrier(t)
	if n := requests(); n != 2 {
		t.Fatalf("%d fetches at once, want at most 2", n)
	}
	releaseOnce()
	for i := range 3 {
		lab.awaitTitle(t, fmt.Sprintf("urn:x:held-%d", i), "held")
	}
}

func TestRegistrarRemovesAThingThatLeavesDuringItsFetch(t *testing.T) {
	lab := newRegistrarLab(t, RegistrarOptions{})
	thing := newThingServer(t, "127.0.0.1", thingTD("urn:x:leaving", "leaving"))
	release := make(chan struct{})
	thing.hold = release
	leaving := instanceOn("leaving", thing)
	lab.registrar.Handle(Event{Change: Found, Instance: leaving})
	await(t, "the fetch", func() bool { return thing.requests.Load() == 1 })
	lab.registrar.Handle(Event{Change: Gone, Instance: leaving, Reason: "silent"})
	lab.barrier(t)
	close(release)

	// Registering another Thing afterwards shows that the first fetch has been settled.
	later := newThingServer(t, "127.0.0.2", thingTD("urn:x:later", "later"))
	lab.registrar.Handle(Event{Change: Found, Instance: instanceOn("later", later)})
	lab.awaitTitle(t, "urn:x:later", "later")
	lab.awaitGone(t, "urn:x:leaving")
}

func TestRegistrarKeepsAThingWhoseTDIsUnavailableForAWhile(t *testing.T) {
	lab := newRegistrarLab(t, RegistrarOptions{Refresh: 20 * time.Millisecond})
	thing := newThingServer(t, "127.0.0.1", thingTD("urn:x:flaky", "flaky"))
	flaky := instanceOn("flaky", thing)
	lab.registrar.Handle(Event{Change: Found, Instance: flaky})
	lab.awaitTitle(t, "urn:x:flaky", "flaky")
	thing.serve(`{}`, http.StatusServiceUnavailable)
	await(t, "the failure logged", func() bool { return strings.Contains(lab.log.String(), "503 Service Unavailable") })
	if _, err := lab.get("urn:x:flaky"); err != nil {
		t.Fatalf("a Thing still announcing was removed: %v", err)
	}
	lab.registrar.Handle(Event{Change: Gone, Instance: flaky, Reason: "expired"})
	lab.awaitGone(t, "urn:x:flaky")
}

func TestRegistrarListsPeerDirectories(t *testing.T) {
	lab := newRegistrarLab(t, RegistrarOptions{Self: "lmosdir on here"})
	peer := func(name string, ip string) Instance {
		return Instance{Name: name, Port: 8080, IPv4: []net.IP{net.ParseIP(ip)}, TXT: map[string]string{keyTD: directoryTDPath, keyType: typeDirectory}}
	}
	for _, e := range []Event{
		{Change: Found, Instance: peer("lmosdir on here", "10.0.0.1")},
		{Change: Found, Instance: peer("lmosdir on b", "10.0.0.3")},
		{Change: Found, Instance: peer("lmosdir on a", "10.0.0.2")},
		{Change: Found, Instance: peer("far away", "198.51.100.1")},
		{Change: Found, Instance: peer("leaving", "10.0.0.4")},
		{Change: Gone, Instance: peer("leaving", "10.0.0.4"), Reason: "goodbye"},
	} {
		lab.registrar.Handle(e)
	}
	want := []Peer{{"lmosdir on a", "http://10.0.0.2:8080/.well-known/wot"}, {"lmosdir on b", "http://10.0.0.3:8080/.well-known/wot"}}
	await(t, "the peers", func() bool { return fmt.Sprint(lab.registrar.Peers()) == fmt.Sprint(want) })
	if things := lab.count(t); things != 0 {
		t.Errorf("peer directories were registered as Things: %d", things)
	}

	// A Thing whose announcement turns into a directory's is removed and becomes a peer.
	server := newThingServer(t, "127.0.0.1", thingTD("urn:x:turning", "turning"))
	turning := instanceOn("turning", server)
	lab.registrar.Handle(Event{Change: Found, Instance: turning})
	lab.awaitTitle(t, "urn:x:turning", "turning")
	turning.TXT = map[string]string{keyTD: directoryTDPath, keyType: typeDirectory}
	lab.registrar.Handle(Event{Change: Updated, Instance: turning})
	lab.awaitGone(t, "urn:x:turning")
	await(t, "the new peer", func() bool { return len(lab.registrar.Peers()) == 3 })
}

func (lab *registrarLab) count(t *testing.T) int {
	t.Helper()
	m, err := lab.dir.Membership(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return m.Total
}
