package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/labstack/echo/v5"

	"github.com/lmosdir/lmosdir/lmos"
	"github.com/lmosdir/lmosdir/lmos/gateway"
)

var lmosParameters = []string{"consumer", "session"}

// lmosSocket serves GET /lmos: a WebSocket with the subprotocol lmosprotocol, one LMOS
// message per frame each way.
func (s *Server) lmosSocket(c *echo.Context) error {
	if s.gateway == nil {
		return errGatewayOff
	}
	req := c.Request()
	consumer, err := gatewayConsumer(req.URL.Query(), "/lmos")
	if err != nil {
		return err
	}
	if !headerHasToken(req.Header, "Connection", "upgrade") || !headerHasToken(req.Header, "Upgrade", "websocket") {
		c.Response().Header().Set("Upgrade", "websocket")
		return errorf(http.StatusUpgradeRequired, "/lmos is a WebSocket endpoint: open it with a WebSocket handshake and the subprotocol %s", lmos.Subprotocol)
	}
	if !headerHasToken(req.Header, "Sec-WebSocket-Protocol", lmos.Subprotocol) {
		return errorf(http.StatusBadRequest, "the WebSocket subprotocol %s is required (Sec-WebSocket-Protocol)", lmos.Subprotocol)
	}
	conn, err := websocket.Accept(c.Response(), req, &websocket.AcceptOptions{
		Subprotocols: []string{lmos.Subprotocol},
		// Consumers in web pages of any origin may connect: the gateway holds no cookies
		// or credentials that a foreign page could borrow.
		InsecureSkipVerify: true,
	})
	if err != nil {
		return nil // Accept has answered the client
	}
	limit := s.gateway.MaxMessageBytes()
	// A frame far beyond the message limit ends the connection instead of being read.
	conn.SetReadLimit(int64(4 * limit))
	session := s.gateway.Open(consumer)
	defer session.Close()
	ctx, cancel := context.WithCancel(context.WithoutCancel(req.Context()))
	defer cancel()
	written := make(chan struct{})
	go func() {
		defer close(written)
		interval, timeout := s.gateway.Ping()
		writeReplies(ctx, conn, session, interval, timeout)
		cancel()
	}()
	readMessages(ctx, conn, session, limit)
	cancel()
	<-written
	return nil
}

// readMessages hands the consumer's frames to the session until the connection ends.
func readMessages(ctx context.Context, conn *websocket.Conn, session *gateway.Session, limit int) {
	for {
		_, r, err := conn.Reader(ctx)
		if err != nil {
			return
		}
		frame, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
		if err == nil && len(frame) > limit {
			// The session answers the oversized message; the rest of it is skipped.
			_, err = io.Copy(io.Discard, r)
		}
		if err != nil {
			return
		}
		session.Handle(ctx, frame)
	}
}

// writeReplies sends the session's replies until the session or the connection ends, and
// pings the consumer every interval: one that does not answer within timeout is gone
// without having closed, and its subscriptions must end.
func writeReplies(ctx context.Context, conn *websocket.Conn, session *gateway.Session, interval, timeout time.Duration) {
	ping := time.NewTicker(interval)
	defer ping.Stop()
	for {
		select {
		case <-ping.C:
			go func() {
				pctx, cancel := context.WithTimeout(ctx, timeout)
				defer cancel()
				if err := conn.Ping(pctx); err != nil && ctx.Err() == nil {
					_ = conn.CloseNow()
				}
			}()
		case reply := <-session.Replies():
			wctx, cancel := context.WithTimeout(ctx, writeTimeout)
			err := conn.Write(wctx, websocket.MessageText, reply.Data)
			cancel()
			if err != nil {
				_ = conn.CloseNow()
				return
			}
		case <-session.Done():
			status, reason := websocket.StatusGoingAway, "the gateway is stopping"
			if errors.Is(session.Err(), gateway.ErrTooSlow) {
				status, reason = websocket.StatusPolicyViolation, "replies were not read fast enough"
			}
			conn.Close(status, reason)
			return
		case <-ctx.Done():
			conn.Close(websocket.StatusNormalClosure, "")
			return
		}
	}
}

// postMessage serves POST /things/{id}/messages: one LMOS request in, its reply out as
// JSON, or its replies as Server-Sent Events when it gets several.
func (s *Server) postMessage(c *echo.Context) error {
	escaped := strings.TrimPrefix(c.Request().URL.EscapedPath(), "/things/")
	escapedID, isMessages := strings.CutSuffix(escaped, "/messages")
	if !isMessages || escapedID == "" {
		c.Response().Header().Set(echo.HeaderAllow, "GET, HEAD, PUT, PATCH, DELETE")
		return echo.ErrMethodNotAllowed
	}
	if s.gateway == nil {
		return errGatewayOff
	}
	req := c.Request()
	id, _ := url.PathUnescape(escapedID)
	consumer, err := gatewayConsumer(req.URL.Query(), "/things/{id}/messages")
	if err != nil {
		return err
	}
	body, err := s.readBody(c, mediaJSON)
	if err != nil {
		return err
	}
	if err := checkMessageThing(body, id); err != nil {
		return err
	}
	session := s.gateway.Open(consumer)
	defer session.Close()
	ctx := req.Context()
	answer := session.Handle(ctx, body)
	stream := answer == gateway.AnswerStream || (answer == gateway.AnswerProgress && acceptsEventStream(req))
	if !stream {
		return s.sendFinalReply(c, session)
	}
	writeEventStreamHeader(c)
	rc := http.NewResponseController(c.Response())
	if err := rc.Flush(); err != nil {
		return nil
	}
	// A subscription may be quiet for long: comments keep proxies from cutting the stream
	// and show when the client has gone.
	keepAlive := time.NewTicker(s.cfg.EventKeepAlive)
	defer keepAlive.Stop()
	var frame []byte
	for {
		select {
		case <-keepAlive.C:
			if err := writeFlushed(rc, c.Response(), keepAliveComment); err != nil {
				return nil
			}
		case reply := <-session.Replies():
			frame = append(append(append(frame[:0], "event: message\ndata: "...), reply.Data...), "\n\n"...)
			if err := writeFlushed(rc, c.Response(), frame); err != nil || reply.Final {
				return nil
			}
		case <-session.Done():
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// sendFinalReply answers with the request's last reply, skipping an action's progress.
func (s *Server) sendFinalReply(c *echo.Context, session *gateway.Session) error {
	ctx := c.Request().Context()
	for {
		select {
		case reply := <-session.Replies():
			if reply.Final {
				return writeBody(c, http.StatusOK, mediaJSON, reply.Data)
			}
		case <-session.Done():
			return errGatewayOff
		case <-ctx.Done():
			return nil
		}
	}
}

var errGatewayOff = errorf(http.StatusServiceUnavailable, "the LMOS gateway is not running")

// gatewayConsumer reads who the consumer says it is from the query.
func gatewayConsumer(params url.Values, endpoint string) (gateway.Consumer, error) {
	if err := checkParameters(params, endpoint, lmosParameters); err != nil {
		return gateway.Consumer{}, err
	}
	return gateway.Consumer{ID: params.Get("consumer"), Session: params.Get("session")}, nil
}

// checkMessageThing refuses a body that is not a JSON object and one that names another
// Thing than the path: both are mistakes of the HTTP request, not of the LMOS message.
// A thing id that is not a string is left to the gateway, which answers it as LMOS.
func checkMessageThing(body []byte, id string) error {
	members, ok := lmos.ObjectMembers(body)
	if !ok {
		return errorf(http.StatusBadRequest, "the body must be one LMOS message: a single, well-formed JSON object")
	}
	for _, m := range members {
		var named string
		if (m.Name == "thingID" || m.Name == "thingId") && json.Unmarshal(m.Value, &named) == nil && named != id {
			return errorf(http.StatusBadRequest, "the message's %s %q is not the Thing of the path, %s", m.Name, named, id)
		}
	}
	return nil
}

func acceptsEventStream(req *http.Request) bool {
	for _, v := range req.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/event-stream" {
				return true
			}
		}
	}
	return false
}

// headerHasToken reports whether a comma-separated header holds token, in any case.
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		if slices.ContainsFunc(strings.Split(v, ","), func(t string) bool { return strings.EqualFold(strings.TrimSpace(t), token) }) {
			return true
		}
	}
	return false
}
