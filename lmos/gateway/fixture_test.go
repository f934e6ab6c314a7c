package gateway_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/internal/dirtest"
	"github.com/lmosdir/lmosdir/lmos"
	"github.com/lmosdir/lmosdir/lmos/gateway"
)

// fixture is a directory with its event delivery running and a gateway over it.
type fixture struct {
	dir   *directory.Service
	gw    *gateway.Gateway
	clock *dirtest.Clock
}

func newFixture(t testing.TB, tune ...func(*gateway.Config)) *fixture {
	t.Helper()
	clk := dirtest.NewClock(time.Now().UTC())
	dir := dirtest.NewEmbedded(t, directory.Options{Clock: clk.Now})
	dirtest.StartEvents(t, dir)
	cfg := gateway.Config{SelfID: "http://dir.example/lmos"}
	for _, f := range tune {
		f(&cfg)
	}
	followed := &followedDirectory{Service: dir, subscribed: make(chan struct{})}
	gw, err := gateway.New(cfg, followed, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); gw.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-stopped })
	<-followed.subscribed // from now on the gateway caches TDs, as it does when serving
	return &fixture{dir: dir, gw: gw, clock: clk}
}

// followedDirectory tells when the gateway has subscribed to the directory's changes.
type followedDirectory struct {
	*directory.Service
	subscribed chan struct{}
	once       sync.Once
}

func (d *followedDirectory) Subscribe(ctx context.Context, lastEventID *int64, filter directory.EventFilter) (*directory.Subscription, error) {
	sub, err := d.Service.Subscribe(ctx, lastEventID, filter)
	if err == nil {
		d.once.Do(func() { close(d.subscribed) })
	}
	return sub, err
}

func (f *fixture) register(t testing.TB, id, document string) {
	t.Helper()
	if _, err := f.dir.Put(context.Background(), id, []byte(document)); err != nil {
		t.Fatalf("registering %s: %v", id, err)
	}
}

// consumer is a session with helpers to send and await replies.
type consumer struct {
	t       *testing.T
	session *gateway.Session
}

func (f *fixture) open(t *testing.T, c gateway.Consumer) *consumer {
	t.Helper()
	s := f.gw.Open(c)
	t.Cleanup(s.Close)
	return &consumer{t: t, session: s}
}

// send hands a message to the session; id fields missing from members are filled in.
func (c *consumer) send(thingID string, members string) (messageID string, answer gateway.Answer) {
	c.t.Helper()
	messageID = uuid.NewString()
	frame := fmt.Sprintf(`{"thingId":%q,"messageId":%q,%s}`, thingID, messageID, members)
	return messageID, c.session.Handle(context.Background(), []byte(frame))
}

// reply waits for the next reply.
func (c *consumer) reply() (*lmos.Message, gateway.Reply) {
	c.t.Helper()
	select {
	case r := <-c.session.Replies():
		m, err := lmos.Parse(r.Data)
		if err != nil {
			c.t.Fatalf("the gateway sent an invalid message %s: %v", r.Data, err)
		}
		return m, r
	case <-time.After(5 * time.Second):
		c.t.Fatal("no reply")
		return nil, gateway.Reply{}
	}
}

// noReply checks that nothing is waiting for the consumer.
func (c *consumer) noReply() {
	c.t.Helper()
	select {
	case r := <-c.session.Replies():
		c.t.Fatalf("unexpected reply %s", r.Data)
	case <-time.After(50 * time.Millisecond):
	}
}

// errorReply waits for an LMOS error and checks its status and correlation.
func (c *consumer) errorReply(status int, correlation string) *lmos.Error {
	c.t.Helper()
	m, r := c.reply()
	e, ok := m.Body.(*lmos.Error)
	if !ok {
		c.t.Fatalf("reply %s, want an error", r.Data)
	}
	if e.Status != fmt.Sprint(status) {
		c.t.Fatalf("error status %s (%s), want %d", e.Status, e.Detail, status)
	}
	if !r.Final {
		c.t.Error("an error must be the final reply")
	}
	if m.CorrelationID != correlation {
		c.t.Errorf("error correlation %q, want %q", m.CorrelationID, correlation)
	}
	return e
}

// errorReplies waits for n final LMOS errors of one status, by correlation id, as requests
// that fail together send them in any order.
func (c *consumer) errorReplies(n, status int) map[string]*lmos.Error {
	c.t.Helper()
	errs := map[string]*lmos.Error{}
	for range n {
		m, r := c.reply()
		e, ok := m.Body.(*lmos.Error)
		if !ok || e.Status != fmt.Sprint(status) || !r.Final {
			c.t.Fatalf("reply %s: want a final %d error", r.Data, status)
		}
		errs[m.CorrelationID] = e
	}
	return errs
}
