package claudecode_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/anthropicmock"
	"github.com/lcwrap/lcwrap/internal/event"
)

// TestPrintModeTelemetry: under lcwrap, claude -p sends its OTLP logs to
// the run's hook server; each session and sub-agent gets the agent's
// running totals (tokens checked against the mock's usage fields, the
// cost against the agent's own result message), status shows them, each
// permission decision says who decided, and the run's trace id is the one
// given in TRACEPARENT (the caller's own, as the parent, when set).
func TestPrintModeTelemetry(t *testing.T) {
	w := newWorld(t)
	const userTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	w.env = append(w.env, "TRACEPARENT=00-"+userTrace+"-00f067aa0ba902b7-01")
	out, errs, code := w.run(lcwrap(t), "--", "claude", "-p", anthropicmock.ScenarioBoth+" go",
		"--allowedTools", "Bash", "Agent", "--output-format", "stream-json", "--verbose")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var resultCost float64
	for _, l := range strings.Split(out, "\n") {
		var m struct {
			Type string  `json:"type"`
			Cost float64 `json:"total_cost_usd"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Type == "result" {
			resultCost = m.Cost
		}
	}
	proc, session, sub := tree(t, w.status())
	totals := map[string]*agent.AgentTotals{}
	var decisions []agent.AgentDecision
	var created event.Event
	for _, ev := range w.events() {
		d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details)
		if d.Usage != nil {
			if ev.Kind != event.KindDiagnostic {
				t.Fatalf("usage on a %s event", ev.Kind)
			}
			totals[ev.ChildID] = d.Usage
		}
		if d.Decision != nil {
			decisions = append(decisions, *d.Decision)
		}
		if ev.ChildID == proc.ChildID && ev.Kind == event.KindCreated {
			created = ev
		}
	}
	s, a := totals[session.ChildID], totals[sub.ChildID]
	if s == nil || a == nil {
		t.Fatalf("no totals for the session (%v) or the sub-agent (%v)", s, a)
	}
	for _, u := range []*agent.AgentTotals{s, a} {
		if u.Requests < 1 || u.Input != u.Requests*anthropicmock.InputTokens || u.Output != u.Requests*anthropicmock.OutputTokens || u.ReportedBy != "claude-code" || u.CostUSD <= 0 {
			t.Fatalf("totals %+v: want %d input and %d output tokens a request", u, anthropicmock.InputTokens, anthropicmock.OutputTokens)
		}
	}
	if a.Requests >= s.Requests {
		t.Fatalf("the session's totals (%d requests) must include its sub-agent's (%d) and its own", s.Requests, a.Requests)
	}
	if math.Abs(s.CostUSD-resultCost) > 1e-9 {
		t.Fatalf("the session's cost %v differs from the agent's result message's %v", s.CostUSD, resultCost)
	}
	tools := map[string]string{}
	for _, d := range decisions {
		tools[d.Tool] = d.Decision + "/" + d.Source
	}
	if tools["Bash"] != "accept/config" || tools["Agent"] != "accept/config" {
		t.Fatalf("decisions %+v", decisions)
	}
	cd, _ := event.DecodeDetails[launchedCreated](created.Details)
	if cd.Agent == nil || cd.Agent.TraceID != userTrace || cd.Agent.TraceFrom != "user" {
		t.Fatalf("trace: %s", created.Details)
	}
	// status --json carries the session's totals.
	sout, _, _ := w.run(lcwrap(t), "status", "--all", "--json")
	var st struct {
		Children []struct {
			ChildID string `json:"childId"`
			Agent   *struct {
				Usage *struct {
					Requests int64   `json:"requests"`
					CostUSD  float64 `json:"costUsd"`
				} `json:"usage"`
			} `json:"agent"`
		} `json:"children"`
	}
	json.Unmarshal([]byte(sout), &st)
	for _, c := range st.Children {
		if c.ChildID == session.ChildID && (c.Agent == nil || c.Agent.Usage == nil || c.Agent.Usage.Requests != s.Requests) {
			t.Fatalf("status shows the session's usage as %+v", c.Agent)
		}
	}
	table, _, _ := w.run(lcwrap(t), "status", "--all")
	if !strings.Contains(table, "≈$") {
		t.Fatalf("status's table shows no cost:\n%s", table)
	}
}
