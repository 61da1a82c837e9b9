package claudecode

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/agent"
)

// Telemetry is one of Claude Code's OpenTelemetry log records that lcwrap
// reads (its "events", OTLP logs over http/json), cut down to what it
// keeps: an API request's model, tokens and cost, or a tool call's
// permission decision, with the ids that join it to the hooks. Prompt and
// response text (redacted by Claude Code anyway) and everything else are
// never decoded.
type Telemetry struct {
	// Event is the record's name without its prefix: "api_request",
	// "tool_decision".
	Event string
	// Session is session.id; Agent, agent_id (set for a sub-agent's
	// request); Prompt, prompt.id; TraceID, the record's trace id.
	Session, Agent, Prompt, TraceID string
	// api_request
	Model                                   string
	Input, Output, CacheRead, CacheCreation int64
	CostUSD                                 float64
	// tool_decision
	Decision, DecisionSource, Tool, ToolUseID string
}

// The records ParseLogs keeps, by their body (the event's full name).
const (
	EventAPIRequest   = "claude_code.api_request"
	EventToolDecision = "claude_code.tool_decision"
)

// ParseLogs reads one OTLP/HTTP JSON logs payload and returns the records
// lcwrap keeps, and how many records it left aside (other events, or
// records without a session) in a payload that has any it keeps (one
// without is only checked to be JSON). ok is false for a payload that is not one
// (not JSON, not UTF-8, over MaxPayload): it is counted, never guessed.
// It never fails otherwise.
func ParseLogs(body []byte) (recs []Telemetry, other int, ok bool) {
	if len(body) > MaxPayload || !utf8.Valid(body) {
		return nil, 0, false
	}
	if !bytes.Contains(body, []byte(EventAPIRequest)) && !bytes.Contains(body, []byte(EventToolDecision)) {
		// Nothing lcwrap keeps (most batches: prompts, responses, tool
		// results): not decoded at all, only checked to be JSON.
		if !json.Valid(body) {
			return nil, 0, false
		}
		return nil, 0, true
	}
	all, ok := agent.DecodeOTLPLogs(body, MaxPayload)
	if !ok {
		return nil, 0, false
	}
	for _, r := range all {
		if t, ok := telemetryOf(r); ok {
			recs = append(recs, t)
		} else {
			other++
		}
	}
	return recs, other, true
}

func telemetryOf(r *agent.OTLPRecord) (Telemetry, bool) {
	var t Telemetry
	switch r.Body.StringValue {
	case EventAPIRequest:
		t.Event = "api_request"
	case EventToolDecision:
		t.Event = "tool_decision"
	default:
		return t, false
	}
	t.TraceID = cut(r.TraceID, 32)
	attrs, ok := r.Attrs()
	if !ok {
		return Telemetry{}, false
	}
	for _, a := range attrs {
		switch a.Key {
		case "session.id":
			t.Session = a.Value.Str()
		case "agent_id":
			t.Agent = a.Value.Str()
		case "prompt.id":
			t.Prompt = cut(a.Value.Str(), 64)
		case "model":
			t.Model = cut(a.Value.Str(), 64)
		case "input_tokens":
			t.Input = a.Value.Int()
		case "output_tokens":
			t.Output = a.Value.Int()
		case "cache_read_tokens":
			t.CacheRead = a.Value.Int()
		case "cache_creation_tokens":
			t.CacheCreation = a.Value.Int()
		case "cost_usd":
			t.CostUSD = a.Value.Float()
		case "decision":
			t.Decision = cut(a.Value.Str(), 32)
		case "source":
			t.DecisionSource = cut(a.Value.Str(), 32)
		case "tool_name":
			t.Tool = cut(a.Value.Str(), 64)
		case "tool_use_id":
			t.ToolUseID = cut(a.Value.Str(), 80)
		}
	}
	if t.Session == "" || len(t.Session) > 256 || len(t.Agent) > 256 {
		return Telemetry{}, false
	}
	return t, true
}
