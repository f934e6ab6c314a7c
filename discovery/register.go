package discovery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lmosdir/lmosdir/directory"
)

// Registry is what the registrar needs of the directory.
type Registry interface {
	PutRetrieved(ctx context.Context, raw []byte, r directory.Retrieval) (string, directory.RetrievedOutcome, error)
	// Renew keeps the registration id alive for its ttl.
	Renew(ctx context.Context, id string) error
	Delete(ctx context.Context, id string) error
}

// RegistrarOptions tune a Registrar.
type RegistrarOptions struct {
	// Refresh is how often a registered Thing's TD is fetched again, which also renews its
	// registration; 0: 60 s. Use the watcher's Recheck.
	Refresh time.Duration
	// FetchTimeout bounds one TD fetch, connection included; 0: 5 s.
	FetchTimeout time.Duration
	// MaxTDBytes is the largest TD fetched; 0: 1 MiB.
	MaxTDBytes int64
	// FetchInterval is the least time between two fetches from one address, so that an
	// announcer cannot make the directory fetch in a loop; 0: 10 s.
	FetchInterval time.Duration
	// MaxFetches is how many TDs are fetched at once, over all addresses; 0: 8. With
	// MaxTDBytes it bounds the memory that fetching takes, however many Things announce.
	MaxFetches int
	// FetchPublic allows fetching TDs from public addresses; by default only loopback,
	// private (RFC 1918, RFC 4193) and link-local addresses are used.
	FetchPublic bool
	// Self is the directory's own instance name, which is not a peer.
	Self string
	// Log receives what the registrar did and what it refused; nil: discarded.
	Log *slog.Logger
}

func (o RegistrarOptions) withDefaults() RegistrarOptions {
	if o.Refresh <= 0 {
		o.Refresh = 60 * time.Second
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = 5 * time.Second
	}
	if o.MaxTDBytes <= 0 {
		o.MaxTDBytes = 1 << 20
	}
	if o.FetchInterval <= 0 {
		o.FetchInterval = 10 * time.Second
	}
	if o.MaxFetches <= 0 {
		o.MaxFetches = 8
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// Peer is another directory announced on the LAN.
type Peer struct {
	Instance string
	// TD is the URL of the peer's TD.
	TD string
}

// Registrar registers the Things announced on the LAN in the directory and keeps the list
// of peer directories. Feed it a Watch's events with Handle while Run runs.
type Registrar struct {
	registry Registry
	opts     RegistrarOptions
	client   *http.Client
	events   chan Event
	results  chan fetched
	done     chan struct{}

	// Owned by Run.
	things    map[string]*tracked
	lastFetch map[netip.Addr]time.Time

	peers peerList
}

// tracked is a Thing instance the registrar follows.
type tracked struct {
	instance Instance
	href     string
	addr     netip.Addr
	id       string // the registration, "" until one was made
	due      time.Time
	fetching bool
	gone     bool   // left while its TD was being fetched
	problem  string // the last problem logged, so that a lasting one is logged once
}

// fetched is the outcome of fetching one instance's TD.
type fetched struct {
	name string
	href string
	at   time.Time
	td   []byte
	err  error
}

// NewRegistrar returns a Registrar writing to registry.
func NewRegistrar(registry Registry, opts RegistrarOptions) *Registrar {
	opts = opts.withDefaults()
	r := &Registrar{
		registry: registry, opts: opts,
		events: make(chan Event, 64), results: make(chan fetched), done: make(chan struct{}),
		things: map[string]*tracked{}, lastFetch: map[netip.Addr]time.Time{},
	}
	dialer := &net.Dialer{Timeout: opts.FetchTimeout, Control: r.checkDial}
	r.client = &http.Client{
		Timeout:   opts.FetchTimeout,
		Transport: &http.Transport{DialContext: dialer.DialContext, Proxy: nil, MaxIdleConnsPerHost: 1, IdleConnTimeout: opts.Refresh},
		// A redirect could lead anywhere; a Thing serves its TD where it said it does.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return r
}

// Handle passes a Watch event to Run. It waits while Run is busy, and returns at once
// after Run has ended.
func (r *Registrar) Handle(e Event) {
	select {
	case r.events <- e:
	case <-r.done:
	}
}

// Peers returns the peer directories seen on the LAN, by instance name.
func (r *Registrar) Peers() []Peer { return r.peers.list() }

// Run registers and removes Things as events arrive and keeps their registrations fresh,
// until ctx ends.
func (r *Registrar) Run(ctx context.Context) {
	defer close(r.done)
	// Due fetches start on the next tick: often enough that neither Refresh nor
	// FetchInterval is stretched by much.
	tick := time.NewTicker(min(max(min(r.opts.Refresh, r.opts.FetchInterval)/4, 10*time.Millisecond), time.Second))
	defer tick.Stop()
	inFlight := 0
	for {
		select {
		case <-ctx.Done():
			for ; inFlight > 0; inFlight-- {
				<-r.results
			}
			return
		case e := <-r.events:
			r.handle(ctx, e)
		case res := <-r.results:
			inFlight--
			r.settle(ctx, res)
		case <-tick.C:
		}
		inFlight += r.fetchDue(ctx, r.opts.MaxFetches-inFlight)
	}
}

func (r *Registrar) handle(ctx context.Context, e Event) {
	name := e.Instance.Name
	if e.Instance.IsDirectory() {
		// An instance that now says it is a directory is no longer a Thing of ours.
		if t, ok := r.things[name]; ok {
			r.forget(ctx, t)
		}
		r.handlePeer(e)
		return
	}
	if e.Change == Gone {
		if t, ok := r.things[name]; ok {
			r.opts.Log.Info("mDNS: thing left", "instance", name, "reason", e.Reason, "id", t.id)
			r.forget(ctx, t)
		}
		return
	}
	href, addr, err := r.tdURL(e.Instance)
	if err != nil {
		if t, ok := r.things[name]; ok {
			r.forget(ctx, t)
		}
		r.opts.Log.Warn("mDNS: thing not registered", "instance", name, "error", err)
		return
	}
	t, ok := r.things[name]
	if !ok {
		t = &tracked{}
		r.things[name] = t
	}
	t.instance, t.href, t.addr, t.due, t.gone = e.Instance, href, addr, time.Time{}, false
}

func (r *Registrar) handlePeer(e Event) {
	if e.Instance.Name == r.opts.Self {
		return
	}
	if e.Change == Gone {
		r.peers.remove(e.Instance.Name)
		return
	}
	href, _, err := r.tdURL(e.Instance)
	if err != nil {
		r.peers.remove(e.Instance.Name)
		r.opts.Log.Warn("mDNS: peer directory not recorded", "instance", e.Instance.Name, "error", err)
		return
	}
	r.peers.put(Peer{Instance: e.Instance.Name, TD: href})
}

// forget stops following t and removes its registration; a fetch in progress is settled
// when it ends.
func (r *Registrar) forget(ctx context.Context, t *tracked) {
	if t.fetching {
		t.gone = true
		return
	}
	delete(r.things, t.instance.Name)
	if t.id == "" {
		return
	}
	if err := r.registry.Delete(ctx, t.id); err != nil && !errors.Is(err, directory.ErrNotFound) {
		r.opts.Log.Error("mDNS: removing a thing that left", "id", t.id, "error", err)
	}
}

// tdURL is where to fetch the instance's TD from: its first address that may be used.
func (r *Registrar) tdURL(i Instance) (string, netip.Addr, error) {
	var refused []string
	for _, addr := range i.addrs() {
		if !r.allowed(addr) {
			refused = append(refused, addr.String())
			continue
		}
		href, err := i.tdURLAt(addr)
		return href, addr, err
	}
	if len(refused) > 0 {
		return "", netip.Addr{}, fmt.Errorf("it announces only public addresses (%s), and fetching from them is off", strings.Join(refused, ", "))
	}
	return "", netip.Addr{}, fmt.Errorf("instance %q has no address", i.Name)
}

// allowed reports whether TDs may be fetched from addr.
func (r *Registrar) allowed(addr netip.Addr) bool {
	if r.opts.FetchPublic {
		return !addr.IsUnspecified() && !addr.IsMulticast()
	}
	return addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast()
}

// checkDial refuses connections to addresses that may not be used, whatever led there.
func (r *Registrar) checkDial(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	if !r.allowed(ap.Addr().Unmap()) {
		return fmt.Errorf("fetching from the public address %s is off", ap.Addr())
	}
	return nil
}

// fetchDue starts fetching up to room TDs that are due, at most one at a time per address
// and no more often than FetchInterval from one address, and returns how many it started.
func (r *Registrar) fetchDue(ctx context.Context, room int) int {
	now := time.Now()
	for addr, at := range r.lastFetch {
		if now.Sub(at) >= r.opts.FetchInterval {
			delete(r.lastFetch, addr)
		}
	}
	started := 0
	for name, t := range r.things {
		if started == room {
			break
		}
		if t.fetching || now.Before(t.due) {
			continue
		}
		if _, recent := r.lastFetch[t.addr]; recent {
			continue
		}
		r.lastFetch[t.addr] = now
		t.fetching = true
		started++
		go r.fetch(ctx, name, t.href)
	}
	return started
}

func (r *Registrar) fetch(ctx context.Context, name, href string) {
	res := fetched{name: name, href: href, at: time.Now()}
	res.td, res.err = r.get(ctx, href)
	r.results <- res
}

func (r *Registrar) get(ctx context.Context, href string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, href, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/td+json, application/json;q=0.9")
	res, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", href, res.Status)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, r.opts.MaxTDBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", href, err)
	}
	if int64(len(body)) > r.opts.MaxTDBytes {
		return nil, fmt.Errorf("GET %s: the TD is larger than %d bytes", href, r.opts.MaxTDBytes)
	}
	return body, nil
}

// settle registers what a fetch brought, or says why not.
func (r *Registrar) settle(ctx context.Context, res fetched) {
	t, ok := r.things[res.name]
	if !ok {
		return
	}
	t.fetching = false
	t.due = time.Now().Add(r.opts.Refresh)
	if t.gone {
		r.forget(ctx, t)
		return
	}
	if res.href != t.href {
		// The instance moved while its old TD was being fetched: fetch from the new place.
		t.due = time.Time{}
		return
	}
	if res.err != nil {
		r.report(t, "mDNS: the TD of a thing could not be fetched", res.err)
		r.renew(ctx, t)
		return
	}
	id, outcome, err := r.registry.PutRetrieved(ctx, res.td, directory.Retrieval{
		TTL: r.ttl(t.instance), At: res.at,
		Origin: directory.RetrievalOrigin{Via: "mdns", Instance: t.instance.Name, Href: t.href},
	})
	if err != nil {
		r.report(t, "mDNS: thing not registered", err)
		r.renew(ctx, t)
		return
	}
	if t.id != "" && t.id != id {
		// The TD now has another id: the old registration is stale.
		if err := r.registry.Delete(ctx, t.id); err != nil && !errors.Is(err, directory.ErrNotFound) {
			r.opts.Log.Error("mDNS: removing a thing's old registration", "id", t.id, "error", err)
		}
	}
	t.id, t.problem = id, ""
	switch outcome {
	case directory.RetrievedCreated:
		r.opts.Log.Info("mDNS: thing registered", "instance", t.instance.Name, "id", id, "td", t.href)
	case directory.RetrievedReplaced:
		r.opts.Log.Info("mDNS: thing updated", "instance", t.instance.Name, "id", id, "td", t.href)
	}
}

// renew keeps t's registration, if any, alive while the Thing announces itself, even when
// its TD cannot be fetched or is not valid at the moment.
func (r *Registrar) renew(ctx context.Context, t *tracked) {
	if t.id == "" {
		return
	}
	if err := r.registry.Renew(ctx, t.id); err != nil && !errors.Is(err, directory.ErrNotFound) {
		r.opts.Log.Error("mDNS: renewing a thing's registration", "id", t.id, "error", err)
	}
}

// report logs a problem with t, once for as long as it lasts.
func (r *Registrar) report(t *tracked, msg string, err error) {
	if problem := err.Error(); problem != t.problem {
		t.problem = problem
		r.opts.Log.Warn(msg, "instance", t.instance.Name, "td", t.href, "error", err)
	}
}

// ttl is the registration's ttl: the SRV record's, and long enough to last from one
// refresh to the next.
func (r *Registrar) ttl(i Instance) time.Duration {
	return max(i.TTL, 2*r.opts.Refresh+r.opts.FetchTimeout)
}

// peerList is the peer directories, safe for concurrent use.
type peerList struct {
	mu     sync.Mutex
	byName map[string]Peer
}

func (l *peerList) put(p Peer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byName == nil {
		l.byName = map[string]Peer{}
	}
	l.byName[p.Instance] = p
}

func (l *peerList) remove(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.byName, name)
}

func (l *peerList) list() []Peer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.SortedFunc(maps.Values(l.byName), func(a, b Peer) int { return strings.Compare(a.Instance, b.Instance) })
}
