package lmos

import "testing"

// The messages of a relayed request-reply, as a consumer and an agent send them.
var (
	benchRequest = []byte(`{"thingId":"urn:uuid:6f1d3a7a-1f97-4e6b-b45f-f3c2e1c84c77","messageId":"2b6435d0-5468-443b-ad0f-ad1b4b027747","messageType":"invokeAction","action":"echo","input":{"text":"What is the weather in New York tomorrow?"}}`)
	benchReply   = []byte(`{"thingId":"urn:uuid:6f1d3a7a-1f97-4e6b-b45f-f3c2e1c84c77","messageId":"9c1f4a52-3b7e-4d0a-8f6c-2e5d7b9a1c34","messageType":"actionStatus","correlationId":"b45e8f90-8824-4c23-bc37-c6c4ddad4b2c","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","action":"echo","status":"completed","output":{"text":"What is the weather in New York tomorrow?"}}`)
)

// BenchmarkParse measures what the gateway does with every message it receives.
func BenchmarkParse(b *testing.B) {
	for _, m := range []struct {
		name string
		data []byte
	}{{"invokeAction", benchRequest}, {"actionStatus", benchReply}} {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(m.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncode measures what the gateway does with every message it sends on.
func BenchmarkEncode(b *testing.B) {
	m, err := Parse(benchReply)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Encode(SpellingCamelID); err != nil {
			b.Fatal(err)
		}
	}
}
