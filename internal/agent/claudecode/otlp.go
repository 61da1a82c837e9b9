package claudecode

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
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

// otlpLogs is the part of an OTLP/HTTP JSON ExportLogsServiceRequest
// lcwrap reads, decoded with encoding/json into these small structs: the
// protobuf JSON packages cost every run start-up (docs/design.md), this
// costs nothing until a payload comes.
type otlpLogs struct {
	ResourceLogs []struct {
		ScopeLogs []struct {
			LogRecords []otlpRecord `json:"logRecords"`
		} `json:"scopeLogs"`
	} `json:"resourceLogs"`
}

type otlpRecord struct {
	Body struct {
		StringValue string `json:"stringValue"`
	} `json:"body"`
	TraceID string `json:"traceId"`
	// Attributes are decoded only for a record lcwrap keeps.
	Attributes json.RawMessage `json:"attributes"`
}

type otlpAttr struct {
	Key   string    `json:"key"`
	Value otlpValue `json:"value"`
}

// otlpValue is an AnyValue of the scalar kinds; an int64 may come as a
// JSON number or, as protobuf's JSON mapping writes it, a string.
type otlpValue struct {
	StringValue *string         `json:"stringValue"`
	IntValue    json.RawMessage `json:"intValue"`
	DoubleValue *float64        `json:"doubleValue"`
}

func (v otlpValue) str() string {
	if v.StringValue != nil {
		return *v.StringValue
	}
	return ""
}

// int reads a count: an intValue (number or string), a doubleValue that is
// whole, or a stringValue of digits; negative or unreadable is 0.
func (v otlpValue) int() int64 {
	s := string(bytes.Trim(v.IntValue, `"`))
	switch {
	case s != "":
	case v.DoubleValue != nil:
		if f := *v.DoubleValue; f >= 0 && f < 1<<62 && f == float64(int64(f)) {
			return int64(f)
		}
		return 0
	case v.StringValue != nil:
		s = *v.StringValue
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func (v otlpValue) float() float64 {
	switch {
	case v.DoubleValue != nil:
		if f := *v.DoubleValue; f >= 0 && f < 1e12 {
			return f
		}
		return 0
	case len(v.IntValue) > 0:
		return float64(v.int())
	case v.StringValue != nil:
		if f, err := strconv.ParseFloat(*v.StringValue, 64); err == nil && f >= 0 && f < 1e12 {
			return f
		}
	}
	return 0
}

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
	var p otlpLogs
	if json.Unmarshal(body, &p) != nil {
		return nil, 0, false
	}
	for _, rl := range p.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			for i := range sl.LogRecords {
				r := &sl.LogRecords[i]
				if t, ok := telemetryOf(r); ok {
					recs = append(recs, t)
				} else {
					other++
				}
			}
		}
	}
	return recs, other, true
}

func telemetryOf(r *otlpRecord) (Telemetry, bool) {
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
	var attrs []otlpAttr
	if json.Unmarshal(r.Attributes, &attrs) != nil {
		return Telemetry{}, false
	}
	for _, a := range attrs {
		switch a.Key {
		case "session.id":
			t.Session = a.Value.str()
		case "agent_id":
			t.Agent = a.Value.str()
		case "prompt.id":
			t.Prompt = cut(a.Value.str(), 64)
		case "model":
			t.Model = cut(a.Value.str(), 64)
		case "input_tokens":
			t.Input = a.Value.int()
		case "output_tokens":
			t.Output = a.Value.int()
		case "cache_read_tokens":
			t.CacheRead = a.Value.int()
		case "cache_creation_tokens":
			t.CacheCreation = a.Value.int()
		case "cost_usd":
			t.CostUSD = a.Value.float()
		case "decision":
			t.Decision = cut(a.Value.str(), 32)
		case "source":
			t.DecisionSource = cut(a.Value.str(), 32)
		case "tool_name":
			t.Tool = cut(a.Value.str(), 64)
		case "tool_use_id":
			t.ToolUseID = cut(a.Value.str(), 80)
		}
	}
	if t.Session == "" || len(t.Session) > 256 || len(t.Agent) > 256 {
		return Telemetry{}, false
	}
	return t, true
}
