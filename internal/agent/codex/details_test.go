package codex

import (
	"testing"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/event/eventtest"
)

func codexExamples(s1, s2 string, n int64, b bool) []event.Details {
	id := event.Identity{PID: int(n & 0xffff), StartTime: uint64(n) & (1<<40 - 1), Host: "host"}
	proof := &RolloutProof{Chain: []int{1, int(n & 0xffff)}, Evidence: "open-file-descriptor", Holder: id, HolderExecutable: s1, OwnSession: b, Rollout: s2, ThreadID: s1}
	var terminal event.Members
	event.SetPtr(&terminal, KeyCodexRollout, &CodexRollout{Rollout: s1})
	return []event.Details{
		CodexRollout{Rollout: "not followed"},
		CodexRollout{Rollout: "followed", Proof: proof, ReadError: s1, Note: s2, LastCheck: s1, Refusals: agent.IntMap{s1: 2},
			Daemons: []CodexDaemon{{Command: s1, Note: s2, OwnSession: true, Process: id}, {Command: s2, Process: id}}},
		RolloutProven{Agent: "codex", Message: s1, Proof: proof},
		CodexHooks{Command: s1, Registered: []string{s1, s2}, NotTrusted: []string{s2}, BypassTrust: b, Payloads: n, Note: s2, Rejected: agent.IntMap{s1: 1}},
		CodexHooks{Command: s2},
		event.Terminal{Claim: event.ClaimExitStatusOnly, Extra: terminal},
		agent.AgentEvent{Evidence: "session_meta", Reported: &agent.Facts{Originator: s1, CLIVersion: s2, Usage: agent.NamedCounts{{Name: s1, N: n}},
			RolloutProof: &agent.RolloutFacts{Chain: proof.Chain, Evidence: proof.Evidence, Holder: agent.HolderFacts{PID: id.PID, StartTime: int64(id.StartTime)},
				OwnSession: b, Rollout: s2, ThreadID: s1}}},
	}
}

func TestCodexDetailsRoundTrip(t *testing.T) {
	for _, d := range codexExamples("codex", "Bearer abcdefghijklmnop", 42, true) {
		eventtest.RoundTrip(t, d)
	}
	for _, d := range codexExamples("", "x\"y\u2028", -1, false) {
		eventtest.RoundTrip(t, d)
	}
}

func FuzzCodexDetails(f *testing.F) {
	f.Add("codex", "/tmp/x/sessions/2026/12/01/rollout-x.jsonl", int64(3), true)
	f.Fuzz(func(t *testing.T, s1, s2 string, n int64, b bool) {
		if !utf8.ValidString(s1 + s2) {
			return // the reference rewrites invalid UTF-8 twice
		}
		for _, d := range codexExamples(s1, s2, n, b) {
			eventtest.RoundTrip(t, d)
		}
	})
}
