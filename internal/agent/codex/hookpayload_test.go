package codex

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// Payloads as codex 0.171.0 sent them to a command hook (recorded with
// the real CLI against the mock; paths shortened).
const (
	hookSessionStart = `{"session_id":"s1","transcript_path":"/tmp/rec/rollout.jsonl","cwd":"/tmp/w","hook_event_name":"SessionStart","model":"gpt-5.5","permission_mode":"default","source":"startup"}`
	hookPrompt       = `{"session_id":"s1","turn_id":"t1","transcript_path":"/tmp/rec/rollout.jsonl","cwd":"/tmp/w","hook_event_name":"UserPromptSubmit","model":"gpt-5.5","permission_mode":"default","prompt":"SECRET-PROMPT-TEXT"}`
	hookPre          = `{"session_id":"s1","turn_id":"t1","transcript_path":null,"cwd":"/tmp/w","hook_event_name":"PreToolUse","model":"gpt-5.5","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"touch /tmp/x"},"tool_use_id":"call_1_0"}`
	hookPermission   = `{"session_id":"s1","turn_id":"t1","transcript_path":null,"cwd":"/tmp/w","hook_event_name":"PermissionRequest","model":"gpt-5.5","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"touch /tmp/x","description":"wants approval"}}`
	hookPost         = `{"session_id":"s1","turn_id":"t1","transcript_path":null,"cwd":"/tmp/w","hook_event_name":"PostToolUse","model":"gpt-5.5","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"touch /tmp/x"},"tool_response":"SECRET-OUTPUT","tool_use_id":"call_1_0"}`
	hookStop         = `{"session_id":"s1","turn_id":"t1","transcript_path":null,"cwd":"/tmp/w","hook_event_name":"Stop","model":"gpt-5.5","permission_mode":"default","stop_hook_active":false,"last_assistant_message":"SECRET-MESSAGE"}`
	// From codex's schemas (not sent by 0.171.0 here: no sub-agent, no
	// interrupt, no API failure was driven).
	hookSubStart   = `{"session_id":"s1","turn_id":"t1","transcript_path":null,"cwd":"/tmp/w","hook_event_name":"SubagentStart","model":"m","permission_mode":"default","agent_id":"a1","agent_type":"worker"}`
	hookSubStop    = `{"session_id":"s1","turn_id":"t1","transcript_path":null,"cwd":"/tmp/w","hook_event_name":"SubagentStop","model":"m","permission_mode":"default","agent_id":"a1","agent_type":"worker","agent_transcript_path":null,"stop_hook_active":false,"last_assistant_message":"SECRET-MESSAGE"}`
	hookInterrupt  = `{"session_id":"s1","turn_id":"t2","transcript_path":null,"cwd":"/tmp/w","hook_event_name":"Interrupt","model":"m","permission_mode":"default"}`
	hookStopFailed = `{"session_id":"s1","turn_id":"t3","transcript_path":null,"cwd":"/tmp/w","hook_event_name":"StopFailure","model":"m","permission_mode":"default","error":"rate_limit","error_details":"SECRET-DETAILS","last_assistant_message":null}`
)

// TestNormalizeHookInteractive: a TUI session through its hooks, one
// payload at a time, as the Tracker records it.
func TestNormalizeHookInteractive(t *testing.T) {
	tr, sink := newTracker(t, agent.Config{Parent: "codex-proc", RunTag: "h1"})
	for _, p := range []string{hookSessionStart, hookPrompt, hookPre, hookPermission, hookPost, hookStop, hookPrompt, hookSubStart, hookSubStop, hookInterrupt, hookPrompt, hookStopFailed} {
		tr.Apply(NormalizeHook([]byte(p), true))
	}
	tr.End(agent.ProcessEnd{ChildID: "codex-proc"})
	sink.Check(t)
	got := sink.Summaries()
	for _, want := range []string{
		"created created\nstate_changed starting\n",
		"state_changed running\nactivity prompt submitted\n",
		"activity Bash: touch /tmp/x\n",
		"state_changed waiting\nactivity waiting for permission (Bash: touch /tmp/x)\n",
		"state_changed running\nactivity Bash done\n",
		"state_changed waiting\nactivity turn ended; waiting for the user\n",
		"created created\nstate_changed starting\nstate_changed running\nactivity worker sub-agent started\n",
		"terminal completed\n",
		"diagnostic\nstate_changed waiting\n",
		"terminal lost\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	all := sink.All()
	for _, secret := range []string{"SECRET-PROMPT-TEXT", "SECRET-OUTPUT", "SECRET-MESSAGE", "SECRET-DETAILS"} {
		if strings.Contains(all, secret) {
			t.Errorf("%s reached an event", secret)
		}
	}
	for _, want := range []string{`"waitingFor":"permission"`, `"reportedError":"StopFailure:rate_limit"`, `"interrupted":true`, `"evidence":"PermissionRequest"`, `"agentType":"worker"`} {
		if !strings.Contains(all, want) {
			t.Errorf("no %s in:\n%s", want, all)
		}
	}
	if strings.Contains(all, `"state":"failed"`) {
		t.Errorf("a reported failure became a state:\n%s", all)
	}
}

// TestNormalizeHookExec: under exec a turn's end waits for no one (exec
// exits), so Stop and Interrupt are activity only.
func TestNormalizeHookExec(t *testing.T) {
	for _, p := range []string{hookStop, hookInterrupt} {
		out := NormalizeHook([]byte(p), false)
		if len(out.Observations) != 1 || out.Observations[0].Kind != agent.Note {
			t.Errorf("%s: %+v", p, out)
		}
	}
	out := NormalizeHook([]byte(hookStopFailed), false)
	if len(out.Observations) != 1 || out.Observations[0].Kind != agent.ErrorReported {
		t.Errorf("StopFailure under exec: %+v", out)
	}
}

// TestNormalizeHookRefuses: what cannot be read is counted, never a state.
func TestNormalizeHookRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`not json`, "(malformed)"},
		{`{"hook_event_name":"Stop"}`, "Stop without session_id"},
		{`{"hook_event_name":"Teleport","session_id":"s"}`, "Teleport"},
		{`{"hook_event_name":"SubagentStart","session_id":"s"}`, "SubagentStart without agent_id"},
		{"{\"hook_event_name\":\"Stop\",\"session_id\":\"\xff\"}", "(malformed)"},
		{`{"hook_event_name":"Stop","session_id":"s","` + strings.Repeat("x", MaxHookPayload) + `":1}`, "(malformed)"},
	} {
		out := NormalizeHook([]byte(tc.in), true)
		if out.Unrecognized != tc.want || len(out.Observations) != 0 {
			t.Errorf("%.60s: %+v, want unrecognized %q", tc.in, out, tc.want)
		}
	}
}

// FuzzNormalizeHook: any payload maps without a panic to observations
// that name a session, or to a count; no observation carries a prompt,
// a tool's output or a message, and summaries stay short.
func FuzzNormalizeHook(f *testing.F) {
	for _, p := range []string{hookSessionStart, hookPrompt, hookPre, hookPermission, hookPost, hookStop, hookSubStart, hookSubStop, hookInterrupt, hookStopFailed, `{}`, `[]`, `null`} {
		f.Add([]byte(p), true)
	}
	f.Fuzz(func(t *testing.T, raw []byte, turnsWait bool) {
		out := NormalizeHook(raw, turnsWait)
		if len(out.Observations) == 0 && out.Unrecognized == "" && out.Ignored == "" {
			t.Fatalf("neither observed nor counted: %q", raw)
		}
		for _, o := range out.Observations {
			if o.Session == "" || o.Kind == "" {
				t.Fatalf("observation without session or kind: %+v", o)
			}
			if utf8.RuneCountInString(o.Summary) > 200 || utf8.RuneCountInString(o.Tool) > 64 || utf8.RuneCountInString(o.Reason) > 80 {
				t.Fatalf("an observation too long: %+v", o)
			}
			if o.Kind == agent.Waiting && o.WaitingFor != event.WaitPermission {
				t.Fatalf("waiting for %q", o.WaitingFor)
			}
		}
		tr, sink := newTracker(t, agent.Config{Parent: "p", RunTag: "fz"})
		tr.Apply(out)
		tr.End(agent.ProcessEnd{ChildID: "p"})
		sink.Check(t)
	})
}
