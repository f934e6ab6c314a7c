package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/lmosdir/lmosdir/lmos"
)

// The gateway scenario measures what relaying through the directory's LMOS gateway adds to
// a request and its reply, and how many messages the gateway relays. It runs an echo agent
// of its own on this machine, registers it, and sends the same requests to the agent
// directly and through the gateway: first from one connection at a steady pace, for the
// latency, then from Concurrency connections as fast as they are answered. The default
// pace stays below the gateway's default rate limit of a connection.

const (
	echoAgentID = "urn:lmosdir:bench:echo-agent"
	// gatewayDialTimeout bounds opening each connection.
	gatewayDialTimeout = 10 * time.Second
)

// echoInput is the input of every invokeAction: a question of the length agents send.
var echoInput = `{"question":"What is the weather in New York tomorrow afternoon, and should I take an umbrella?","interactionMode":"text"}`

func runGateway(ctx context.Context, b *bench, report func(Result) error) error {
	agent, err := b.startEchoAgent(ctx)
	if err != nil {
		return err
	}
	defer agent.close()
	if err := b.registerEchoAgent(ctx, agent.url); err != nil {
		return err
	}
	relayed := "ws" + strings.TrimPrefix(b.base, "http") + "/lmos"
	runs := []struct {
		name     string
		endpoint string
		conns    int
		pace     time.Duration
	}{
		{"gateway-direct-1", agent.url, 1, b.cfg.GatewayPace},
		{"gateway-1", relayed, 1, b.cfg.GatewayPace},
		{"gateway-direct", agent.url, b.cfg.Concurrency, 0},
		{"gateway", relayed, b.cfg.Concurrency, 0},
	}
	for _, run := range runs {
		r, err := b.exchange(ctx, run.name, run.endpoint, run.conns, run.pace)
		if err != nil {
			return fmt.Errorf("%s: %w", run.name, err)
		}
		if err := report(r); err != nil {
			return err
		}
	}
	return nil
}

func (b *bench) registerEchoAgent(ctx context.Context, endpoint string) error {
	form := `[{"href":"` + endpoint + `","subprotocol":"lmosprotocol"}]`
	td := `{"@context":["https://www.w3.org/2022/wot/td/v1.1",{"lmos":"https://eclipse.dev/lmos/protocol/v1"}],` +
		`"id":"` + echoAgentID + `","title":"Echo agent of lmosdir bench","@type":"lmos:Agent",` +
		`"securityDefinitions":{"nosec_sc":{"scheme":"nosec"}},"security":"nosec_sc",` +
		`"actions":{"echo":{"input":{"type":"object","properties":{"question":{"type":"string"},"interactionMode":{"type":"string","enum":["text","voice"]}},` +
		`"required":["question"]},"forms":` + form + `}}}`
	s := b.do(ctx, request{
		method: http.MethodPut, path: "/things/" + url.PathEscape(echoAgentID), contentType: "application/td+json",
		body: []byte(td), expect: []int{http.StatusCreated, http.StatusNoContent},
	})
	if s.failure != "" {
		return fmt.Errorf("registering the echo agent: %s", s.failure)
	}
	return nil
}

// exchange sends invokeAction requests over conns connections to endpoint, each waiting
// for its reply before the next (and for pace, when set), and times each request to its
// reply.
func (b *bench) exchange(ctx context.Context, name, endpoint string, conns int, pace time.Duration) (Result, error) {
	sockets := make([]*websocket.Conn, conns)
	for i := range sockets {
		c, err := dialLMOS(ctx, endpoint)
		if err != nil {
			return Result{}, err
		}
		defer func() { _ = c.CloseNow() }()
		sockets[i] = c
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Duration)
	defer cancel()
	before, start := b.server.snapshot(), time.Now()
	results := make([][]sample, conns)
	var wg sync.WaitGroup
	for w, c := range sockets {
		wg.Go(func() {
			next := time.Now()
			for ctx.Err() == nil {
				if pace > 0 {
					next = next.Add(pace)
					time.Sleep(time.Until(next))
				}
				s := requestReply(ctx, c)
				if ctx.Err() != nil && s.failure != "" {
					return
				}
				results[w] = append(results[w], s)
				if s.failure != "" && s.failure != "refused" {
					return // the connection is broken
				}
			}
		})
	}
	wg.Wait()
	var all []sample
	for _, r := range results {
		all = append(all, r...)
	}
	r := b.summarize(name, time.Since(start), all, before)
	r.Concurrency = conns
	return r, nil
}

func dialLMOS(ctx context.Context, endpoint string) (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, gatewayDialTimeout)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, endpoint, &websocket.DialOptions{Subprotocols: []string{lmos.Subprotocol}})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", endpoint, err)
	}
	return c, nil
}

// requestReply sends one invokeAction and reads its reply.
func requestReply(ctx context.Context, c *websocket.Conn) sample {
	id := uuid.NewString()
	msg := `{"thingId":"` + echoAgentID + `","messageId":"` + id + `","messageType":"invokeAction","action":"echo","input":` + echoInput + `}`
	start := time.Now()
	if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		return sample{latency: time.Since(start), failure: "write"}
	}
	_, data, err := c.Read(ctx)
	latency := time.Since(start)
	if err != nil {
		return sample{latency: latency, failure: "read"}
	}
	reply, err := lmos.Parse(data)
	switch {
	case err != nil || reply.CorrelationID != id:
		return sample{latency: latency, bytes: int64(len(data)), failure: "unrelated reply"}
	case reply.Type() != lmos.TypeActionStatus:
		return sample{latency: latency, bytes: int64(len(data)), failure: "refused"}
	}
	return sample{latency: latency, bytes: int64(len(msg) + len(data))}
}

// echoAgent is the agent the gateway scenario talks to.
type echoAgent struct {
	url   string
	close func()
}

// startEchoAgent runs the echo agent in a process of its own when cfg.EchoAgent says how,
// as a deployed agent would be: a client and an agent in one process hand messages to
// each other without waking another process, which would flatter the direct runs.
func (b *bench) startEchoAgent(ctx context.Context) (*echoAgent, error) {
	if len(b.cfg.EchoAgent) == 0 {
		listener, err := new(net.ListenConfig).Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		server := echoServer()
		go func() { _ = server.Serve(listener) }()
		return &echoAgent{url: echoURL(listener.Addr()), close: func() { _ = server.Close() }}, nil
	}
	cmd := exec.CommandContext(ctx, b.cfg.EchoAgent[0], b.cfg.EchoAgent[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the echo agent: %w", err)
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return nil, fmt.Errorf("reading where the echo agent listens: %w", err)
	}
	if !strings.HasPrefix(line, "ws://") {
		stop()
		return nil, fmt.Errorf("the echo agent said %q instead of where it listens", line)
	}
	return &echoAgent{url: strings.TrimSpace(line), close: stop}, nil
}

// ServeEchoAgent serves the gateway scenario's echo agent on listener until ctx ends,
// after writing its WebSocket URL as one line to w.
func ServeEchoAgent(ctx context.Context, listener net.Listener, w io.Writer) error {
	server := echoServer()
	go func() {
		<-ctx.Done()
		_ = server.Close()
	}()
	if _, err := fmt.Fprintln(w, echoURL(listener.Addr())); err != nil {
		return err
	}
	if err := server.Serve(listener); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func echoServer() *http.Server {
	return &http.Server{Handler: http.HandlerFunc(serveEcho), ReadHeaderTimeout: 10 * time.Second}
}

func echoURL(addr net.Addr) string { return "ws://" + addr.String() + "/agent" }

func serveEcho(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{lmos.Subprotocol}})
	if err != nil {
		return
	}
	defer func() { _ = c.CloseNow() }()
	ctx := context.Background()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		m, err := lmos.Parse(data)
		if err != nil {
			continue
		}
		invoke, ok := m.Body.(*lmos.InvokeAction)
		if !ok {
			continue
		}
		correlation := m.CorrelationID
		if correlation == "" {
			correlation = m.MessageID
		}
		status := &lmos.Message{ThingID: m.ThingID, MessageID: uuid.NewString(), CorrelationID: correlation,
			Body: &lmos.ActionStatus{Action: invoke.Action, Status: "completed", Output: invoke.Input}}
		encoded, err := status.Encode(m.Spelling())
		if err != nil {
			continue
		}
		if err := c.Write(ctx, websocket.MessageText, encoded); err != nil {
			return
		}
	}
}
