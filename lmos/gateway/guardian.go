package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/lmosdir/lmosdir/lmos"
	"github.com/lmosdir/lmosdir/lmos/aos"
	"github.com/lmosdir/lmosdir/lmos/target"
)

// guardianProbeTTL is how long a ping's answer stands for readiness, so that frequent
// probes do not become a load on the guardian.
const guardianProbeTTL = 5 * time.Second

// inputArgument names the single argument of an action whose input is not an object.
const inputArgument = "input"

type guardianProbe struct {
	at  time.Time
	err error
}

// guardedCall is an action the guardian let through; its outcome is reported back.
type guardedCall struct {
	execution string
	context   aos.StepContext
	trace     trace.SpanContext // of the message, for the span of the result's report
}

func (g *Gateway) pingGuardian(ctx context.Context) error {
	g.guardianMu.Lock()
	defer g.guardianMu.Unlock()
	if now := time.Now(); now.Sub(g.guardianReady.at) < guardianProbeTTL {
		return g.guardianReady.err
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.GuardianTimeout)
	defer cancel()
	_, err := g.cfg.Guardian.Ping(ctx, aos.PingParams{
		Timestamp: time.Now().UTC().Format(time.RFC3339Nano),
		Timeout:   int(g.cfg.GuardianTimeout.Milliseconds()),
	})
	g.guardianReady = guardianProbe{at: time.Now(), err: err}
	return err
}

// guard asks the guardian whether an action may be invoked. It returns the message to
// forward, changed when the guardian modified the inputs, or why it must not be.
func (s *Session) guard(ctx context.Context, m *lmos.Message, th *target.Thing, invoke *lmos.InvokeAction) (*lmos.Message, *guardedCall, *target.Refusal) {
	ctx, cancel := context.WithTimeout(ctx, s.g.cfg.GuardianTimeout)
	defer cancel()
	call := &guardedCall{execution: m.MessageID, context: s.stepContext(ctx, m, th, invoke.Action), trace: trace.SpanContextFromContext(ctx)}
	ctx, span := s.g.startGuardianCall(ctx, "steps/toolCallRequest", th.ID)
	decision, err := s.g.cfg.Guardian.ToolCallRequest(ctx, aos.ToolCallRequestParams{
		Context: call.context,
		ToolCallRequest: aos.ToolCallRequest{
			ExecutionID: call.execution,
			ToolID:      toolID(th, invoke.Action),
			Inputs:      toolInputs(invoke.Input),
		},
	})
	if err == nil {
		span.SetAttributes(attribute.String("aos.decision", decision.Decision))
	}
	endSpan(span, err)
	if err != nil {
		s.g.log.Warn("gateway: asking the guardian", "thing", th.ID, "action", invoke.Action, "error", err)
		// Failing open covers a guardian that cannot be reached, not one that answered
		// with an error.
		if !errors.Is(err, aos.ErrUnavailable) {
			return nil, nil, refusal(http.StatusBadGateway, "the guardian refused to decide on the action: "+err.Error())
		}
		if s.g.cfg.GuardianFailOpen {
			return m, call, nil
		}
		return nil, nil, refusal(http.StatusServiceUnavailable, "the guardian could not be asked about the action, so it is not invoked: "+err.Error())
	}
	switch decision.Decision {
	case aos.DecisionAllow:
		return m, call, nil
	case aos.DecisionDeny:
		return nil, nil, refusal(http.StatusForbidden, "the guardian denied the action: "+decision.Message)
	}
	inputs, err := decision.ModifiedInputs()
	if err != nil {
		return nil, nil, refusal(http.StatusBadGateway, "the guardian's modified request cannot be used: "+err.Error())
	}
	modified := *m
	modified.Body = &lmos.InvokeAction{Action: invoke.Action, Input: inputValue(inputs, invoke.Input)}
	if r := th.Check(&modified); r != nil {
		return nil, nil, refusal(http.StatusBadGateway, "the guardian modified the input into one the action does not accept: "+r.Detail)
	}
	return &modified, call, nil
}

// stepContext describes the step to the guardian: the consumer is the agent, the Thing's
// action its tool.
func (s *Session) stepContext(ctx context.Context, m *lmos.Message, th *target.Thing, action string) aos.StepContext {
	agent := aos.Agent{ID: s.consumer.ID, Name: "anonymous consumer", Provider: aos.AgentProvider{Name: "unknown"}}
	if agent.ID == "" {
		agent.ID = "urn:lmosdir:anonymous"
	} else if consumer, err := s.g.thing(ctx, s.consumer.ID); err == nil {
		agent.Name, agent.Description, agent.Version = consumer.Title, consumer.Description, consumer.Version
		agent.Provider = aos.AgentProvider{Name: consumer.Vendor.Name, URL: consumer.Vendor.URL}
	} else {
		agent.Name = s.consumer.ID
	}
	agent.Tools = []aos.ToolDefinition{toolDefinition(th, action)}
	turn := m.CorrelationID
	if turn == "" {
		turn = m.MessageID
	}
	return aos.StepContext{
		Agent:     agent,
		Session:   aos.Session{ID: s.consumer.Session},
		TurnID:    turn,
		StepID:    m.MessageID,
		Timestamp: time.Now().UTC().Format(time.RFC3339Nano),
	}
}

func toolID(th *target.Thing, action string) string { return th.ID + "#" + action }

// toolDefinition describes an action as an AOS tool: the members of an object input are
// its arguments, any other input one argument named "input".
func toolDefinition(th *target.Thing, action string) aos.ToolDefinition {
	a := th.Actions[action]
	def := aos.ToolDefinition{ID: toolID(th, action), Name: action, Description: a.Description, Type: "lmos_action"}
	if def.Description == "" {
		def.Description = a.Title
	}
	var input schemaSummary
	if a.Input != nil && json.Unmarshal(a.Input.Raw(), &input) == nil {
		if input.Type == "object" {
			for _, name := range propertyNames(a.Input.Raw()) {
				p := input.Properties[name]
				def.Arguments = append(def.Arguments, aos.ToolArgumentDefinition{Name: name, Description: p.Description, Type: p.Type, Required: slices.Contains(input.Required, name)})
			}
		} else {
			def.Arguments = []aos.ToolArgumentDefinition{{Name: inputArgument, Description: input.Description, Type: input.Type, Required: true}}
		}
	}
	var output schemaSummary
	if a.Output != nil && json.Unmarshal(a.Output.Raw(), &output) == nil {
		def.Outputs = []aos.ToolOutputDefinition{{Name: "output", Description: output.Description, Type: output.Type}}
	}
	return def
}

// schemaSummary is what an AOS tool definition tells of a data schema.
type schemaSummary struct {
	Type        string                   `json:"type"`
	Description string                   `json:"description"`
	Properties  map[string]schemaSummary `json:"properties"`
	Required    []string                 `json:"required"`
}

// propertyNames lists the members of a schema's properties in document order.
func propertyNames(schema json.RawMessage) []string {
	members, _ := lmos.ObjectMembers(schema)
	for _, m := range members {
		if m.Name != "properties" {
			continue
		}
		properties, _ := lmos.ObjectMembers(m.Value)
		names := make([]string, len(properties))
		for i, p := range properties {
			names[i] = p.Name
		}
		return names
	}
	return nil
}

// toolInputs lists an invokeAction's input as AOS argument values: the members of an
// object, or the one value named "input".
func toolInputs(input json.RawMessage) []aos.ToolArgumentValue {
	inputs := []aos.ToolArgumentValue{}
	if input == nil {
		return inputs
	}
	members, isObject := lmos.ObjectMembers(input)
	if !isObject {
		return append(inputs, aos.ToolArgumentValue{Name: inputArgument, Value: input})
	}
	for _, m := range members {
		inputs = append(inputs, aos.ToolArgumentValue{Name: m.Name, Value: m.Value})
	}
	return inputs
}

// inputValue turns the guardian's argument values back into an action input of the shape
// the consumer sent.
func inputValue(inputs []aos.ToolArgumentValue, original json.RawMessage) json.RawMessage {
	if original != nil && !bytes.HasPrefix(bytes.TrimSpace(original), []byte("{")) {
		for _, in := range inputs {
			if in.Name == inputArgument {
				return in.Value
			}
		}
		return nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, in := range inputs {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(in.Name)
		b.Write(name)
		b.WriteByte(':')
		if in.Value == nil {
			b.WriteString("null")
		} else {
			b.Write(in.Value)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// reportResult tells the guardian how an action it let through ended.
func (g *Gateway) reportResult(call *guardedCall, m *lmos.Message) {
	ctx, cancel := context.WithTimeout(trace.ContextWithSpanContext(context.Background(), call.trace), g.cfg.GuardianTimeout)
	defer cancel()
	ctx, span := g.startGuardianCall(ctx, "steps/toolCallResult", "")
	var err error
	defer func() { endSpan(span, err) }()
	result := aos.ToolCallResult{Outputs: []aos.TextPart{}}
	switch b := m.Body.(type) {
	case *lmos.ActionStatus:
		result.IsError = b.Status != "completed"
		if b.Output != nil {
			result.Outputs = append(result.Outputs, aos.TextPart{Kind: "text", Text: outputText(b.Output)})
		}
	case *lmos.Error:
		result.IsError = true
		result.Outputs = append(result.Outputs, aos.TextPart{Kind: "text", Text: b.Title + ": " + b.Detail})
	}
	if _, err = g.cfg.Guardian.ToolCallResult(ctx, aos.ToolCallResultParams{Context: call.context, ExecutionID: call.execution, Result: result}); err != nil {
		g.log.Warn("gateway: reporting an action's result to the guardian", "execution", call.execution, "error", err)
	}
}

// failure is an error for reportResult that the gateway, not the Thing, produced.
func failure(status int, detail string) *lmos.Message {
	return &lmos.Message{Body: &lmos.Error{Title: http.StatusText(status), Detail: detail}}
}

// outputText is an output as text: a JSON string's content, any other value's JSON.
func outputText(output json.RawMessage) string {
	var s string
	if json.Unmarshal(output, &s) == nil {
		return s
	}
	return string(output)
}
