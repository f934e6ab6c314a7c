package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lmosdir/lmosdir/client"
	"github.com/lmosdir/lmosdir/internal/lmostest"
	"github.com/lmosdir/lmosdir/internal/pgtest"
	"github.com/lmosdir/lmosdir/lmos"
)

const gatewayAgentID = "urn:test:agent"

func newMessage(body lmos.Body) *lmos.Message {
	return &lmos.Message{ThingID: gatewayAgentID, MessageID: uuid.NewString(), Body: body}
}

// TestGatewayAcrossReplicas registers an agent on one replica and talks to it through the
// other, over WebSocket and HTTP, with the Go client and with lmosdir send: the gateway of
// each process follows changes made on the other.
func TestGatewayAcrossReplicas(t *testing.T) {
	db := pgtest.NewDatabase(t)
	a, b := serve(t, db), serve(t, db)
	a.waitHealthy(t)
	b.waitHealthy(t)
	agent := lmostest.NewAgent(t)
	td := lmostest.AgentTD(gatewayAgentID, agent.URL())
	res, body := request(t, "PUT", a.url+"/things/"+gatewayAgentID, "application/td+json", []byte(td))
	if res.StatusCode != 201 {
		t.Fatalf("PUT: %d %s", res.StatusCode, body)
	}

	onB, err := client.New(b.url)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := onB.DialGateway(ctx, client.GatewayOptions{Consumer: "urn:test:consumer"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	reading, err := conn.Call(ctx, newMessage(&lmos.ReadProperty{Name: "temperature"}))
	if err != nil || reading.Type() != lmos.TypePropertyReading {
		t.Fatalf("readProperty: %v %v", reading, err)
	}
	agent.Next(t)

	subscribe := newMessage(&lmos.SubscribeEvent{Event: "alert"})
	go func() {
		for agent.SubscriptionCount() == 0 && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		agent.Emit(gatewayAgentID, lmos.TypeSubscribeEvent, "alert", json.RawMessage(`"first"`))
		agent.Emit(gatewayAgentID, lmos.TypeSubscribeEvent, "alert", json.RawMessage(`"second"`))
	}()
	events := 0
	for m, err := range conn.Stream(ctx, subscribe) {
		if err != nil {
			t.Fatal(err)
		}
		if m.Type() != lmos.TypeEvent || m.CorrelationID != subscribe.MessageID {
			t.Fatalf("stream gave %s for %s", m.Type(), m.CorrelationID)
		}
		if events++; events == 2 {
			break
		}
	}
	if events != 2 {
		t.Errorf("%d events", events)
	}

	// A change registered on a reaches b's gateway.
	res, body = request(t, "PUT", a.url+"/things/"+gatewayAgentID, "application/td+json", []byte(strings.Replace(td, `"echo"`, `"echoed"`, 1)))
	if res.StatusCode != 204 {
		t.Fatalf("PUT: %d %s", res.StatusCode, body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		reply, err := conn.Call(ctx, newMessage(&lmos.InvokeAction{Action: "echo", Input: json.RawMessage(`{"text":"x"}`)}))
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := reply.Body.(*lmos.Error); ok && e.Status == "404" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b still relays the removed action: %s", reply.Type())
		}
		time.Sleep(50 * time.Millisecond)
	}

	onA, err := client.New(a.url)
	if err != nil {
		t.Fatal(err)
	}
	for m, err := range onA.SendMessage(ctx, gatewayAgentID, newMessage(&lmos.InvokeAction{Action: "echoed", Input: json.RawMessage(`{"text":"over HTTP"}`)}), client.GatewayOptions{}, false) {
		if err != nil {
			t.Fatal(err)
		}
		if status, ok := m.Body.(*lmos.ActionStatus); !ok || string(status.Output) != `{"text":"over HTTP"}` {
			t.Errorf("over HTTP: %+v", m.Body)
		}
	}

	file := filepath.Join(t.TempDir(), "read.json")
	if err := os.WriteFile(file, []byte(`{"messageType":"readProperty","name":"temperature"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := lmosdir(t, nil, "send", "--url", b.url, gatewayAgentID, file)
	if err != nil || !strings.Contains(out, `"messageType":"propertyReading"`) || !strings.Contains(out, `"value":21.5`) {
		t.Errorf("lmosdir send: %v\n%s", err, out)
	}
}
