package agent

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/event/eventtest"
)

// agentExamples builds one value of every agent shape from a few values,
// and the created and terminal details of a launched process that carry
// agent members (event.Created's and event.Terminal's Extra).
func agentExamples(s1, s2 string, n int64, f float64, b bool) []event.Details {
	usage := &AgentUsage{Input: &n, Output: &n}
	var created, terminal event.Members
	event.SetPtr(&created, KeyAgent, &AgentLaunch{AddedArgs: []string{"--settings", s1}, AddedAt: 1, Agent: s2, Evidence: []string{s1}, MergedAt: n})
	event.SetPtr(&terminal, KeyAgentOutputUnread, &AgentOutputUnread{Bytes: n, Reason: s1})
	event.SetPtr(&terminal, KeyAgentReport, &AgentReport{ReportedBy: s1, Via: s2, Subtype: s1, IsError: &b, NumTurns: &n, DurationMs: &f, TotalCostUSD: &f, Usage: usage, Results: 2, APIErrorStatus: s2})
	event.SetPtr(&terminal, KeyAgentSessions, &AgentSessions{Sessions: []string{s1, s2}, Source: s1, Unattributed: IntMap{s2: 1}})
	terminal.Set(KeyHookRequestsRejected, IntMap{"missing or wrong token": 2})
	return []event.Details{
		AgentEvent{},
		AgentEvent{Agent: s1, AgentID: s2, AgentType: s1, Claim: ClaimAgentReportedEnd, Evidence: s2, Limits: s1, Message: s2,
			Normalization: &Normalization{Count: n, Kind: s1, Outcome: s2}, Note: s1, Observation: "agent-report",
			Process: &AgentProcess{ChildID: s1, Exit: event.ExitCode(int(n & 0xff))}, Reason: s2,
			Reported: &Facts{Cwd: s1, ExitCode: &n, Interrupted: b, Usage: NamedCounts{{Name: s2, N: n}},
				RolloutProof: &RolloutFacts{Chain: []int{1, 2}, Evidence: s1, Holder: HolderFacts{PID: 3, StartTime: n}, OwnSession: b, Rollout: s2, ThreadID: s1}},
			ReportedError: s2,
			SessionID:     s1, SessionSource: s2, Tool: s1, WaitingFor: s2, Wrapper: &event.Identity{PID: 3, StartTime: 4, Host: "host"}},
		AgentEvent{Normalization: &Normalization{Counts: IntMap{s1: int(n & 0xffff), "ignored:" + s2: 3}}},
		event.Created{Extra: created, Command: event.Command{s1}, Profile: "launched", Wrapper: &event.Identity{PID: 7, StartTime: 9}},
		event.Terminal{Claim: event.ClaimExitStatusOnly, Exit: event.ExitCode(0), Extra: terminal},
	}
}

func TestAgentDetailsRoundTrip(t *testing.T) {
	for _, d := range agentExamples("claude-code", "Bearer abcdefghijklmnop", 42, 0.00084, true) {
		eventtest.RoundTrip(t, d)
	}
	for _, d := range agentExamples("", "x\"y\u2028", -1, 1e21, false) {
		eventtest.RoundTrip(t, d)
	}
}

func FuzzAgentDetails(f *testing.F) {
	f.Add("claude-code", "PreToolUse", int64(3), 1.5, true)
	f.Fuzz(func(t *testing.T, s1, s2 string, n int64, x float64, b bool) {
		if x != x || x > 1e300 || x < -1e300 || !utf8.ValidString(s1+s2) {
			return // NaN and infinities are not JSON; the reference rewrites invalid UTF-8 twice
		}
		for _, d := range agentExamples(s1, s2, n, x, b) {
			eventtest.RoundTrip(t, d)
		}
	})
}

// TestAgentCreatedDecodesAsCreated: a session's created details decode as
// a Created too (its wrapper is what reconciliation checks), and its agent
// name as the agent member.
func TestAgentCreatedDecodesAsCreated(t *testing.T) {
	w := &event.Identity{PID: 9, StartTime: 10, Host: "h"}
	raw, err := event.MarshalDetails(AgentEvent{Agent: "claude-code", SessionID: "s", Wrapper: w})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := event.DecodeDetails[struct {
		event.Created
		CreatedMembers
	}](raw)
	if !ok || c.Wrapper == nil || c.Wrapper.PID != 9 || c.Agent == nil || c.Agent.Agent != "claude-code" {
		t.Fatalf("%s decodes as %+v %v", raw, c, ok)
	}
}

// oldFacts is the map an agent source used to build as an observation's
// facts (agent.Observation.Facts), from the claudecode and codex writers
// as they were: strings only when not empty, codex's usage counts by
// name, the rollout proof as codex.Proof.Facts built it.
func oldFacts(f Facts) map[string]any {
	m := map[string]any{}
	for k, v := range map[string]string{
		"cliVersion": f.CLIVersion, "cwd": f.Cwd, "kind": f.Kind, "model": f.Model, "notification": f.Notification,
		"originator": f.Originator, "permissionMode": f.PermissionMode, "reason": f.Reason, "registry": f.Registry,
		"status": f.Status, "toolUseId": f.ToolUseID, "transcript": f.Transcript, "version": f.Version,
	} {
		if v != "" {
			m[k] = v
		}
	}
	if f.BackgroundTasksRunning != 0 {
		m["backgroundTasksRunning"] = int(f.BackgroundTasksRunning)
	}
	if f.DurationMs != nil {
		m["durationMs"] = *f.DurationMs
	}
	if f.Error != nil {
		m["error"] = *f.Error
	}
	if f.ExitCode != nil {
		m["exitCode"] = int(*f.ExitCode)
	}
	if f.Interrupted {
		m["interrupted"] = true
	}
	if len(f.Usage) > 0 {
		u := map[string]any{}
		for _, c := range f.Usage {
			u[c.Name] = c.N
		}
		m["usage"] = u
	}
	if p := f.RolloutProof; p != nil {
		chain := make([]any, len(p.Chain))
		for i, pid := range p.Chain {
			chain[i] = pid
		}
		m["rolloutProof"] = map[string]any{
			"rollout": p.Rollout, "threadId": p.ThreadID, "chain": chain, "ownSession": p.OwnSession,
			"holder":   map[string]any{"pid": p.Holder.PID, "startTime": p.Holder.StartTime},
			"evidence": p.Evidence,
		}
	}
	return m
}

// factsExamples builds Facts with every member from a few strings and
// numbers (from the core's differential test, where Facts lived).
func factsExamples(s1, s2, s3 string, n1, n2 int64, b bool) []Facts {
	id := event.Identity{PID: int(n1 & 0xffff), StartTime: uint64(n2) & (1<<40 - 1), BootID: "b-1", Host: "host"}
	var usage NamedCounts // codex's usage: known names and ones it keeps as given
	usage.Set("output", n2)
	usage.Set(s1, n1)
	usage.Set("input", n1)
	usage.Set(s2, n2)
	usage.Set("secret", 5)
	usage.Set(s3, 7)
	return []Facts{
		{},
		{Cwd: s1, Model: s2, Transcript: s3, PermissionMode: s1},
		{ToolUseID: s1, Interrupted: b},
		{Notification: s2, BackgroundTasksRunning: n1},
		{Cwd: s1, Version: s2, Kind: s3, Registry: s1},
		{DurationMs: &n1, Reason: s1},
		{Error: &s2},
		{Status: s3, ExitCode: &n2},
		{Usage: usage},
		{Originator: s1, CLIVersion: s2, RolloutProof: &RolloutFacts{Chain: []int{id.PID, int(n1 & 0xff)}, Evidence: "open-file-descriptor",
			Holder: HolderFacts{PID: id.PID, StartTime: int64(id.StartTime)}, OwnSession: b, Rollout: s3, ThreadID: s1}},
		{RolloutProof: &RolloutFacts{Chain: []int{}, Evidence: s2}},
		{BackgroundTasksRunning: n2, CLIVersion: s1, Cwd: s2, DurationMs: &n2, Error: &s3, ExitCode: &n1, Interrupted: true, // every member: their order
			Kind: s1, Model: s2, Notification: s3, Originator: s1, PermissionMode: s2, Reason: s3, Registry: s1,
			RolloutProof: &RolloutFacts{Chain: []int{1}, Evidence: s2, Rollout: s3}, Status: s1, ToolUseID: s2, Transcript: s3, Usage: usage, Version: s1},
	}
}

func TestFactsMatchOldEncoding(t *testing.T) {
	for _, args := range []struct {
		s1, s2, s3 string
		n1, n2     int64
		b          bool
	}{
		{"make", "-j8", "launched", 4242, 10000, false},
		{"x\"y\\z\u2028\x01<>&", "é\xff", "Bearer abcdefghijklmnop", -1, 0, true},
		{"", "", "", 0, 0, false},
		{"api_key=sk-1234567890abcdef", "ghp_0123456789abcdefghijklmnopqrstuvwxyz", "\t\n", 1 << 40, -7, true},
	} {
		for _, f := range factsExamples(args.s1, args.s2, args.s3, args.n1, args.n2, args.b) {
			eventtest.MatchOld(t, f, oldFacts(f))
		}
	}
}

func FuzzFactsMatchOldEncoding(f *testing.F) {
	f.Add("make", "-j8", "launched", int64(4242), int64(10000), false)
	f.Add("x\"\u2028\x01<>&", "é\xff", "Bearer abcdefghijklmnop", int64(-1), int64(0), true)
	f.Fuzz(func(t *testing.T, s1, s2, s3 string, n1, n2 int64, b bool) {
		for _, x := range factsExamples(s1, s2, s3, n1, n2, b) {
			eventtest.MatchOld(t, x, oldFacts(x))
		}
	})
}

// TestNamedCountsRoundTrip: counts read back keep their names and values,
// and a redacted one stays redacted.
func TestNamedCountsRoundTrip(t *testing.T) {
	var c NamedCounts
	c.Set("output", 3)
	c.Set("secret", 5)
	c.Set("input", 2)
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back NamedCounts
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if n, ok := back.Get("output"); !ok || n != 3 {
		t.Fatalf("output: %d %v (%s)", n, ok, raw)
	}
	if _, ok := back.Get("secret"); ok || string(raw) != `{"input":2,"output":3,"secret":"[REDACTED]"}` {
		t.Fatalf("secret read back as a count: %s", raw)
	}
}
