package gemini

import (
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/hookhttp"
)

// The OTLP log records lcwrap keeps, by their event.name attribute (Gemini
// CLI 0.61.0: the body is a sentence). The tokens are in the response's
// record, not the request's.
const (
	EventAPIResponse = "gemini_cli.api_response"
	EventToolCall    = "gemini_cli.tool_call"
)

// ViaOTLP names the evidence of the totals made from telemetry.
const ViaOTLP = "OTLP " + EventAPIResponse

// MaxTelemetryPayload bounds one telemetry payload that is read.
const MaxTelemetryPayload = 4 << 20

// MaxTelemetryQueue bounds the payloads waiting to be read; past it a
// payload is dropped and counted (the agent is never slowed).
const MaxTelemetryQueue = 256

// Telemetry is one of Gemini CLI's OTLP log records lcwrap reads, cut
// down to what it keeps: a model response's tokens, a tool call's
// permission decision, or a sub-agent's start or finish. Prompts, responses and tool arguments are never
// decoded (and lcwrap asks for none: GEMINI_TELEMETRY_LOG_PROMPTS=false).
type Telemetry struct {
	// Event: "api_response" or "tool_call".
	Event   string
	Session string
	// api_response
	Model                                       string
	Input, Output, Cached, Thoughts, ToolTokens int64
	// Agent is the sub-agent a response or tool call came from (its
	// prompt_id names it), "" for the session's own.
	Agent string
	// agent_start, agent_finish: the sub-agent's id and name, and how it
	// ended as Gemini says (GOAL, ERROR, TIMEOUT, MAX_TURNS, ABORTED, …).
	AgentID, AgentName, TerminateReason string
	// tool_call: Decision is Gemini's (accept, auto_accept, modify,
	// reject; "" when none was asked); ToolCallOK is Gemini's own word that
	// the tool call returned without an error — about one call, never the
	// task, and not recorded: it is read, then left unused.
	Tool, Decision string
	ToolCallOK     bool
}

// attrToolCallOK is the tool_call attribute Gemini sets when the call
// returned without an error (its own account of one call).
const attrToolCallOK = "success"

// ParseTelemetry reads one OTLP/HTTP JSON logs payload and returns the
// records lcwrap keeps; ok is false for a payload that is not one (not
// JSON, not UTF-8, too large): counted, never guessed. One with nothing
// lcwrap keeps is only checked to be JSON.
func ParseTelemetry(body []byte) (recs []Telemetry, ok bool) {
	if !bytes.Contains(body, []byte(EventAPIResponse)) && !bytes.Contains(body, []byte(EventToolCall)) && !bytes.Contains(body, []byte("gemini_cli.agent.")) {
		return nil, len(body) <= MaxTelemetryPayload && json.Valid(body)
	}
	all, ok := agent.DecodeOTLPLogs(body, MaxTelemetryPayload)
	if !ok {
		return nil, false
	}
	for _, r := range all {
		if t, ok := telemetryOf(r); ok {
			recs = append(recs, t)
		}
	}
	return recs, true
}

func telemetryOf(r *agent.OTLPRecord) (Telemetry, bool) {
	var t Telemetry
	attrs, ok := r.Attrs()
	if !ok {
		return t, false
	}
	for _, a := range attrs {
		v := a.Value
		switch a.Key {
		case "event.name":
			t.Event = v.Str()
		case "session.id":
			t.Session = v.Str()
		case "model":
			t.Model = event.CutRunes(v.Str(), 64)
		case "input_token_count":
			t.Input = v.Int()
		case "output_token_count":
			t.Output = v.Int()
		case "cached_content_token_count":
			t.Cached = v.Int()
		case "thoughts_token_count":
			t.Thoughts = v.Int()
		case "tool_token_count":
			t.ToolTokens = v.Int()
		case "function_name":
			t.Tool = event.CutRunes(v.Str(), 64)
		case "decision":
			t.Decision = event.CutRunes(v.Str(), 32)
		case "prompt_id":
			t.Agent = agentOfPrompt(v.Str())
		case "agent_id":
			t.AgentID = v.Str()
		case "agent_name":
			t.AgentName = event.CutRunes(v.Str(), 64)
		case "terminate_reason":
			t.TerminateReason = event.CutRunes(v.Str(), 64)
		case attrToolCallOK:
			t.ToolCallOK = v.BoolValue != nil && *v.BoolValue
		}
	}
	switch t.Event {
	case EventAPIResponse:
		t.Event = "api_response"
	case EventToolCall:
		t.Event = "tool_call"
	case EventAgentStart:
		t.Event = "agent_start"
	case EventAgentFinish:
		t.Event = "agent_finish"
	default:
		return Telemetry{}, false
	}
	if t.Event == "agent_start" || t.Event == "agent_finish" {
		if !agent.PlainID(t.AgentID) {
			return Telemetry{}, false
		}
	}
	if t.Agent == t.Session {
		t.Agent = ""
	}
	if t.Session == "" || len(t.Session) > 256 {
		return Telemetry{}, false
	}
	return t, true
}

// telemetry takes the payloads from the hook server without ever blocking
// it (a full queue drops, counted) and turns them, on a goroutine of its
// own, into Gemini's running totals per session and its decisions.
type telemetry struct {
	in  *emit.Queue[[]byte] // bounded; full, it drops and counts
	sub *subagents
	// only the reader's goroutine writes these:
	totals     map[string]*agent.AgentTotals
	nRead      int64 // payloads read
	unreadable int64
}

func newTelemetry(t *agent.Tracker, sub *subagents) *telemetry {
	q := &telemetry{totals: map[string]*agent.AgentTotals{}, sub: sub}
	q.in = emit.NewQueue(MaxTelemetryQueue, nil, true, func(batch [][]byte) error {
		for _, b := range batch {
			q.read(t, b)
		}
		return nil
	})
	return q
}

func (q *telemetry) put(b []byte) { q.in.Put(b) }

// close reads what is queued and stops; call it once no put can come.
func (q *telemetry) close() { q.in.Close() }

// read records one payload: each decision as Gemini's report of it, and
// the totals of every session it touched, once.
func (q *telemetry) read(t *agent.Tracker, b []byte) {
	recs, ok := ParseTelemetry(b)
	if !ok {
		q.unreadable++
		return
	}
	q.nRead++
	var touched []string
	for i := range recs {
		r := &recs[i]
		switch r.Event {
		case "api_response":
			u := q.totals[r.Session]
			if u == nil {
				if len(q.totals) >= 1024 {
					continue
				}
				u = &agent.AgentTotals{ReportedBy: Source, Via: ViaOTLP, CostUnknown: true}
				q.totals[r.Session] = u
			}
			u.Requests++
			u.Input += r.Input
			u.Output += r.Output
			u.CacheRead += r.Cached
			if r.Model != "" {
				u.Model = r.Model
			}
			if !containsString(touched, r.Session) {
				touched = append(touched, r.Session)
			}
		case "tool_call":
			if r.Decision == "" {
				continue
			}
			// On the session, as the call's hooks are (its telemetry comes
			// in batches, whenever: on the sub-agent it would land or not
			// by the batch's time); the sub-agent is named.
			var by string
			if r.Agent != "" {
				by = " (its sub-agent " + r.Agent[:min(8, len(r.Agent))] + ")"
			}
			t.Apply(agent.Observe(agent.Observation{Kind: agent.Note, Session: r.Session,
				Native: "OTLP " + EventToolCall, Tool: r.Tool,
				Summary:  "permission for " + cmp.Or(r.Tool, "a tool") + by + ": " + r.Decision + ", decided by (gemini does not say who)",
				Decision: &agent.AgentDecision{Decision: r.Decision, Tool: r.Tool}}))
		case "agent_start", "agent_finish":
			q.sub.telemetry(*r)
		}
	}
	for _, s := range touched {
		u := *q.totals[s]
		u.Dropped = q.in.Dropped()
		t.Apply(agent.Observe(agent.Observation{Kind: agent.UsageReported, Session: s, Native: ViaOTLP, Usage: &u}))
	}
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// discard takes Gemini's OTLP metrics and traces, which lcwrap does not
// read: they are answered so that its exporter never retries.
func discard([]byte) {}

// telemetryRoutes are the routes of the run's hook server for q.
func telemetryRoutes(q *telemetry) hookhttp.Routes {
	return hookhttp.Routes{agent.OTLPLogsPath: q.put, "/v1/metrics": discard, "/v1/traces": discard}
}

// telemetryEnv makes Gemini CLI send its telemetry for this run, OTLP
// over http (JSON), to base (http://127.0.0.1:PORT; it adds /v1/logs,
// /v1/metrics, /v1/traces) with the run's token, and no prompt text.
// Environment variables rank above every settings file (0.61.0), so this
// works for any user, root or not.
func telemetryEnv(base, token string) []string {
	h := hookhttp.TokenHeader + "=" + token
	return []string{
		"GEMINI_TELEMETRY_ENABLED=true",
		"GEMINI_TELEMETRY_TARGET=local",
		"GEMINI_TELEMETRY_OTLP_ENDPOINT=" + base,
		"GEMINI_TELEMETRY_OTLP_PROTOCOL=http",
		"GEMINI_TELEMETRY_LOG_PROMPTS=false",
		"GEMINI_TELEMETRY_USE_COLLECTOR=false",
		"OTEL_EXPORTER_OTLP_LOGS_HEADERS=" + h,
		"OTEL_EXPORTER_OTLP_METRICS_HEADERS=" + h,
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS=" + h,
	}
}

// userTelemetry names where the user already configures Gemini CLI's
// telemetry ("" when nowhere lcwrap looks): a flag, a variable, or a
// settings file that mentions telemetry. lcwrap then leaves all of it
// alone. (A file is read, never written; one that cannot be read counts
// as configured: lcwrap would rather not see than override.)
func userTelemetry(args, environ []string, home, cwd string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--telemetry") {
			return "the flag " + event.CutRunes(strings.SplitN(a, "=", 2)[0], 40)
		}
	}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if v == "" {
			continue
		}
		if strings.HasPrefix(k, "GEMINI_TELEMETRY_") || k == "OTEL_EXPORTER_OTLP_ENDPOINT" || k == "OTEL_EXPORTER_OTLP_HEADERS" || k == "OTEL_EXPORTER_OTLP_LOGS_HEADERS" {
			return "$" + k
		}
	}
	sys := os.Getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
	if sys == "" {
		sys = "/etc/gemini-cli/settings.json"
	}
	files := []string{sys, os.Getenv(EnvSystemDefaults), defaultSystemDefaults}
	if h := os.Getenv("GEMINI_CLI_HOME"); h != "" {
		home = h
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gemini", "settings.json"))
	}
	if cwd != "" {
		files = append(files, filepath.Join(cwd, ".gemini", "settings.json"))
	}
	for _, f := range files {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			return f + " (unreadable)"
		}
		if bytes.Contains(b, []byte(`"telemetry"`)) {
			return f
		}
	}
	return ""
}
