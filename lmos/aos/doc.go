// Package aos is a client for guardian agents of the Agent Observability
// Standard (AOS). An AOS guardian watches what an agent is about to do and
// answers each step with a decision: allow it, deny it, or modify it. Requests
// and answers are JSON-RPC 2.0 over HTTP POST.
//
// The gateway uses a guardian around tool invocations only, so this package
// covers the steps/toolCallRequest method (asked before an action is relayed),
// steps/toolCallResult (reported once it completes), ping (to tell whether the
// guardian is alive), and the data objects those methods carry. Messages,
// knowledge, memory, A2A and MCP steps are left out.
//
// Every answer that cannot be trusted as a guardian's decision (the guardian
// is unreachable, too slow, answers with an HTTP error or with something that
// is not a JSON-RPC response to the request sent) is reported as an error
// wrapping [ErrUnavailable], so that callers can apply a single fail-open or
// fail-closed policy to all of them. A JSON-RPC error the guardian returns on
// purpose is an [*RPCError] instead.
package aos
