package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/lmosdir/lmosdir/directory"
)

// Event stream defaults.
const (
	// DefaultEventQuiet is how long a new stream carries nothing but events: WoT Discovery
	// clients may take an early comment for the end of the headers' grace period.
	DefaultEventQuiet = 10 * time.Second
	// DefaultEventKeepAlive is the interval of keep-alive comments after the quiet period,
	// shorter than the idle timeouts of common proxies (30 to 60 s).
	DefaultEventKeepAlive = 25 * time.Second
	// writeTimeout bounds one write to a client of a stream or a WebSocket: one that takes
	// longer is stalled.
	writeTimeout = 30 * time.Second
)

var eventParameters = []string{"diff", "kind", "vendor"}

// streamEvents serves GET/HEAD /events and /events/{type} as Server-Sent Events.
func (s *Server) streamEvents(c *echo.Context) error {
	req := c.Request()
	filter := directory.EventFilter{Type: directory.EventType(c.Param("type"))}
	if c.Param("type") == "" && c.Path() != "/events" {
		return directory.ErrUnknownEventType
	}
	params := req.URL.Query()
	if err := checkParameters(params, "/events", eventParameters); err != nil {
		return err
	}
	diff := false
	switch v := params.Get("diff"); v {
	case "", "false":
	case "true":
		diff = true
	default:
		return errorf(http.StatusBadRequest, "diff must be true or false, got %q", v)
	}
	filter.Kind, filter.Vendor = params.Get("kind"), params.Get("vendor")
	lastEventID, err := parseLastEventID(req.Header.Values("Last-Event-ID"))
	if err != nil {
		return err
	}
	sub, err := s.dir.Subscribe(req.Context(), lastEventID, filter)
	if err != nil {
		return err
	}
	defer sub.Close()

	writeEventStreamHeader(c)
	if req.Method == http.MethodHead {
		return nil
	}
	rc := http.NewResponseController(c.Response())
	if err := rc.Flush(); err != nil {
		return nil // the client is gone
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		// A write blocked on a client that stopped reading returns at once when the
		// subscription ends, instead of holding the connection until the write timeout.
		select {
		case <-sub.Ended():
			_ = rc.SetWriteDeadline(time.Now())
		case <-done:
		}
	}()
	// The response is the server's again once the handler returns: nothing may touch it then.
	defer func() {
		close(done)
		<-finished
	}()
	st := eventStream{
		server: s, sub: sub, rc: rc, diff: diff,
		w:         c.Response(),
		keepAlive: time.Now().Add(max(s.cfg.EventQuiet, s.cfg.EventKeepAlive)),
	}
	st.run(req.Context())
	return nil
}

// parseLastEventID reads the Last-Event-ID header: nil when absent (or empty, which the
// SSE specification sends for "no id").
func parseLastEventID(values []string) (*int64, error) {
	if len(values) > 1 {
		return nil, errorf(http.StatusBadRequest, "Last-Event-ID is given %d times; give it once", len(values))
	}
	if len(values) == 0 || values[0] == "" {
		return nil, nil
	}
	id, err := strconv.ParseInt(values[0], 10, 64)
	if err != nil || id < 0 {
		return nil, errorf(http.StatusBadRequest, "Last-Event-ID %q is not an event id of this directory (a non-negative integer)", values[0])
	}
	return &id, nil
}

// eventStream writes one subscription to one client.
type eventStream struct {
	server    *Server
	sub       *directory.Subscription
	rc        *http.ResponseController
	w         io.Writer // each event is written whole, then flushed
	diff      bool
	keepAlive time.Time // when the next keep-alive comment is due
	frame     []byte    // the event being written, reused from one to the next
}

// run writes events until the client leaves, a write fails or the subscription ends; the
// client then reconnects with the id of the last event it received. One context waits
// for each keep-alive period, not one per event: with a thousand subscribers, every
// allocation per event and subscriber counts.
func (st *eventStream) run(ctx context.Context) {
	for {
		wait, cancel := context.WithDeadline(ctx, st.keepAlive)
		err := st.sendUntil(wait)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = st.write(keepAliveComment)
			st.keepAlive = time.Now().Add(st.server.cfg.EventKeepAlive)
		}
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				st.server.log.Debug("event stream ended", "error", err)
			}
			return
		}
	}
}

// sendUntil sends events until wait ends or sending fails.
func (st *eventStream) sendUntil(wait context.Context) error {
	for {
		e, err := st.sub.Next(wait)
		if err != nil {
			return err
		}
		if err := st.send(e); err != nil {
			return err
		}
	}
}

func (st *eventStream) send(e *directory.Event) error {
	data := directory.EventData(e, st.diff)
	frame := st.frame[:0]
	frame = append(frame, "event: "...)
	frame = append(frame, e.Type...)
	frame = append(frame, "\nid: "...)
	frame = strconv.AppendInt(frame, e.ID, 10)
	frame = append(frame, '\n')
	frame = appendDataLines(frame, data)
	frame = append(frame, '\n')
	st.frame = frame
	return st.write(frame)
}

// appendDataLines writes data as SSE data lines. A registered TD keeps its whitespace,
// line breaks included, and a line break ends an SSE field: each line gets its own data
// field, and the client joins them with line feeds. A CR or CRLF becomes a line feed, which
// is whitespace to JSON as well.
func appendDataLines(frame, data []byte) []byte {
	for {
		i := bytes.IndexAny(data, "\r\n")
		frame = append(frame, "data: "...)
		if i < 0 {
			frame = append(frame, data...)
			return append(frame, '\n')
		}
		frame = append(frame, data[:i]...)
		frame = append(frame, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
}

func (st *eventStream) write(p []byte) error {
	select {
	case <-st.sub.Ended():
		return directory.ErrTooSlow
	default:
	}
	return writeFlushed(st.rc, st.w, p)
}

// keepAliveComment keeps a quiet event stream open through proxies.
var keepAliveComment = []byte(": keep-alive\n\n")

// writeEventStreamHeader sends the status and headers of a text/event-stream.
func writeEventStreamHeader(c *echo.Context) {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set(echo.HeaderCacheControl, "no-cache")
	// Proxies such as nginx buffer responses unless told not to, which would hold events back.
	h.Set("X-Accel-Buffering", "no")
	c.Response().WriteHeader(http.StatusOK)
}

// writeFlushed writes p to a stream within writeTimeout and sends it at once.
func writeFlushed(rc *http.ResponseController, w io.Writer, p []byte) error {
	if err := rc.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return err
	}
	if _, err := w.Write(p); err != nil {
		return err
	}
	return rc.Flush()
}
