package aos

import "encoding/json"

// Agent describes the agent whose step the guardian is judging. The spec's
// mcpServers and resources members are not modeled: the gateway relays
// actions and neither hosts MCP servers nor exposes resources.
type Agent struct {
	Name         string           `json:"name"`
	ID           string           `json:"id"`
	Description  string           `json:"description,omitempty"`
	Instructions string           `json:"instructions"`
	Version      string           `json:"version"`
	Provider     AgentProvider    `json:"provider"`
	Model        *Model           `json:"model,omitempty"`
	Tools        []ToolDefinition `json:"tools,omitempty"`
	Organization *Organization    `json:"organization,omitempty"`
	Metadata     map[string]any   `json:"metadata,omitempty"`
}

// AgentProvider is the organization or entity that provides an agent.
type AgentProvider struct {
	Name     string         `json:"name"`
	URL      string         `json:"url"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Model is the LLM behind an agent.
type Model struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	// Provider is the spec's LlmProvider object, left unnamed because the
	// gateway fronts tools rather than an LLM and rarely has one to describe.
	Provider struct {
		Name     string         `json:"name"`
		Metadata map[string]any `json:"metadata,omitempty"`
	} `json:"provider"`
	MaxTokens     int            `json:"maxTokens,omitempty"`
	ContextWindow int            `json:"contextWindow,omitempty"`
	StopSequences []string       `json:"stopSequences,omitempty"`
	DefaultParams map[string]any `json:"defaultParams,omitempty"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

// ToolDefinition describes a tool available to an agent. Arguments and
// Outputs are required members whose value may be null, so nil slices are
// written as null rather than left out.
type ToolDefinition struct {
	Name        string                   `json:"name"`
	ID          string                   `json:"id"`
	Description string                   `json:"description,omitempty"`
	Type        string                   `json:"type"`
	Arguments   []ToolArgumentDefinition `json:"arguments"`
	Outputs     []ToolOutputDefinition   `json:"outputs"`
	Metadata    map[string]any           `json:"metadata,omitempty"`
}

// ToolArgumentDefinition describes one argument a tool accepts.
type ToolArgumentDefinition struct {
	Name        string `json:"name"`
	ID          string `json:"id,omitempty"`
	Description string `json:"description,omitempty"`
	Type        string `json:"type,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
	Required    bool   `json:"required"`
}

// ToolOutputDefinition describes one output a tool produces.
type ToolOutputDefinition struct {
	Name        string `json:"name"`
	ID          string `json:"id,omitempty"`
	Description string `json:"description,omitempty"`
	Type        string `json:"type,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// textKind is the only value the kind member of a TextPart may take.
const textKind = "text"

// TextPart is a piece of plain text.
type TextPart struct {
	// Kind is always "text"; an empty Kind is written as "text".
	Kind     string         `json:"kind"`
	Text     string         `json:"text"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// MarshalJSON writes an unset Kind as "text": the member is a literal in the
// spec, and a part built as TextPart{Text: ...} should not go out invalid.
func (p TextPart) MarshalJSON() ([]byte, error) {
	type plain TextPart
	if p.Kind == "" {
		p.Kind = textKind
	}
	return json.Marshal(plain(p))
}

// StepContext places a step in its agent, session and turn.
type StepContext struct {
	Agent     Agent   `json:"agent"`
	Session   Session `json:"session"`
	TurnID    string  `json:"turnId"`
	StepID    string  `json:"stepId"`
	Timestamp string  `json:"timestamp"`
	User      *User   `json:"user,omitempty"`
}

// Session is the interaction a step belongs to.
type Session struct {
	ID       string         `json:"id"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// User is the person on whose behalf the agent acts.
type User struct {
	ID           string         `json:"id"`
	Name         string         `json:"name,omitempty"`
	Email        string         `json:"email,omitempty"`
	Organization Organization   `json:"organization"`
	Metadata     map[string]any `json:"metadata,omitempty"`
}

// Organization is the organization an agent or a user belongs to.
type Organization struct {
	ID       string         `json:"id"`
	Name     string         `json:"name,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// ToolCallRequest is a tool call the agent is about to make. Inputs is a
// required array, so nil is written as [] rather than null.
type ToolCallRequest struct {
	ExecutionID string              `json:"executionId"`
	ToolID      string              `json:"toolId"`
	Inputs      []ToolArgumentValue `json:"inputs"`
}

// MarshalJSON writes nil Inputs as an empty array, which the spec allows,
// where null is not.
func (r ToolCallRequest) MarshalJSON() ([]byte, error) {
	type plain ToolCallRequest
	if r.Inputs == nil {
		r.Inputs = []ToolArgumentValue{}
	}
	return json.Marshal(plain(r))
}

// ToolArgumentValue is the value given to one tool argument. A nil Value is
// written as null.
type ToolArgumentValue struct {
	Name  string          `json:"name"`
	ID    string          `json:"id,omitempty"`
	Value json.RawMessage `json:"value"`
}

// ToolCallResult is the outcome of a tool call. Outputs is a required array,
// so nil is written as [] rather than null.
type ToolCallResult struct {
	Outputs []TextPart `json:"outputs"`
	IsError bool       `json:"isError"`
}

// MarshalJSON writes nil Outputs as an empty array, which the spec allows for
// a tool without output, where null is not.
func (r ToolCallResult) MarshalJSON() ([]byte, error) {
	type plain ToolCallResult
	if r.Outputs == nil {
		r.Outputs = []TextPart{}
	}
	return json.Marshal(plain(r))
}

// ToolCallRequestParams are the params of steps/toolCallRequest.
type ToolCallRequestParams struct {
	Context         StepContext     `json:"context"`
	ToolCallRequest ToolCallRequest `json:"toolCallRequest"`
	Reasoning       string          `json:"reasoning,omitempty"`
}

// ToolCallResultParams are the params of steps/toolCallResult.
type ToolCallResultParams struct {
	Context     StepContext    `json:"context"`
	ExecutionID string         `json:"executionId"`
	Result      ToolCallResult `json:"result"`
}

// PingParams are the params of ping. Timeout is in milliseconds.
type PingParams struct {
	Timestamp string         `json:"timestamp"`
	Timeout   int            `json:"timeout,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// PingResult is a guardian's answer to ping.
type PingResult struct {
	Status    string         `json:"status"`
	Version   string         `json:"version"`
	Timestamp string         `json:"timestamp"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}
