package event

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/redact"
)

// agentExamples builds one value of every agent shape from a few values.
func agentExamples(s1, s2 string, n int64, f float64, b bool) []Details {
	usage := &AgentUsage{Input: &n, Output: &n}
	return []Details{
		AgentEvent{},
		AgentEvent{Agent: s1, AgentID: s2, AgentType: s1, Claim: ClaimAgentReportedEnd, Evidence: s2, Limits: s1, Message: s2,
			Normalization: &Normalization{Count: n, Kind: s1, Outcome: s2}, Note: s1, Observation: "agent-report",
			Process: &AgentProcess{ChildID: s1, Exit: ExitCode(int(n & 0xff))}, Reason: s2,
			Reported: &Facts{Cwd: s1, ExitCode: &n, Interrupted: b, Usage: Counts{{Name: s2, N: n}},
				RolloutProof: &RolloutFacts{Chain: []int{1, 2}, Evidence: s1, Holder: HolderFacts{PID: 3, StartTime: n}, OwnSession: b, Rollout: s2, ThreadID: s1}},
			ReportedError: s2,
			SessionID:     s1, SessionSource: s2, Tool: s1, WaitingFor: s2, Wrapper: &Identity{PID: 3, StartTime: 4, Host: "host"}},
		AgentEvent{Normalization: &Normalization{Counts: IntMap{s1: int(n & 0xffff), "ignored:" + s2: 3}}},
		Created{Agent: &AgentLaunch{AddedArgs: []string{"--settings", s1}, AddedAt: 1, Agent: s2, Evidence: []string{s1}, MergedAt: n}, Command: Command{s1}, Profile: "launched", Wrapper: &Identity{PID: 7, StartTime: 9}},
		Terminal{Claim: ClaimExitStatusOnly, Exit: ExitCode(0),
			AgentOutputUnread:    &AgentOutputUnread{Bytes: n, Reason: s1},
			AgentReport:          &AgentReport{ReportedBy: s1, Via: s2, Subtype: s1, IsError: &b, NumTurns: &n, DurationMs: &f, TotalCostUSD: &f, Usage: usage, Results: 2, APIErrorStatus: s2},
			AgentSessions:        &AgentSessions{Sessions: []string{s1, s2}, Source: s1, Unattributed: IntMap{s2: 1}},
			HookRequestsRejected: IntMap{"missing or wrong token": 2}},
	}
}

// checkAgentDetails holds an agent shape's encoding to encoding/json's
// of the same struct, redacted as a decoded value.
func checkAgentDetails(t *testing.T, d Details) {
	t.Helper()
	got, err := MarshalDetails(d)
	if err != nil {
		t.Fatalf("%T: %v", d, err)
	}
	ref, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(ref))
	dec.UseNumber()
	var m any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	want, err := AppendValue(nil, redact.Value(m))
	if err != nil {
		t.Fatal(err)
	}
	var x, y any
	if json.Unmarshal(got, &x) != nil || json.Unmarshal(want, &y) != nil || !reflect.DeepEqual(x, y) {
		t.Fatalf("%T:\n got %s\nwant %s", d, got, want)
	}
}

func TestAgentDetailsMatchEncodingJSON(t *testing.T) {
	for _, d := range agentExamples("claude-code", "Bearer abcdefghijklmnop", 42, 0.00084, true) {
		checkAgentDetails(t, d)
	}
	for _, d := range agentExamples("", "x\"y\u2028", -1, 1e21, false) {
		checkAgentDetails(t, d)
	}
}

func FuzzAgentDetails(f *testing.F) {
	f.Add("claude-code", "PreToolUse", int64(3), 1.5, true)
	f.Fuzz(func(t *testing.T, s1, s2 string, n int64, x float64, b bool) {
		if x != x || x > 1e300 || x < -1e300 || !utf8.ValidString(s1+s2) {
			return // NaN and infinities are not JSON; the reference rewrites invalid UTF-8 twice
		}
		for _, d := range agentExamples(s1, s2, n, x, b) {
			checkAgentDetails(t, d)
		}
	})
}

// TestAgentCreatedDecodesAsCreated: a session's created details decode as
// a Created too (its wrapper is what reconciliation checks).
func TestAgentCreatedDecodesAsCreated(t *testing.T) {
	w := &Identity{PID: 9, StartTime: 10, Host: "h"}
	raw, err := MarshalDetails(AgentEvent{Agent: "claude-code", SessionID: "s", Wrapper: w})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := DecodeDetails[Created](raw)
	if !ok || c.Wrapper == nil || c.Wrapper.PID != 9 || c.Agent == nil || c.Agent.Agent != "claude-code" {
		t.Fatalf("%s decodes as %+v %v", raw, c, ok)
	}
}
