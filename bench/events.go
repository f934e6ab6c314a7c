package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The events scenario checks the goal of the directory's event streams: every subscriber
// of a busy directory receives an event soon after the write, and serving the streams
// barely slows the writes down. It writes at the pace a directory sees rather than as fast
// as it can, so that the figures describe delivery and not a saturated server.

const (
	eventsBaseline = "events-baseline"
	// deliveryGrace is how long after the last write its events may take before the ones
	// not received count as missed.
	deliveryGrace = 5 * time.Second
	// openTimeout bounds connecting a subscriber and receiving its response headers.
	openTimeout = 30 * time.Second
	// openParallelism bounds the subscribers connecting at once: connecting is not what is
	// measured, and a thousand simultaneous handshakes can overflow a listen backlog.
	openParallelism = 64
	// deliveryPoll is how often the end of the deliveries is checked; the latencies are
	// timed by the subscribers, not by this.
	deliveryPoll = 5 * time.Millisecond
)

func (cfg Config) checkEvents() error {
	switch {
	case !slices.Contains(cfg.Scenarios, "events"):
		return nil
	case cfg.Subscribers <= 0:
		return errors.New("subscribers must be positive for the events scenario")
	case cfg.WriteInterval <= 0:
		return errors.New("write interval must be positive: the events scenario paces its writes")
	}
	return nil
}

// runEvents reports the paced writes twice: without subscribers, as the baseline, and
// with cfg.Subscribers streams open, so that the two write latencies compare.
func runEvents(ctx context.Context, b *bench, report func(Result) error) error {
	if err := report(b.measureEvents(ctx, eventsBaseline, 0)); err != nil {
		return err
	}
	return report(b.measureEvents(ctx, "events", b.cfg.Subscribers))
}

func (b *bench) measureEvents(ctx context.Context, name string, subscribers int) Result {
	st := b.openStreams(ctx, subscribers)
	writes := &sentWrites{at: map[string]time.Time{}}
	var samples []sample
	before, start := b.server.snapshot(), time.Now()
	// Writes seen by fewer subscribers than asked would measure another load.
	if len(st.failures) == 0 {
		st.read(writes)
		samples = b.paceWrites(ctx, writes)
	}
	r := b.summarize(name, time.Since(start), samples, before)
	r.Concurrency = 1
	expected := succeeded(samples) * len(st.subs)
	st.await(ctx, int64(expected), time.Now().Add(deliveryGrace))
	st.close()
	st.addTo(&r, subscribers, expected)
	return r
}

// paceWrites registers a new Thing every WriteInterval from one writer, within the bounds
// of a scenario, noting in writes when each was sent.
func (b *bench) paceWrites(ctx context.Context, writes *sentWrites) []sample {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Duration)
	defer cancel()
	tick := time.NewTicker(b.cfg.WriteInterval)
	defer tick.Stop()
	// Beyond N and the put scenario's Things, and unique per run: a write takes longer
	// than a microsecond, so a later run starts beyond the Things of an earlier one.
	first := b.cfg.N + int(time.Now().UnixMicro())
	var samples []sample
	for i := 0; b.cfg.Requests <= 0 || i < b.cfg.Requests; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return samples
			case <-tick.C:
			}
		}
		smp := b.writeThing(ctx, first+i, writes)
		if ctx.Err() != nil && smp.failure != "" {
			return samples // cut off by the end of the run, not a failure of the server
		}
		samples = append(samples, smp)
	}
	return samples
}

func (b *bench) writeThing(ctx context.Context, i int, writes *sentWrites) sample {
	id := b.gen.ID(i)
	r := request{method: http.MethodPut, path: b.thingPath(i), contentType: "application/td+json", body: b.gen.TD(i), expect: []int{http.StatusCreated}}
	writes.add(id, time.Now())
	smp := b.do(ctx, r)
	if smp.failure != "" {
		writes.remove(id) // no event is expected for it
	}
	return smp
}

func succeeded(samples []sample) int {
	n := 0
	for _, s := range samples {
		if s.failure == "" {
			n++
		}
	}
	return n
}

// sentWrites maps the Things written in one run to when their write was sent; the
// subscribers look up every event in it.
type sentWrites struct {
	mu sync.RWMutex
	at map[string]time.Time
}

func (w *sentWrites) add(id string, sent time.Time) {
	w.mu.Lock()
	w.at[id] = sent
	w.mu.Unlock()
}

func (w *sentWrites) remove(id string) {
	w.mu.Lock()
	delete(w.at, id)
	w.mu.Unlock()
}

func (w *sentWrites) lookup(id []byte) (time.Time, bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	sent, ok := w.at[string(id)] // converting in the index expression does not allocate
	return sent, ok
}

// streams are the event streams of one run.
type streams struct {
	subs     []*subscriber
	failures map[string]int // subscribers that could not open, by reason
	client   *http.Client
	cancel   context.CancelFunc
	readers  sync.WaitGroup
	ended    chan struct{} // closed when every stream has ended
	// delivered counts the events received for writes of the run, by all subscribers.
	delivered atomic.Int64
}

type subscriber struct {
	res       *http.Response
	latencies []time.Duration
	failure   string // why the stream ended before it was closed
}

// openStreams opens n streams on /events and returns once each has its response headers
// or has failed.
func (b *bench) openStreams(ctx context.Context, n int) *streams {
	ctx, cancel := context.WithCancel(ctx)
	st := &streams{client: subscriberClient(), cancel: cancel, failures: map[string]int{}, ended: make(chan struct{})}
	opened := make([]*subscriber, n)
	failures := make([]string, n)
	slots := make(chan struct{}, openParallelism)
	var wg sync.WaitGroup
	for k := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			opened[k], failures[k] = b.openStream(ctx, st.client)
		})
	}
	wg.Wait()
	for k, failure := range failures {
		if failure != "" {
			st.failures[failure]++
		} else {
			st.subs = append(st.subs, opened[k])
		}
	}
	return st
}

// subscriberClient connects every subscriber on its own TCP connection, as separate
// clients would: HTTP/2 would multiplex them on one. It has no overall timeout, which
// would cut the streams.
func subscriberClient() *http.Client {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	return &http.Client{Transport: &http.Transport{
		Protocols:             &protocols,
		DialContext:           (&net.Dialer{Timeout: openTimeout}).DialContext,
		TLSHandshakeTimeout:   openTimeout,
		ResponseHeaderTimeout: openTimeout,
	}}
}

func (b *bench) openStream(ctx context.Context, client *http.Client) (*subscriber, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+"/events", http.NoBody)
	if err != nil {
		return nil, "subscribe: " + err.Error()
	}
	req.Header.Set("Accept", "text/event-stream")
	res, err := client.Do(req)
	var netErr net.Error
	switch {
	case errors.As(err, &netErr) && netErr.Timeout():
		return nil, fmt.Sprintf("subscribe: no response within %v", openTimeout)
	case err != nil:
		return nil, "subscribe: transport error"
	case res.StatusCode != http.StatusOK:
		res.Body.Close()
		return nil, fmt.Sprintf("subscribe: status %d", res.StatusCode)
	}
	return &subscriber{res: res}, ""
}

func (st *streams) read(writes *sentWrites) {
	for _, s := range st.subs {
		st.readers.Go(func() { s.read(writes, &st.delivered) })
	}
	go func() {
		st.readers.Wait()
		close(st.ended)
	}()
}

var (
	dataField = []byte("data:")
	idMember  = []byte(`"id":"`)
)

// read times the events of writes until the stream ends. Only data lines matter, and
// without diff their data is {"id":"…"}, with an id that needs no escaping: a byte search
// finds it without decoding JSON, which keeps a thousand readers cheap.
func (s *subscriber) read(writes *sentWrites, delivered *atomic.Int64) {
	r := bufio.NewReader(s.res.Body)
	lineStart := true
	for {
		line, err := r.ReadSlice('\n')
		if lineStart && bytes.HasPrefix(line, dataField) {
			if sent, ok := writes.lookup(eventThingID(line)); ok {
				s.latencies = append(s.latencies, time.Since(sent))
				delivered.Add(1)
			}
		}
		switch {
		case err == nil:
			lineStart = true
		case errors.Is(err, bufio.ErrBufferFull):
			lineStart = false
		default:
			if s.res.Request.Context().Err() == nil {
				s.failure = "event stream ended early"
			}
			return
		}
	}
}

func eventThingID(line []byte) []byte {
	_, rest, ok := bytes.Cut(line, idMember)
	if !ok {
		return nil
	}
	id, _, ok := bytes.Cut(rest, []byte{'"'})
	if !ok {
		return nil
	}
	return id
}

// await returns once expected events were received, at deadline, or when no more can come.
func (st *streams) await(ctx context.Context, expected int64, deadline time.Time) {
	poll := time.NewTicker(deliveryPoll)
	defer poll.Stop()
	for st.delivered.Load() < expected && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-st.ended:
			return
		case <-poll.C:
		}
	}
}

// close ends every stream and waits for their readers.
func (st *streams) close() {
	st.cancel()
	st.readers.Wait()
	for _, s := range st.subs {
		s.res.Body.Close()
	}
	st.client.CloseIdleConnections()
}

// addTo adds the deliveries to r, and the subscribers that failed to its errors.
func (st *streams) addTo(r *Result, subscribers, expected int) {
	r.Subscribers = subscribers
	for kind, n := range st.failures {
		r.addErrors(kind, n)
	}
	var latencies []time.Duration
	for _, s := range st.subs {
		latencies = append(latencies, s.latencies...)
		if s.failure != "" {
			r.addErrors(s.failure, 1)
		}
	}
	slices.Sort(latencies)
	r.Deliveries = len(latencies)
	// An event of a write that failed late, after the directory stored it, may still come.
	r.Missed = max(0, expected-len(latencies))
	r.DeliveryP50ms = millis(percentile(latencies, 0.50))
	r.DeliveryP99ms = millis(percentile(latencies, 0.99))
	if len(latencies) > 0 {
		r.DeliveryMaxms = millis(latencies[len(latencies)-1])
	}
}
