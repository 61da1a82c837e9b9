package claudecode

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
)

// OTLPPath is where the run's hook server takes Claude Code's OTLP logs.
const OTLPPath = agent.OTLPLogsPath

// MaxTelemetryQueue bounds the telemetry payloads waiting to be read; past
// it a payload is dropped and counted (the agent is never slowed).
const MaxTelemetryQueue = 256

// ViaOTLP names the evidence of every event made from telemetry.
const ViaOTLP = "OTLP " + EventAPIRequest

// userOTLP names the first variable by which the caller already exports
// Claude Code's telemetry ("" when none): lcwrap then leaves all of it
// alone.
func userOTLP(environ []string) string {
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if v == "" {
			continue
		}
		switch {
		case k == "CLAUDE_CODE_ENABLE_TELEMETRY", k == "OTEL_LOGS_EXPORTER",
			k == "OTEL_EXPORTER_OTLP_ENDPOINT", k == "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT":
			return k
		}
	}
	return ""
}

// telemetryEnv is the environment that makes Claude Code send its OTLP
// logs (http/json, every second) to url with the run's token, and no
// metrics.
func telemetryEnv(url, token string) []string {
	return []string{
		"CLAUDE_CODE_ENABLE_TELEMETRY=1",
		"OTEL_LOGS_EXPORTER=otlp",
		"OTEL_METRICS_EXPORTER=none",
		"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL=http/json",
		"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=" + url,
		"OTEL_EXPORTER_OTLP_LOGS_HEADERS=" + "X-Lcwrap-Token=" + token,
		"OTEL_EXPORTER_OTLP_LOGS_COMPRESSION=none",
		"OTEL_LOGS_EXPORT_INTERVAL=1000",
	}
}

// traceParent returns the TRACEPARENT the agent runs with, its trace id
// and whose it is: the caller's own when it is a valid one (passed on
// unchanged: the agent's spans become its children), else a new trace.
func traceParent(environ []string) (value, traceID, from string, add bool) {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "TRACEPARENT="); ok {
			if id, ok := traceIDOf(v); ok {
				return v, id, "user", false
			}
		}
	}
	b := make([]byte, 24)
	rand.Read(b)
	id := hex.EncodeToString(b[:16])
	return "00-" + id + "-" + hex.EncodeToString(b[16:]) + "-01", id, "lcwrap", true
}

// traceIDOf reads a W3C traceparent's trace id (version 00: 00-<32 hex>-<16
// hex>-<2 hex>, neither id all zeros).
func traceIDOf(v string) (string, bool) {
	p := strings.Split(strings.TrimSpace(v), "-")
	if len(p) < 4 || len(p[0]) != 2 || len(p[1]) != 32 || len(p[2]) != 16 || len(p[3]) != 2 || p[0] == "ff" {
		return "", false
	}
	for _, s := range p[:4] {
		if _, err := hex.DecodeString(s); err != nil || strings.ToLower(s) != s {
			return "", false
		}
	}
	if strings.Trim(p[1], "0") == "" || strings.Trim(p[2], "0") == "" {
		return "", false
	}
	return p[1], true
}

// usageKey names whose totals: a session (agent "") or one sub-agent.
type usageKey struct{ session, agent string }

// telemetry takes OTLP payloads from the hook server without ever
// blocking it (a full queue drops, counted) and turns them, on a goroutine
// of its own, into the agent's running totals per session and sub-agent
// and its permission decisions.
type telemetry struct {
	in *emit.Queue[[]byte] // bounded; full, it drops and counts
	// what the reader made of them (only the reader's goroutine writes):
	totals     map[usageKey]*agent.AgentTotals
	nRead      int64 // payloads read
	unreadable int64
}

func newTelemetry(t *agent.Tracker) *telemetry {
	q := &telemetry{totals: map[usageKey]*agent.AgentTotals{}}
	q.in = emit.NewQueue(MaxTelemetryQueue, nil, true, func(batch [][]byte) error {
		for _, b := range batch {
			q.read(t, b)
		}
		return nil
	})
	return q
}

// put queues one payload, or drops it when the queue is full.
func (q *telemetry) put(b []byte) { q.in.Put(b) }

// close reads what is queued and stops; call it once no put can come.
func (q *telemetry) close() { q.in.Close() }

// read records one payload: each decision as the agent's report of it, and
// the totals of every session and sub-agent it touched, once.
func (q *telemetry) read(t *agent.Tracker, b []byte) {
	recs, _, ok := ParseLogs(b)
	if !ok {
		q.unreadable++
		return
	}
	q.nRead++
	var touched []usageKey
	add := func(k usageKey, r *Telemetry) {
		u := q.totals[k]
		if u == nil {
			u = &agent.AgentTotals{ReportedBy: Source, Via: ViaOTLP}
			q.totals[k] = u
		}
		u.Requests++
		u.Input += r.Input
		u.Output += r.Output
		u.CacheRead += r.CacheRead
		u.CacheCreation += r.CacheCreation
		u.CostUSD += r.CostUSD
		if r.Model != "" {
			u.Model = r.Model
		}
		for _, o := range touched {
			if o == k {
				return
			}
		}
		touched = append(touched, k)
	}
	for i := range recs {
		r := &recs[i]
		switch r.Event {
		case "api_request":
			// A session's totals are all of its requests, its sub-agents'
			// included (as the agent's own cost total counts them).
			add(usageKey{r.Session, ""}, r)
			if r.Agent != "" {
				add(usageKey{r.Session, r.Agent}, r)
			}
		case "tool_decision":
			if r.Decision == "" {
				continue
			}
			t.Apply(agent.Observe(agent.Observation{Kind: agent.Note, Session: r.Session, Agent: r.Agent,
				Native: "OTLP " + EventToolDecision, Tool: r.Tool,
				Summary:  "permission for " + cmp.Or(r.Tool, "a tool") + ": " + r.Decision + ", decided by " + cmp.Or(r.DecisionSource, "(not said)"),
				Decision: &agent.AgentDecision{Decision: r.Decision, Source: r.DecisionSource, Tool: r.Tool, ToolUseID: r.ToolUseID}}))
		}
	}
	for _, k := range touched {
		u := *q.totals[k]
		u.Dropped = q.in.Dropped()
		t.Apply(agent.Observe(agent.Observation{Kind: agent.UsageReported, Session: k.session, Agent: k.agent, Native: ViaOTLP, Usage: &u}))
	}
}

// environ is the process's environment (a seam for tests).
var environ = os.Environ
