package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/signal"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/grandcat/zeroconf"
	"github.com/miekg/dns"

	"github.com/lmosdir/lmosdir/internal/netlab"
)

// harness drives a watcher on the interface eth0 with a clock of its own.
type harness struct {
	t      *testing.T
	clock  time.Time
	w      *watcher
	events []Event
	asked  []asked
}

// asked is what the watcher asked, and when.
type asked struct {
	at        time.Time
	iface     string
	questions []dns.Question
}

func newHarness(t *testing.T, opts WatchOptions) *harness {
	h := &harness{t: t, clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	h.w = newWatcher(opts, []string{"eth0"}, func() time.Time { return h.clock },
		func(e Event) { h.events = append(h.events, e) },
		func(iface string, qs []dns.Question) { h.asked = append(h.asked, asked{h.clock, iface, qs}) })
	h.w.tick()
	return h
}

// wait lets d pass, ticking as Watch does.
func (h *harness) wait(d time.Duration) {
	for end := h.clock.Add(d); h.clock.Before(end); {
		h.clock = h.clock.Add(tickEvery)
		h.w.tick()
	}
}

// hear passes a response with the records to the watcher, as heard on eth0 now.
func (h *harness) hear(records ...dns.RR) {
	h.hearOn("eth0", records...)
}

func (h *harness) hearOn(iface string, records ...dns.RR) {
	h.w.receive(&dns.Msg{MsgHdr: dns.MsgHdr{Response: true}, Answer: records}, iface, h.clock)
}

// expect checks the events since the last expect.
func (h *harness) expect(want ...Event) {
	h.t.Helper()
	got := h.events
	h.events = nil
	if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
		h.t.Fatalf("events:\n%s\nwant:\n%s", describe(got), describe(want))
	}
}

func describe(events []Event) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "  %s %q %+v\n", e.Change, e.Reason, e.Instance)
	}
	return b.String()
}

// questions are the questions asked after the time since, as "name type", sorted.
func (h *harness) questions(since time.Time) []string {
	var qs []string
	for _, a := range h.asked {
		if a.at.After(since) {
			for _, q := range a.questions {
				qs = append(qs, q.Name+" "+dns.TypeToString[q.Qtype])
			}
		}
	}
	slices.Sort(qs)
	return qs
}

// Records as responders send them; TTLs in seconds.
const (
	longTTL  = 3200
	addrTTL  = 120 // for host records (RFC 6762, 10)
	lampPort = 8080
)

func hdr(name string, rrtype uint16, ttl uint32) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: rrtype, Class: dns.ClassINET, Ttl: ttl}
}

func fqdn(instance string) string { return instance + "." + service }

func ptrRR(instance string, ttl uint32) *dns.PTR {
	return &dns.PTR{Hdr: hdr(service, dns.TypePTR, ttl), Ptr: fqdn(instance)}
}

func srvRR(instance, target string, port uint16, ttl uint32) *dns.SRV {
	return &dns.SRV{Hdr: hdr(fqdn(instance), dns.TypeSRV, ttl), Target: target, Port: port}
}

func txtRR(instance string, ttl uint32, txt ...string) *dns.TXT {
	return &dns.TXT{Hdr: hdr(fqdn(instance), dns.TypeTXT, ttl), Txt: txt}
}

func aRR(host, ip string) *dns.A {
	return &dns.A{Hdr: hdr(host, dns.TypeA, addrTTL), A: net.ParseIP(ip)}
}

func aaaaRR(host, ip string) *dns.AAAA {
	return &dns.AAAA{Hdr: hdr(host, dns.TypeAAAA, addrTTL), AAAA: net.ParseIP(ip)}
}

// flushing sets the cache-flush bit of rr.
func flushing[RR dns.RR](rr RR) RR {
	rr.Header().Class |= cacheFlush
	return rr
}

// announcement is what a responder announces of a Thing: the unique records with the
// cache-flush bit.
func announcement(instance, host, ip string, txt ...string) []dns.RR {
	return []dns.RR{
		ptrRR(instance, longTTL),
		flushing(srvRR(instance, host, lampPort, longTTL)),
		flushing(txtRR(instance, longTTL, txt...)),
		flushing(aRR(host, ip)),
	}
}

func thing(name, host, ip string, txt map[string]string) Instance {
	return Instance{
		Name: name, Host: host, Port: lampPort, IPv4: []net.IP{net.ParseIP(ip).To4()}, TXT: txt,
		TTL: longTTL * time.Second, Interface: "eth0",
	}
}

var lampTXT = map[string]string{"td": "/td", "type": "Thing"}

func TestWatchFindsAnInstanceOnceItIsComplete(t *testing.T) {
	h := newHarness(t, WatchOptions{})
	h.hear(ptrRR(`lamp\ 1`, longTTL))
	h.expect()
	asking := h.clock
	h.wait(tickEvery)
	if got, want := h.questions(asking), []string{`lamp\ 1._wot._tcp.local. SRV`, `lamp\ 1._wot._tcp.local. TXT`}; !slices.Equal(got, want) {
		t.Errorf("asked %q for an instance with a PTR only, want %q", got, want)
	}

	// Keys are case-insensitive, and the first of repeated keys counts, as in Browse.
	h.hear(srvRR(`lamp\ 1`, "lamp.local.", lampPort, longTTL), txtRR(`lamp\ 1`, longTTL, "TD=/td", "type=Thing", "td=/other"))
	h.expect()
	asking = h.clock
	h.wait(startGap)
	if got, want := h.questions(asking), []string{"_wot._tcp.local. PTR", "lamp.local. A", "lamp.local. AAAA", `lamp\ 1._wot._tcp.local. SRV`}; !slices.Equal(got, want) {
		t.Errorf("asked %q for an instance without addresses, want %q", got, want)
	}

	h.hear(aRR("lamp.local.", "10.0.0.7"), aRR("elsewhere.local.", "10.0.0.8"))
	h.expect(Event{Change: Found, Instance: thing("lamp 1", "lamp.local.", "10.0.0.7", lampTXT)})

	// Re-announcements, with the cache-flush bit and without, change nothing.
	h.wait(5 * time.Second)
	h.hear(announcement(`lamp\ 1`, "lamp.local.", "10.0.0.7", "TD=/td", "type=Thing", "td=/other")...)
	h.hear(ptrRR(`lamp\ 1`, longTTL), srvRR(`lamp\ 1`, "LAMP.local.", lampPort, longTTL), txtRR(`lamp\ 1`, longTTL, "TD=/td", "type=Thing", "td=/other"), aRR("lamp.local.", "10.0.0.7"))
	// The same records heard on another interface do not make it a second instance.
	h.hearOn("wlan0", announcement(`lamp\ 1`, "lamp.local.", "10.0.0.9", "td=/td")...)
	h.wait(time.Minute)
	h.expect()
}

func TestWatchReportsChanges(t *testing.T) {
	h := newHarness(t, WatchOptions{})
	h.hear(announcement("lamp", "lamp.local.", "10.0.0.7", "td=/td", "type=Thing")...)
	lamp := thing("lamp", "lamp.local.", "10.0.0.7", lampTXT)
	h.expect(Event{Change: Found, Instance: lamp})

	h.wait(5 * time.Second)
	h.hear(flushing(txtRR("lamp", longTTL, "td=/td/v2", "type=Thing")))
	lamp.TXT = map[string]string{"td": "/td/v2", "type": "Thing"}
	h.expect(Event{Change: Updated, Instance: lamp})

	// An address added without the cache-flush bit joins the others.
	h.wait(5 * time.Second)
	h.hear(aRR("lamp.local.", "10.0.0.3"), aaaaRR("lamp.local.", "fe80::7"))
	lamp.IPv4 = []net.IP{net.ParseIP("10.0.0.3").To4(), net.ParseIP("10.0.0.7").To4()}
	lamp.IPv6 = []net.IP{net.ParseIP("fe80::7")}
	h.expect(Event{Change: Updated, Instance: lamp})

	// The same addresses in another order are no change.
	h.wait(5 * time.Second)
	h.hear(aaaaRR("lamp.local.", "fe80::7"), aRR("lamp.local.", "10.0.0.7"), aRR("lamp.local.", "10.0.0.3"))
	h.expect()

	// The cache-flush bit replaces the addresses heard before, but not those of the same response.
	h.wait(5 * time.Second)
	h.hear(flushing(aRR("lamp.local.", "10.0.0.4")), flushing(aRR("lamp.local.", "10.0.0.5")))
	lamp.IPv4 = []net.IP{net.ParseIP("10.0.0.4").To4(), net.ParseIP("10.0.0.5").To4()}
	h.expect(Event{Change: Updated, Instance: lamp})

	// A new port and target: reported once the target's address is known.
	h.wait(5 * time.Second)
	h.hear(flushing(srvRR("lamp", "lamp-2.local.", 8081, longTTL)))
	h.expect()
	h.hear(flushing(aRR("lamp-2.local.", "10.0.0.8")))
	lamp.Host, lamp.Port, lamp.IPv4 = "lamp-2.local.", 8081, []net.IP{net.ParseIP("10.0.0.8").To4()}
	lamp.IPv6 = nil
	h.expect(Event{Change: Updated, Instance: lamp})
}

func TestWatchCacheFlushReplacesTXT(t *testing.T) {
	h := newHarness(t, WatchOptions{})
	h.hear(announcement("lamp", "lamp.local.", "10.0.0.7", "td=/td", "type=Thing")...)
	lamp := thing("lamp", "lamp.local.", "10.0.0.7", lampTXT)
	h.expect(Event{Change: Found, Instance: lamp})

	// Without the cache-flush bit, a new TXT stands beside the old one: the old one counts
	// again when the new one expires.
	h.wait(5 * time.Second)
	h.hear(txtRR("lamp", 30, "td=/td", "type=Thing", "v=2"))
	v2 := lamp
	v2.TXT = map[string]string{"td": "/td", "type": "Thing", "v": "2"}
	h.expect(Event{Change: Updated, Instance: v2})
	h.wait(30 * time.Second)
	h.expect(Event{Change: Updated, Instance: lamp})

	// With it, the new TXT replaces the old one: when it expires, the instance has no TXT
	// and is asked for one, without a report.
	h.hear(flushing(txtRR("lamp", 30, "td=/td", "type=Thing", "v=3")))
	v3 := lamp
	v3.TXT = map[string]string{"td": "/td", "type": "Thing", "v": "3"}
	h.expect(Event{Change: Updated, Instance: v3})
	h.wait(30 * time.Second)
	h.expect()
	expired := h.clock
	h.wait(2 * time.Second)
	if got := h.questions(expired); !slices.Contains(got, "lamp._wot._tcp.local. TXT") {
		t.Errorf("asked %q after the TXT expired", got)
	}
	h.hear(flushing(txtRR("lamp", longTTL, "td=/td", "type=Thing", "v=3")))
	h.expect()
}

func TestWatchGoodbyes(t *testing.T) {
	h := newHarness(t, WatchOptions{})
	lamp := thing("lamp", "lamp.local.", "10.0.0.7", lampTXT)
	for _, bye := range []dns.RR{ptrRR("lamp", 0), flushing(srvRR("lamp", "lamp.local.", lampPort, 0))} {
		h.hear(announcement("lamp", "lamp.local.", "10.0.0.7", "td=/td", "type=Thing")...)
		h.expect(Event{Change: Found, Instance: lamp})
		h.wait(5 * time.Second)
		h.hear(bye)
		h.expect(Event{Change: Gone, Instance: lamp, Reason: "goodbye"})
	}

	// A goodbye of an SRV the instance no longer has leaves it be.
	h.hear(announcement("lamp", "lamp.local.", "10.0.0.7", "td=/td", "type=Thing")...)
	h.expect(Event{Change: Found, Instance: lamp})
	h.hear(srvRR("lamp", "lamp.local.", 9999, 0))
	h.wait(time.Minute)
	h.expect()
}

func TestWatchExpiry(t *testing.T) {
	h := newHarness(t, WatchOptions{})
	lamp := thing("lamp", "lamp.local.", "10.0.0.7", lampTXT)
	lamp.TTL = 20 * time.Second
	records := announcement("lamp", "lamp.local.", "10.0.0.7", "td=/td", "type=Thing")
	records[1] = flushing(srvRR("lamp", "lamp.local.", lampPort, 20))
	h.hear(records...)
	h.expect(Event{Change: Found, Instance: lamp})
	h.wait(16 * time.Second)
	if got := h.questions(h.clock.Add(-tickEvery)); !slices.Contains(got, "lamp._wot._tcp.local. SRV") {
		t.Errorf("asked %q when the SRV was at 80%% of its TTL", got)
	}
	h.wait(4*time.Second - tickEvery)
	h.expect()
	h.wait(tickEvery)
	h.expect(Event{Change: Gone, Instance: lamp, Reason: "expired"})

	// The same when the PTR runs out.
	records[0] = ptrRR("lamp", 20)
	records[1] = flushing(srvRR("lamp", "lamp.local.", lampPort, longTTL))
	h.hear(records...)
	lamp.TTL = longTTL * time.Second
	h.expect(Event{Change: Found, Instance: lamp})
	h.wait(20 * time.Second)
	h.expect(Event{Change: Gone, Instance: lamp, Reason: "expired"})
}

func TestWatchQueriesOnSchedule(t *testing.T) {
	h := newHarness(t, WatchOptions{Recheck: 10 * time.Second})
	h.wait(31 * time.Second)
	var at []time.Duration
	start := h.asked[0].at
	for _, a := range h.asked {
		if a.iface != "eth0" || !reflect.DeepEqual(a.questions, []dns.Question{{Name: service, Qtype: dns.TypePTR, Qclass: dns.ClassINET}}) {
			t.Fatalf("asked %+v", a)
		}
		at = append(at, a.at.Sub(start))
	}
	if want := []time.Duration{0, time.Second, 11 * time.Second, 21 * time.Second, 31 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("PTR queries at %v, want %v", at, want)
	}
}

func TestWatchSilentInstancesGo(t *testing.T) {
	h := newHarness(t, WatchOptions{Recheck: time.Minute})
	lamp := thing("lamp", "lamp.local.", "10.0.0.7", lampTXT)
	answer := func() {
		h.hear(ptrRR("lamp", longTTL), srvRR("lamp", "lamp.local.", lampPort, longTTL), aRR("lamp.local.", "10.0.0.7"))
	}
	h.hear(announcement("lamp", "lamp.local.", "10.0.0.7", "td=/td", "type=Thing")...)
	h.expect(Event{Change: Found, Instance: lamp})
	h.wait(time.Second) // the second query at start
	answer()
	h.wait(time.Minute)
	h.wait(time.Minute) // one recheck unanswered
	h.expect()
	answer()
	h.wait(time.Minute)
	h.wait(time.Minute) // one recheck unanswered again: the count started over
	h.expect()
	h.wait(time.Minute) // two in a row
	h.expect(Event{Change: Gone, Instance: lamp, Reason: "silent"})

	// A new sighting after Gone is a new Found.
	h.hear(announcement("lamp", "lamp.local.", "10.0.0.7", "td=/td", "type=Thing")...)
	h.expect(Event{Change: Found, Instance: lamp})
}

func TestWatchKeepsAtMostMaxInstances(t *testing.T) {
	h := newHarness(t, WatchOptions{MaxInstances: 3})
	var things []Instance
	for i := 1; i <= 4; i++ {
		name, host, ip := fmt.Sprintf("thing-%d", i), fmt.Sprintf("host-%d.local.", i), fmt.Sprintf("10.0.0.%d", i)
		h.hear(announcement(name, host, ip, "td=/td", "type=Thing")...)
		things = append(things, thing(name, host, ip, lampTXT))
	}
	h.expect(Event{Change: Found, Instance: things[0]}, Event{Change: Found, Instance: things[1]}, Event{Change: Found, Instance: things[2]})
	h.hear(announcement("thing-4", "host-4.local.", "10.0.0.4", "td=/td", "type=Thing")...)
	h.expect()

	h.hear(ptrRR("thing-2", 0))
	h.expect(Event{Change: Gone, Instance: things[1], Reason: "goodbye"})
	h.hear(announcement("thing-4", "host-4.local.", "10.0.0.4", "td=/td", "type=Thing")...)
	h.expect(Event{Change: Found, Instance: things[3]})
}

func TestWatchDropsInstancesThatNeverComplete(t *testing.T) {
	h := newHarness(t, WatchOptions{MaxInstances: 1})
	h.hear(ptrRR("partial", longTTL), txtRR("partial", longTTL, "td=/td"))
	since := h.clock
	lamp := announcement("lamp", "lamp.local.", "10.0.0.7", "td=/td", "type=Thing")
	h.wait(partialGrace - tickEvery)
	h.hear(lamp...) // no room while the partial instance has its grace time
	h.expect()
	if got := h.questions(since); !slices.Contains(got, "partial._wot._tcp.local. SRV") {
		t.Errorf("asked %q for the partial instance", got)
	}
	h.wait(tickEvery)
	h.hear(lamp...)
	h.expect(Event{Change: Found, Instance: thing("lamp", "lamp.local.", "10.0.0.7", lampTXT)})
}

func TestPackQueriesKeepsEachUnderTheLimit(t *testing.T) {
	var questions []dns.Question
	for i := range 100 {
		questions = append(questions, dns.Question{Name: fmt.Sprintf("thing-%03d-%s.%s", i, strings.Repeat("x", 40), service), Qtype: dns.TypeSRV, Qclass: dns.ClassINET})
	}
	queries := packQueries(questions)
	var got []dns.Question
	for _, q := range queries {
		if len(q) > maxQuery {
			t.Errorf("a query of %d bytes", len(q))
		}
		var m dns.Msg
		if err := m.Unpack(q); err != nil {
			t.Fatal(err)
		}
		if m.Response || m.Id != 0 || len(m.Answer) > 0 {
			t.Errorf("query %+v", m.MsgHdr)
		}
		got = append(got, m.Question...)
	}
	if len(queries) < 2 || !reflect.DeepEqual(got, questions) {
		t.Errorf("%d queries with %d questions, want all %d questions in more than one", len(queries), len(got), len(questions))
	}
}

func TestWatchFailsWhenItCannotListen(t *testing.T) {
	nowhere := net.Interface{Index: 1 << 30, Name: "nowhere", Flags: net.FlagUp | net.FlagMulticast}
	err := Watch(context.Background(), WatchOptions{Interfaces: []net.Interface{nowhere}}, func(Event) {})
	if err == nil {
		t.Fatal("Watch on an interface that does not exist returned nil")
	}
}

// The LAN tests of Watch run the roles "thing" and "watch" on the hosts of a lab.

// The TXT a thing role announces, and the one it announces after SIGUSR1.
var (
	thingTXT   = []string{"td=/td", "type=Thing"}
	changedTXT = []string{"td=/td", "type=Thing", "version=2"}
)

// thingEnv is the environment of a thing role.
func thingEnv(instance, host, ip, iface string, port int) []string {
	return []string{
		"LMOSDIR_DISCOVERY_INSTANCE=" + instance, "LMOSDIR_DISCOVERY_HOST=" + host, "LMOSDIR_DISCOVERY_IP=" + ip,
		"LMOSDIR_DISCOVERY_INTERFACE=" + iface, fmt.Sprintf("LMOSDIR_DISCOVERY_PORT=%d", port),
		// zeroconf's SetText writes the TXT that its own goroutines read, without a lock
		// (github.com/grandcat/zeroconf/issues/33): under -race, the thing role, which runs
		// nothing of ours but Watch's peer, would fail for it.
		"GORACE=report_bugs=0",
	}
}

// runThing announces a Thing that serves nothing, on one interface, until SIGTERM, when it
// says goodbye. SIGUSR1 changes its TXT.
func runThing() int {
	port, _ := strconv.Atoi(os.Getenv("LMOSDIR_DISCOVERY_PORT"))
	iface, err := net.InterfaceByName(os.Getenv("LMOSDIR_DISCOVERY_INTERFACE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// RegisterProxy, not Register: it announces the address it is given, loopback
	// included, which Register would leave out.
	server, err := zeroconf.RegisterProxy(os.Getenv("LMOSDIR_DISCOVERY_INSTANCE"), ServiceType, Domain, port,
		os.Getenv("LMOSDIR_DISCOVERY_HOST"), []string{os.Getenv("LMOSDIR_DISCOVERY_IP")}, thingTXT, []net.Interface{*iface})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	netlab.AwaitStop(func() { server.SetText(changedTXT) })
	server.Shutdown()
	return 0
}

// eventLine is an event as the watch role prints it.
type eventLine struct {
	Watcher   string            `json:"watcher"` // the interface of the Watch that reported it
	Change    string            `json:"change"`
	Reason    string            `json:"reason,omitempty"`
	Instance  string            `json:"instance"`
	Host      string            `json:"host"`
	Port      int               `json:"port"`
	TXT       map[string]string `json:"txt"`
	IPv4      []string          `json:"ipv4,omitempty"`
	IPv6      []string          `json:"ipv6,omitempty"`
	TTL       int               `json:"ttl"` // seconds
	Interface string            `json:"interface"`
}

func lineOf(watcher string, e Event) eventLine {
	l := eventLine{
		Watcher: watcher, Change: e.Change.String(), Reason: e.Reason, Instance: e.Instance.Name, Host: e.Instance.Host,
		Port: e.Instance.Port, TXT: e.Instance.TXT, TTL: int(e.Instance.TTL / time.Second), Interface: e.Instance.Interface,
	}
	for _, ip := range e.Instance.IPv4 {
		l.IPv4 = append(l.IPv4, ip.String())
	}
	for _, ip := range e.Instance.IPv6 {
		l.IPv6 = append(l.IPv6, ip.String())
	}
	return l
}

// runWatcher runs a Watch on each interface that LMOSDIR_DISCOVERY_WATCH names (separated
// by spaces), all in this one process, rechecking every second, and prints their events as
// JSON lines until SIGTERM. It fails when a Watch fails or leaves goroutines behind.
func runWatcher() int {
	var ifaces []net.Interface
	for _, name := range strings.Fields(os.Getenv("LMOSDIR_DISCOVERY_WATCH")) {
		iface, err := net.InterfaceByName(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		ifaces = append(ifaces, *iface)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	before := runtime.NumGoroutine()
	fmt.Println("ready")

	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu      sync.Mutex
		out     = json.NewEncoder(os.Stdout)
		watches sync.WaitGroup
		errs    = make(chan error, len(ifaces))
	)
	for _, iface := range ifaces {
		watches.Go(func() {
			errs <- Watch(ctx, WatchOptions{Interfaces: []net.Interface{iface}, Recheck: time.Second}, func(e Event) {
				mu.Lock()
				defer mu.Unlock()
				_ = out.Encode(lineOf(iface.Name, e))
			})
		})
	}
	<-stop
	cancel()
	watches.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	// A goroutine that has signaled its end may take a moment to be gone.
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			stacks := make([]byte, 1<<20)
			fmt.Fprintf(os.Stderr, "goroutines left after Watch returned:\n%s\n", stacks[:runtime.Stack(stacks, true)])
			return 1
		}
	}
	return 0
}

// awaitEvent returns the next event the watch role prints about instance from the Watch
// on the interface watched.
func awaitEvent(t *testing.T, watcher *role, watched, instance string) eventLine {
	t.Helper()
	var e eventLine
	watcher.await(func(line string) bool {
		e = eventLine{}
		return json.Unmarshal([]byte(line), &e) == nil && e.Watcher == watched && e.Instance == instance
	})
	return e
}

// changes are the changes the watch role printed so far about instance from the Watch on
// the interface watched.
func changes(watcher *role, watched, instance string) []string {
	var changes []string
	for _, line := range watcher.seen {
		var e eventLine
		if json.Unmarshal([]byte(line), &e) == nil && e.Watcher == watched && e.Instance == instance {
			changes = append(changes, e.Change+" "+e.Reason)
		}
	}
	return changes
}

func TestWatchFollowsThingsOnTheLAN(t *testing.T) {
	lab := netlab.New(t, 3)
	watcherHost, lampHost, sensorHost := lab.Hosts[0], lab.Hosts[1], lab.Hosts[2]
	watcher := startRole(t, watcherHost, "watch", "LMOSDIR_DISCOVERY_WATCH=eth0")
	lamp := startRole(t, lampHost, "thing", thingEnv("lamp", "lamp", lampHost.IP.String(), "eth0", 8081)...)

	want := eventLine{
		Watcher: "eth0", Change: "found", Instance: "lamp", Host: "lamp.local.", Port: 8081,
		TXT: map[string]string{"td": "/td", "type": "Thing"}, IPv4: []string{lampHost.IP.String()},
		TTL:       3200, // zeroconf's TTL for all records but addresses
		Interface: "eth0",
	}
	if found := awaitEvent(t, watcher, "eth0", "lamp"); !reflect.DeepEqual(found, want) {
		t.Fatalf("first event %+v, want %+v", found, want)
	}

	if err := lamp.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	want.Change, want.TXT = "updated", map[string]string{"td": "/td", "type": "Thing", "version": "2"}
	if updated := awaitEvent(t, watcher, "eth0", "lamp"); !reflect.DeepEqual(updated, want) {
		t.Fatalf("after the TXT changed: %+v, want %+v", updated, want)
	}

	if err := lamp.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("the lamp's announcer: %v", err)
	}
	want.Change, want.Reason = "gone", "goodbye"
	if gone := awaitEvent(t, watcher, "eth0", "lamp"); !reflect.DeepEqual(gone, want) {
		t.Fatalf("after the lamp said goodbye: %+v, want %+v", gone, want)
	}

	sensor := startRole(t, sensorHost, "thing", thingEnv("sensor", "sensor", sensorHost.IP.String(), "eth0", 8082)...)
	if found := awaitEvent(t, watcher, "eth0", "sensor"); found.Change != "found" || found.Port != 8082 {
		t.Fatalf("first event of the sensor %+v", found)
	}
	_ = sensor.stop(syscall.SIGKILL)
	if gone := awaitEvent(t, watcher, "eth0", "sensor"); gone.Change != "gone" || gone.Reason != "silent" {
		t.Fatalf("after the sensor was killed: %+v", gone)
	}

	if err := watcher.stop(syscall.SIGTERM); err != nil {
		t.Errorf("the watcher: %v", err)
	}
	// Nothing else was reported: not the re-announcements nor the answers to rechecks.
	if got, want := changes(watcher, "eth0", "lamp"), []string{"found ", "updated ", "gone goodbye"}; !slices.Equal(got, want) {
		t.Errorf("lamp: %q, want %q", got, want)
	}
	if got, want := changes(watcher, "eth0", "sensor"), []string{"found ", "gone silent"}; !slices.Equal(got, want) {
		t.Errorf("sensor: %q, want %q", got, want)
	}
}

func TestWatchOnLoopbackIgnoresTheLAN(t *testing.T) {
	lab := netlab.New(t, 2)
	here, there := lab.Hosts[0], lab.Hosts[1]
	// One process watches lo and eth0 with a Watch each: the eth0 one joins the mDNS group on
	// eth0, so the LAN's packets reach the lo one's socket too, which must drop them.
	watcher := startRole(t, here, "watch", "LMOSDIR_DISCOVERY_WATCH=lo eth0")
	local := startRole(t, here, "thing", thingEnv("local", "local", "127.0.0.1", "lo", 8083)...)
	if found := awaitEvent(t, watcher, "lo", "local"); found.Change != "found" || found.Interface != "lo" || !slices.Equal(found.IPv4, []string{"127.0.0.1"}) {
		t.Fatalf("first event of the thing on lo %+v", found)
	}

	startRole(t, there, "thing", thingEnv("remote", "remote", there.IP.String(), "eth0", 8084)...)
	if found := awaitEvent(t, watcher, "eth0", "remote"); found.Change != "found" || found.Interface != "eth0" {
		t.Fatalf("first event of the thing on the LAN %+v", found)
	}
	// The lo Watch reads its packets in order: once it reports a change the local thing
	// makes now, it has read the remote thing's announcements and answers, which came before.
	if err := local.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	if updated := awaitEvent(t, watcher, "lo", "local"); updated.Change != "updated" {
		t.Fatalf("after the local thing changed its TXT: %+v", updated)
	}

	if err := watcher.stop(syscall.SIGTERM); err != nil {
		t.Errorf("the watcher: %v", err)
	}
	if got := changes(watcher, "lo", "remote"); len(got) > 0 {
		t.Errorf("the Watch on lo reported the thing on the LAN: %q", got)
	}
	if got := changes(watcher, "eth0", "local"); len(got) > 0 {
		t.Errorf("the Watch on eth0 reported the thing on lo: %q", got)
	}
}

func TestRecordSetsStayBounded(t *testing.T) {
	var s rrset
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 3 * maxRecords {
		s = s.put(aRR("lamp.local.", fmt.Sprintf("10.0.%d.%d", i/256, i%256)), at.Add(time.Duration(i)*time.Second))
	}
	if len(s) != maxRecords {
		t.Fatalf("%d records kept, want %d", len(s), maxRecords)
	}
	if newest, _ := s.latest(); !newest.rr.(*dns.A).A.Equal(net.ParseIP(fmt.Sprintf("10.0.0.%d", 3*maxRecords-1))) {
		t.Errorf("newest %v", newest.rr)
	}
}
