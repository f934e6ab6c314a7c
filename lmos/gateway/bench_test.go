package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/lmosdir/lmosdir/lmos/gateway"
)

// BenchmarkRelay times an invokeAction and its reply through a session and the shared
// WebSocket connection to a real agent; in parallel, that many sessions relay at once.
func BenchmarkRelay(b *testing.B) {
	f, _ := newAgentFixture(b, func(c *gateway.Config) {
		c.Tracer = sdktrace.NewTracerProvider().Tracer("bench")
		// The rate limit would answer most of the loop with 429s, and time refusals.
		c.MessagesPerSecond = 1e9
	})
	b.Run("sequential", func(b *testing.B) {
		s := f.gw.Open(gateway.Consumer{})
		defer s.Close()
		for b.Loop() {
			relayOnce(b, s)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetParallelism(50)
		b.RunParallel(func(pb *testing.PB) {
			s := f.gw.Open(gateway.Consumer{})
			defer s.Close()
			for pb.Next() {
				relayOnce(b, s)
			}
		})
	})
}

func relayOnce(b *testing.B, s *gateway.Session) {
	frame := fmt.Sprintf(`{"thingId":%q,"messageId":%q,"messageType":"invokeAction","action":"echo","input":{"text":"What is the weather in New York tomorrow?"}}`, agentID, uuid.NewString())
	s.Handle(context.Background(), []byte(frame))
	r := <-s.Replies()
	if !r.Final || !bytes.Contains(r.Data, []byte(`"messageType":"actionStatus"`)) || !bytes.Contains(r.Data, []byte(`"status":"completed"`)) {
		b.Fatalf("reply %s is not the action's completion", r.Data)
	}
}
