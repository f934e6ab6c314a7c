package aos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The decisions a guardian may take on a step.
const (
	DecisionAllow  = "allow"
	DecisionDeny   = "deny"
	DecisionModify = "modify"
)

// Decision is a guardian's AOSSuccessResult.
type Decision struct {
	Decision        string          `json:"decision"` // DecisionAllow, DecisionDeny or DecisionModify
	Reasoning       string          `json:"reasoning,omitempty"`
	ReasonCode      []string        `json:"reasonCode,omitempty"`
	Message         string          `json:"message"`
	Data            map[string]any  `json:"data,omitempty"`
	ModifiedRequest json.RawMessage `json:"modifiedRequest,omitempty"`
}

// ModifiedInputs returns the tool inputs a modify decision replaces the
// requested ones with.
//
// The spec types modifiedRequest only as "AOSRequest", and guardians fill it
// in one of three ways, tried in this order: a whole JSON-RPC request
// ({"params":{"toolCallRequest":{"inputs":[...]}}}), the params of one
// ({"toolCallRequest":{"inputs":[...]}}), or just the tool call
// ({"inputs":[...]}). It is an error if the decision is not modify, if no
// shape matches, or if inputs is not an array of argument values each with a
// name and a value.
func (d Decision) ModifiedInputs() ([]ToolArgumentValue, error) {
	if d.Decision != DecisionModify {
		return nil, fmt.Errorf("aos: the decision is %q, not %q", d.Decision, DecisionModify)
	}
	if len(d.ModifiedRequest) == 0 {
		return nil, errors.New("aos: the modify decision has no modifiedRequest")
	}
	raw, ok := findInputs(d.ModifiedRequest)
	if !ok {
		return nil, errors.New("aos: modifiedRequest holds no inputs at params.toolCallRequest.inputs, toolCallRequest.inputs or inputs")
	}
	return decodeInputs(raw)
}

// findInputs returns the inputs member of the first of the accepted shapes
// that modifiedRequest has.
func findInputs(modified json.RawMessage) (json.RawMessage, bool) {
	paths := [][]string{
		{"params", "toolCallRequest", "inputs"},
		{"toolCallRequest", "inputs"},
		{"inputs"},
	}
	for _, path := range paths {
		if v, ok := lookup(modified, path); ok {
			return v, true
		}
	}
	return nil, false
}

// lookup follows path through nested JSON objects. A member that is not an
// object where the path goes on counts as missing.
func lookup(v json.RawMessage, path []string) (json.RawMessage, bool) {
	for _, name := range path {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(v, &obj); err != nil || obj == nil {
			return nil, false
		}
		if v = obj[name]; v == nil {
			return nil, false
		}
	}
	return v, true
}

func decodeInputs(raw json.RawMessage) ([]ToolArgumentValue, error) {
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		return nil, fmt.Errorf("aos: the modified inputs are not an array: %s", raw)
	}
	var inputs []ToolArgumentValue
	if err := json.Unmarshal(raw, &inputs); err != nil {
		return nil, fmt.Errorf("aos: the modified inputs are not tool argument values: %w", err)
	}
	for i, in := range inputs {
		if in.Name == "" {
			return nil, fmt.Errorf("aos: modified input %d has no name", i)
		}
		// A JSON null value decodes to the bytes "null", so nil means the
		// member was left out.
		if in.Value == nil {
			return nil, fmt.Errorf("aos: modified input %q has no value", in.Name)
		}
	}
	return inputs, nil
}
