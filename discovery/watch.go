package discovery

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
	"golang.org/x/sys/unix"
)

// Change is what happened to an instance.
type Change int

// The changes Watch reports.
const (
	Found   Change = iota + 1 // first complete sighting: PTR, SRV, TXT and at least one address
	Updated                   // SRV target/port, TXT or addresses changed
	Gone                      // left: see Event.Reason
)

// String is the change in lower case, as "found".
func (c Change) String() string {
	switch c {
	case Found:
		return "found"
	case Updated:
		return "updated"
	case Gone:
		return "gone"
	}
	return fmt.Sprintf("Change(%d)", int(c))
}

// Event is a change of one _wot._tcp instance.
type Event struct {
	Change   Change
	Instance Instance // for Gone: the last state seen
	// Reason says why an instance is Gone: "goodbye" (it sent records with TTL 0),
	// "silent" (it did not answer two rechecks in a row) or "expired" (its records' TTL ran out).
	Reason string
}

// The reasons of Gone.
const (
	reasonGoodbye = "goodbye"
	reasonSilent  = "silent"
	reasonExpired = "expired"
)

// WatchOptions tune Watch.
type WatchOptions struct {
	Interfaces []net.Interface // listen and query on these only; none: every up interface that can multicast
	Recheck    time.Duration   // how often instances are asked for again; 0: 60 s
	// MaxInstances is the number of instances kept at once; 0: 1024. Sightings of new
	// instances beyond it are dropped, so a flood of announcements cannot grow memory
	// without bound.
	MaxInstances int
}

func (o WatchOptions) withDefaults() WatchOptions {
	if o.Recheck <= 0 {
		o.Recheck = 60 * time.Second
	}
	if o.MaxInstances <= 0 {
		o.MaxInstances = 1024
	}
	return o
}

const (
	mdnsPort = 5353
	// maxPacket is the largest multicast DNS packet (RFC 6762, 17); the rest of a larger one
	// is not read, so it does not parse.
	maxPacket = 9000
	// maxQuery keeps the queries Watch sends within an Ethernet frame.
	maxQuery = 1400
	// cacheFlush is the top bit of a record's class in a response (RFC 6762, 10.2).
	cacheFlush = 1 << 15
	// flushWindow: a cache flush spares the records that arrived within the last second,
	// which may be parts of the same announcement spread over several packets (RFC 6762, 10.2).
	flushWindow = time.Second
	// maxRecords bounds a set of records of one name and type, which records without the
	// cache-flush bit could otherwise grow for as long as their TTL.
	maxRecords = 32
	// partialGrace is how long an instance may lack records before it is dropped unreported.
	partialGrace = 10 * time.Second
	// tickEvery is the resolution of expiry and of the query schedule.
	tickEvery = 250 * time.Millisecond
	// startGap separates the first two queries (RFC 6762, 5.2), and any two questions
	// about one instance's records.
	startGap = time.Second
	// silentAfter is the number of rechecks in a row an instance may leave unanswered.
	silentAfter = 2
)

var (
	service = ServiceType + "." + Domain
	group4  = net.IPv4(224, 0, 0, 251)
	group6  = net.ParseIP("ff02::fb")
)

// Watch follows the _wot._tcp instances on the LAN until ctx ends, calling fn from one
// goroutine, in order, for each change. It returns an error only when it cannot listen at all.
//
// Unlike Browse, it keeps the records it hears with their TTLs: it reports an instance
// once its PTR, SRV, TXT and an address are known, reports changes of them, and reports
// instances that say goodbye, that stop answering, or whose records run out.
func Watch(ctx context.Context, opts WatchOptions, fn func(Event)) error {
	ifaces := opts.Interfaces
	if len(ifaces) == 0 {
		ifaces = multicastInterfaces()
	}
	selected := make(map[int]string, len(ifaces))
	names := make([]string, 0, len(ifaces))
	for _, ifi := range ifaces {
		selected[ifi.Index] = ifi.Name
		names = append(names, ifi.Name)
	}
	sockets, err := listen(ctx, ifaces)
	if err != nil {
		return fmt.Errorf("mDNS watching: %w", err)
	}

	ctx, cancel := context.WithCancel(ctx)
	packets := make(chan packet, 16)
	stopped := make(chan error, len(sockets))
	var readers sync.WaitGroup
	defer func() {
		cancel()
		for _, s := range sockets {
			s.conn.Close()
		}
		readers.Wait()
	}()
	for _, s := range sockets {
		readers.Go(func() { stopped <- s.read(ctx, selected, packets) })
	}

	ask := func(iface string, questions []dns.Question) {
		for _, query := range packQueries(questions) {
			for _, s := range sockets {
				s.send(query, iface)
			}
		}
	}
	w := newWatcher(opts, names, time.Now, fn, ask)
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	w.tick()
	listening := len(sockets)
	for {
		select {
		case <-ctx.Done():
			return nil
		case p := <-packets:
			w.receive(p.msg, p.iface, p.at)
		case <-tick.C:
			// Packets that waited while fn ran came before this tick: take them in first, so
			// that the records they refresh do not expire meanwhile.
			for len(packets) > 0 {
				p := <-packets
				w.receive(p.msg, p.iface, p.at)
			}
			w.tick()
		case err := <-stopped:
			if listening--; listening == 0 && ctx.Err() == nil {
				return fmt.Errorf("mDNS watching: %w", err)
			}
		}
	}
}

// multicastInterfaces are the interfaces that are up and can multicast.
func multicastInterfaces() []net.Interface {
	all, err := net.Interfaces()
	if err != nil {
		return nil
	}
	return slices.DeleteFunc(all, func(ifi net.Interface) bool {
		return ifi.Flags&net.FlagUp == 0 || ifi.Flags&net.FlagMulticast == 0
	})
}

// packet is a response as read.
type packet struct {
	msg   *dns.Msg
	iface string
	at    time.Time
}

// packetConn is a multicast DNS socket of one IP version.
type packetConn interface {
	join(ifi *net.Interface) error
	// read returns the index of the interface the packet arrived on, or 0.
	read(b []byte) (n, ifIndex int, src net.Addr, err error)
	write(b []byte, ifIndex int) error
	Close() error
}

// socket is a packetConn and the interfaces it joined the mDNS group on, by name.
type socket struct {
	conn   packetConn
	joined map[string]int
}

// listen opens an IPv4 socket and, where the interfaces have IPv6, an IPv6 one; one of
// them is enough.
func listen(ctx context.Context, ifaces []net.Interface) ([]*socket, error) {
	if len(ifaces) == 0 {
		return nil, errors.New("no interface to listen on")
	}
	var sockets []*socket
	s4, err4 := open(ctx, "udp4", newConn4, ifaces)
	if err4 == nil {
		sockets = append(sockets, s4)
	}
	s6, err6 := open(ctx, "udp6", newConn6, slices.DeleteFunc(slices.Clone(ifaces), func(ifi net.Interface) bool { return !hasIPv6(ifi) }))
	if err6 == nil {
		sockets = append(sockets, s6)
	}
	if len(sockets) == 0 {
		return nil, errors.Join(err4, err6)
	}
	return sockets, nil
}

func open(ctx context.Context, network string, wrap func(net.PacketConn) (packetConn, error), ifaces []net.Interface) (*socket, error) {
	if len(ifaces) == 0 {
		return nil, fmt.Errorf("%s: no interface", network)
	}
	lc := net.ListenConfig{Control: sharePort}
	c, err := lc.ListenPacket(ctx, network, fmt.Sprintf(":%d", mdnsPort))
	if err != nil {
		return nil, err
	}
	conn, err := wrap(c)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: %w", network, err)
	}
	s := &socket{conn: conn, joined: map[string]int{}}
	var errs []error
	for _, ifi := range ifaces {
		if err := conn.join(&ifi); err != nil {
			errs = append(errs, fmt.Errorf("%s: joining the mDNS group on %s: %w", network, ifi.Name, err))
			continue
		}
		s.joined[ifi.Name] = ifi.Index
	}
	if len(s.joined) == 0 {
		conn.Close()
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// sharePort lets other mDNS sockets on the host, such as the announcer's, bind port 5353 too.
func sharePort(_, _ string, c syscall.RawConn) error {
	var err error
	if cerr := c.Control(func(fd uintptr) {
		err = errors.Join(
			unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1),
			unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1))
	}); cerr != nil {
		return cerr
	}
	return err
}

func hasIPv6(ifi net.Interface) bool {
	addrs, err := ifi.Addrs()
	if err != nil {
		return false
	}
	return slices.ContainsFunc(addrs, func(a net.Addr) bool {
		ip, ok := a.(*net.IPNet)
		return ok && ip.IP.To4() == nil
	})
}

// read passes the responses that arrive on selected interfaces to out until the socket
// closes, and returns why it stopped.
func (s *socket) read(ctx context.Context, selected map[int]string, out chan<- packet) error {
	buf := make([]byte, maxPacket)
	for {
		n, index, src, err := s.conn.read(buf)
		if err != nil {
			return err
		}
		iface, ok := selected[index]
		// Responses come from port 5353; others are not multicast DNS (RFC 6762, 11).
		if udp, isUDP := src.(*net.UDPAddr); !ok || !isUDP || udp.Port != mdnsPort {
			continue
		}
		m := new(dns.Msg)
		if m.Unpack(buf[:n]) != nil || !m.Response || m.Opcode != dns.OpcodeQuery || m.Rcode != dns.RcodeSuccess {
			continue
		}
		select {
		case out <- packet{msg: m, iface: iface, at: time.Now()}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// send multicasts a query on iface, if the socket joined the group there. A query that
// cannot be sent is asked again later, so the error is not kept.
func (s *socket) send(query []byte, iface string) {
	if index, ok := s.joined[iface]; ok {
		_ = s.conn.write(query, index)
	}
}

type conn4 struct{ *ipv4.PacketConn }

func newConn4(c net.PacketConn) (packetConn, error) {
	p := ipv4.NewPacketConn(c)
	// TTL 255 marks a packet that stayed on the link (RFC 6762, 11).
	return conn4{p}, errors.Join(p.SetControlMessage(ipv4.FlagInterface, true), p.SetMulticastTTL(255))
}

func (c conn4) join(ifi *net.Interface) error {
	return c.JoinGroup(ifi, &net.UDPAddr{IP: group4})
}

func (c conn4) read(b []byte) (n, ifIndex int, src net.Addr, err error) {
	n, cm, src, err := c.ReadFrom(b)
	if cm != nil {
		ifIndex = cm.IfIndex
	}
	return n, ifIndex, src, err
}

func (c conn4) write(b []byte, ifIndex int) error {
	_, err := c.WriteTo(b, &ipv4.ControlMessage{IfIndex: ifIndex}, &net.UDPAddr{IP: group4, Port: mdnsPort})
	return err
}

type conn6 struct{ *ipv6.PacketConn }

func newConn6(c net.PacketConn) (packetConn, error) {
	p := ipv6.NewPacketConn(c)
	return conn6{p}, errors.Join(p.SetControlMessage(ipv6.FlagInterface, true), p.SetMulticastHopLimit(255))
}

func (c conn6) join(ifi *net.Interface) error {
	return c.JoinGroup(ifi, &net.UDPAddr{IP: group6})
}

func (c conn6) read(b []byte) (n, ifIndex int, src net.Addr, err error) {
	n, cm, src, err := c.ReadFrom(b)
	if cm != nil {
		ifIndex = cm.IfIndex
	}
	return n, ifIndex, src, err
}

func (c conn6) write(b []byte, ifIndex int) error {
	_, err := c.WriteTo(b, &ipv6.ControlMessage{IfIndex: ifIndex}, &net.UDPAddr{IP: group6, Port: mdnsPort})
	return err
}

// packQueries packs the questions into as few queries as fit maxQuery each. The queries
// carry no known answers, so that every responder answers (RFC 6762, 7.1).
func packQueries(questions []dns.Question) [][]byte {
	var queries [][]byte
	m := &dns.Msg{Compress: true}
	flush := func() {
		if b, err := m.Pack(); err == nil {
			queries = append(queries, b)
		}
	}
	for _, q := range questions {
		m.Question = append(m.Question, q)
		if len(m.Question) > 1 && m.Len() > maxQuery {
			m.Question = m.Question[:len(m.Question)-1]
			flush()
			m.Question = []dns.Question{q}
		}
	}
	if len(m.Question) > 0 {
		flush()
	}
	return queries
}

// watcher is what Watch knows: the instances heard of and the records they are made of.
// It reads no clock but now and opens no socket, so that tests can drive it.
type watcher struct {
	now     func() time.Time
	emit    func(Event)
	ask     func(iface string, questions []dns.Question)
	ifaces  []string
	recheck time.Duration
	max     int

	instances map[string]*watched // by instance domain name in lower case
	addrs     map[addrKey]rrset
	queries   int // PTR queries sent on schedule
	nextQuery time.Time
}

// watched is one instance: its records and what was last reported of it.
type watched struct {
	key   string // the instance's domain name in lower case
	fqdn  string // the instance's domain name as heard
	name  string // the instance name, unescaped
	iface string // where it was first heard; records heard elsewhere do not change it
	since time.Time

	ptr, srv, txt rrset
	bye           bool // a goodbye for its PTR or SRV came in the response being read

	found bool
	last  Instance // as last seen complete

	askedAt    time.Time // when the last recheck was sent; zero: none since it appeared
	answered   bool      // its PTR or SRV came after askedAt
	unanswered int       // rechecks in a row it left unanswered

	nextAsk time.Time     // when its missing or aging records may be asked for again
	askGap  time.Duration // the wait after that question
}

// hostKey names a host as heard on an interface.
type hostKey struct{ iface, host string }

// addrKey names the A or AAAA records of a host.
type addrKey struct {
	hostKey
	rrtype uint16
}

func newWatcher(opts WatchOptions, ifaces []string, now func() time.Time, emit func(Event), ask func(string, []dns.Question)) *watcher {
	opts = opts.withDefaults()
	return &watcher{
		now: now, emit: emit, ask: ask, ifaces: ifaces, recheck: opts.Recheck, max: opts.MaxInstances,
		instances: map[string]*watched{}, addrs: map[addrKey]rrset{},
	}
}

// receive takes in a response heard on iface at the time at.
func (w *watcher) receive(m *dns.Msg, iface string, at time.Time) {
	records := slices.Concat(m.Answer, m.Extra)
	touched := map[*watched]bool{}
	// PTRs first: they make the instances the other records belong to.
	for _, rr := range records {
		if ptr, ok := rr.(*dns.PTR); ok {
			if t := w.receivePTR(ptr, iface, at); t != nil {
				touched[t] = true
			}
		}
	}
	for _, rr := range records {
		switch rr := rr.(type) {
		case *dns.SRV:
			if t := w.instanceOn(iface, rr.Hdr.Name); t != nil {
				t.srv = t.srv.put(rr, at)
				t.heard(rr, at)
				touched[t] = true
			}
		case *dns.TXT:
			if t := w.instanceOn(iface, rr.Hdr.Name); t != nil {
				t.txt = t.txt.put(rr, at)
				touched[t] = true
			}
		}
	}
	// Addresses last, and only of the hosts that instances name.
	wanted := w.targets()
	changed := map[hostKey]bool{}
	for _, rr := range records {
		h := rr.Header()
		k := addrKey{hostKey{iface, strings.ToLower(h.Name)}, h.Rrtype}
		if (k.rrtype == dns.TypeA || k.rrtype == dns.TypeAAAA) && wanted[k.hostKey] {
			w.addrs[k] = w.addrs[k].put(rr, at)
			changed[k.hostKey] = true
		}
	}
	for _, t := range w.sorted() {
		if touched[t] || changed[hostKey{t.iface, t.target()}] {
			w.settle(t)
		}
	}
}

// receivePTR takes in a PTR and returns the instance it names, if it is watched.
func (w *watcher) receivePTR(ptr *dns.PTR, iface string, at time.Time) *watched {
	if !strings.EqualFold(ptr.Hdr.Name, service) {
		return nil
	}
	key := strings.ToLower(ptr.Ptr)
	t := w.instances[key]
	switch {
	case t != nil && t.iface != iface:
		return nil
	case t == nil && (ptr.Hdr.Ttl == 0 || len(w.instances) >= w.max):
		return nil
	case t == nil:
		label, ok := instanceLabel(ptr.Ptr)
		if !ok {
			return nil
		}
		t = &watched{key: key, fqdn: ptr.Ptr, name: unescapeLabel(label), iface: iface, since: at}
		w.instances[key] = t
	}
	t.ptr = t.ptr.put(ptr, at)
	t.heard(ptr, at)
	return t
}

// instanceLabel is the instance label of a name of a _wot._tcp instance.
func instanceLabel(name string) (string, bool) {
	if dns.CountLabel(name) != dns.CountLabel(service)+1 || !strings.HasSuffix(strings.ToLower(name), "."+service) {
		return "", false
	}
	return name[:len(name)-len(service)-1], true
}

// instanceOn is the instance named, if it is watched on iface.
func (w *watcher) instanceOn(iface, name string) *watched {
	if t := w.instances[strings.ToLower(name)]; t != nil && t.iface == iface {
		return t
	}
	return nil
}

// heard notes a PTR or SRV of t: a goodbye, or an answer to a recheck.
func (t *watched) heard(rr dns.RR, at time.Time) {
	if rr.Header().Ttl == 0 {
		t.bye = true
	} else if !at.Before(t.askedAt) {
		t.answered = true
	}
}

// target is the host of t's SRV in lower case, or "".
func (t *watched) target() string {
	if srv, ok := t.srv.latest(); ok {
		return strings.ToLower(srv.rr.(*dns.SRV).Target)
	}
	return ""
}

// targets are the hosts the instances' SRVs name.
func (w *watcher) targets() map[hostKey]bool {
	hosts := map[hostKey]bool{}
	for _, t := range w.instances {
		for _, c := range t.srv {
			hosts[hostKey{t.iface, strings.ToLower(c.rr.(*dns.SRV).Target)}] = true
		}
	}
	return hosts
}

// settle reports what changed of t.
func (w *watcher) settle(t *watched) {
	if t.bye && (len(t.ptr) == 0 || len(t.srv) == 0) {
		w.drop(t, reasonGoodbye)
		return
	}
	t.bye = false
	i, complete := w.view(t)
	switch {
	case !complete:
		return
	case !t.found:
		t.found = true
		w.emit(Event{Change: Found, Instance: i})
	case !sameInstance(i, t.last):
		w.emit(Event{Change: Updated, Instance: i})
	}
	t.last = i
}

// drop forgets t, and reports it Gone if it was reported.
func (w *watcher) drop(t *watched, reason string) {
	delete(w.instances, t.key)
	if t.found {
		w.emit(Event{Change: Gone, Instance: t.last, Reason: reason})
	}
}

// view is t as its newest records describe it, and whether they describe it whole.
func (w *watcher) view(t *watched) (Instance, bool) {
	srv, hasSRV := t.srv.latest()
	txt, hasTXT := t.txt.latest()
	if !hasSRV || !hasTXT {
		return Instance{}, false
	}
	s := srv.rr.(*dns.SRV)
	i := Instance{
		Name: t.name, Host: s.Target, Port: int(s.Port), TXT: txtMap(txt.rr.(*dns.TXT).Txt),
		TTL: srv.ttl(), Interface: t.iface,
	}
	v4, v6 := w.addresses(hostKey{t.iface, strings.ToLower(s.Target)})
	i.IPv4, i.IPv6 = addresses(v4), addresses(v6)
	return i, len(i.IPv4)+len(i.IPv6) > 0
}

// addresses are the A and the AAAA records of a host.
func (w *watcher) addresses(host hostKey) (v4, v6 rrset) {
	return w.addrs[addrKey{host, dns.TypeA}], w.addrs[addrKey{host, dns.TypeAAAA}]
}

// addresses are the addresses of A or AAAA records, sorted, so that sets compare in order.
func addresses(s rrset) []net.IP {
	var ips []net.IP
	for _, c := range s {
		switch rr := c.rr.(type) {
		case *dns.A:
			ips = append(ips, rr.A.To4())
		case *dns.AAAA:
			ips = append(ips, rr.AAAA)
		}
	}
	slices.SortFunc(ips, func(a, b net.IP) int { return bytes.Compare(a, b) })
	return ips
}

// sameInstance reports whether b is no change from a: the TTL is not compared.
func sameInstance(a, b Instance) bool {
	return a.Port == b.Port && strings.EqualFold(a.Host, b.Host) && maps.Equal(a.TXT, b.TXT) &&
		slices.EqualFunc(a.IPv4, b.IPv4, net.IP.Equal) && slices.EqualFunc(a.IPv6, b.IPv6, net.IP.Equal)
}

// tick expires records, drops the instances that left or never completed, sends the
// rechecks when they are due, and asks for the records instances miss.
func (w *watcher) tick() {
	now := w.now()
	expired := map[hostKey]bool{}
	for k, s := range w.addrs {
		if left := s.expire(now); len(left) < len(s) {
			w.addrs[k] = left
			expired[k.hostKey] = true
		}
	}
	recheck := !now.Before(w.nextQuery)
	asks := map[string][]dns.Question{}
	for _, t := range w.sorted() {
		n := len(t.srv) + len(t.txt)
		t.ptr, t.srv, t.txt = t.ptr.expire(now), t.srv.expire(now), t.txt.expire(now)
		switch {
		case len(t.ptr) == 0 || (t.found && len(t.srv) == 0):
			w.drop(t, reasonExpired)
			continue
		case !t.found && now.Sub(t.since) >= partialGrace:
			w.drop(t, "")
			continue
		}
		if recheck {
			if !t.askedAt.IsZero() {
				if t.answered {
					t.unanswered = 0
				} else {
					t.unanswered++
				}
			}
			if t.unanswered >= silentAfter {
				w.drop(t, reasonSilent)
				continue
			}
			t.askedAt, t.answered = now, false
		}
		if len(t.srv)+len(t.txt) < n || expired[hostKey{t.iface, t.target()}] {
			w.settle(t)
		}
		asks[t.iface] = append(asks[t.iface], w.due(t, now)...)
	}
	wanted := w.targets()
	maps.DeleteFunc(w.addrs, func(k addrKey, s rrset) bool { return !wanted[k.hostKey] || len(s) == 0 })
	if recheck {
		w.queries++
		w.nextQuery = now.Add(w.recheck)
		if w.queries == 1 {
			w.nextQuery = now.Add(startGap)
		}
		for _, iface := range w.ifaces {
			asks[iface] = append(asks[iface], dns.Question{Name: service, Qtype: dns.TypePTR, Qclass: dns.ClassINET})
		}
	}
	for _, iface := range w.ifaces {
		if qs := asks[iface]; len(qs) > 0 {
			slices.SortFunc(qs, cmpQuestion)
			w.ask(iface, slices.Compact(qs))
		}
	}
}

func cmpQuestion(a, b dns.Question) int {
	return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.Qtype, b.Qtype))
}

// due is what to ask about t now: the records it misses and those past 80% of their TTL
// (RFC 6762, 5.2), at most once a second and then less and less often while they stay
// missing.
func (w *watcher) due(t *watched, now time.Time) []dns.Question {
	var qs []dns.Question
	q := func(name string, qtype uint16) {
		qs = append(qs, dns.Question{Name: name, Qtype: qtype, Qclass: dns.ClassINET})
	}
	if ptr, _ := t.ptr.latest(); ptr.aging(now) {
		q(service, dns.TypePTR)
	}
	srv, hasSRV := t.srv.latest()
	if !hasSRV || srv.aging(now) {
		q(t.fqdn, dns.TypeSRV)
	}
	if txt, ok := t.txt.latest(); !ok || txt.aging(now) {
		q(t.fqdn, dns.TypeTXT)
	}
	if hasSRV {
		target := srv.rr.(*dns.SRV).Target
		v4, v6 := w.addresses(hostKey{t.iface, strings.ToLower(target)})
		if len(v4)+len(v6) == 0 {
			q(target, dns.TypeA)
			q(target, dns.TypeAAAA)
			// Some responders, zeroconf among them, give a host's addresses only along
			// with its services.
			q(t.fqdn, dns.TypeSRV)
		}
		if v4.aging(now) {
			q(target, dns.TypeA)
		}
		if v6.aging(now) {
			q(target, dns.TypeAAAA)
		}
	}
	if len(qs) == 0 {
		t.askGap = 0
		return nil
	}
	if now.Before(t.nextAsk) {
		return nil
	}
	t.askGap = min(max(2*t.askGap, startGap), max(w.recheck, startGap))
	t.nextAsk = now.Add(t.askGap)
	return qs
}

// sorted are the instances in the order of their names, so that the events of one
// response or tick come in an order that does not change from run to run.
func (w *watcher) sorted() []*watched {
	return slices.SortedFunc(maps.Values(w.instances), func(a, b *watched) int { return strings.Compare(a.key, b.key) })
}

// cached is a record and the time it arrived.
type cached struct {
	rr dns.RR
	at time.Time
}

func (c cached) ttl() time.Duration { return time.Duration(c.rr.Header().Ttl) * time.Second }

// aging reports whether c is past 80% of its TTL, when a querier asks for it again
// (RFC 6762, 5.2).
func (c cached) aging(now time.Time) bool {
	return c.rr != nil && !now.Before(c.at.Add(c.ttl()*4/5))
}

// rrset is the cached records of one name and type, the newest last.
type rrset []cached

// put caches rr, which arrived at the time at. A record with TTL 0 is a goodbye and
// removes its copy; the cache-flush bit removes the records that arrived more than
// flushWindow earlier (RFC 6762, 10.2).
func (s rrset) put(rr dns.RR, at time.Time) rrset {
	flush := rr.Header().Class&cacheFlush != 0
	// The copy leaves the caller's message as it was; the bit is no part of the record.
	rr = dns.Copy(rr)
	rr.Header().Class &^= cacheFlush
	s = slices.DeleteFunc(s, func(c cached) bool {
		return dns.IsDuplicate(c.rr, rr) || (flush && at.Sub(c.at) > flushWindow)
	})
	if rr.Header().Ttl == 0 {
		return s
	}
	s = append(s, cached{rr: rr, at: at})
	if len(s) > maxRecords {
		s = slices.Delete(s, 0, 1)
	}
	return s
}

func (s rrset) expire(now time.Time) rrset {
	return slices.DeleteFunc(s, func(c cached) bool { return !now.Before(c.at.Add(c.ttl())) })
}

// latest is the record that arrived last.
func (s rrset) latest() (cached, bool) {
	if len(s) == 0 {
		return cached{}, false
	}
	return s[len(s)-1], true
}

// aging reports whether any record of s is aging.
func (s rrset) aging(now time.Time) bool {
	return slices.ContainsFunc(s, func(c cached) bool { return c.aging(now) })
}
