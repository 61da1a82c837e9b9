package codex

import (
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/mockresponses"
)

// collabStream is an exec --json stream of codex's collab items in the
// shape of its exec schema (CollabToolCallItem: tool, sender_thread_id,
// receiver_thread_ids, prompt, agents_states, status). codex 0.171.0 with
// multi_agent_v2 prints only a wait item that names no sub-agent
// (TestRealExecSubagent), so this is written from the schema, not
// recorded: a spawn, a wait that sees the sub-agent complete, a message
// that resumes it, an errored second one, and one first seen ended.
const collabStream = `{"type":"thread.started","thread_id":"t-main"}
{"type":"turn.started"}
{"type":"item.started","item":{"id":"i0","type":"collab_tool_call","tool":"spawn_agent","sender_thread_id":"t-main","receiver_thread_ids":[],"prompt":"SECRET-PROMPT","agents_states":{},"status":"in_progress"}}
{"type":"item.completed","item":{"id":"i0","type":"collab_tool_call","tool":"spawn_agent","sender_thread_id":"t-main","receiver_thread_ids":["t-sub-aaaa"],"prompt":"SECRET-PROMPT","agents_states":{"t-sub-aaaa":{"status":"pending_init","message":null}},"status":"completed"}}
{"type":"item.started","item":{"id":"i1","type":"collab_tool_call","tool":"wait","sender_thread_id":"t-main","receiver_thread_ids":["t-sub-aaaa"],"prompt":null,"agents_states":{"t-sub-aaaa":{"status":"running","message":null}},"status":"in_progress"}}
{"type":"item.completed","item":{"id":"i1","type":"collab_tool_call","tool":"wait","sender_thread_id":"t-main","receiver_thread_ids":["t-sub-aaaa"],"prompt":null,"agents_states":{"t-sub-aaaa":{"status":"completed","message":"SECRET-MESSAGE"}},"status":"completed"}}
{"type":"item.completed","item":{"id":"i2","type":"collab_tool_call","tool":"send_input","sender_thread_id":"t-main","receiver_thread_ids":["t-sub-aaaa"],"prompt":"SECRET-PROMPT","agents_states":{"t-sub-aaaa":{"status":"running","message":null}},"status":"completed"}}
{"type":"item.completed","item":{"id":"i3","type":"collab_tool_call","tool":"spawn_agent","sender_thread_id":"t-main","receiver_thread_ids":["t-sub-bbbb"],"prompt":null,"agents_states":{"t-sub-bbbb":{"status":"errored","message":"SECRET-MESSAGE"}},"status":"failed"}}
{"type":"turn.completed","usage":{"input_tokens":3}}
`

// TestExecCollabSubagents: collab items' sub-agents are children of the
// session, with their own activity and end as codex reports it.
func TestExecCollabSubagents(t *testing.T) {
	tr, sink := newTracker(t, agent.Config{Parent: "codex-proc", RunTag: "c1"})
	var r ExecReader
	g := newGate(tr)
	for _, l := range strings.Split(strings.TrimSpace(collabStream), "\n") {
		g.Apply(r.Line([]byte(l))) // as a run applies it
	}
	tr.End(agent.ProcessEnd{ChildID: "codex-proc"})
	sink.Check(t)
	byChild := map[string]string{}
	for _, ev := range sink.Events() {
		byChild[ev.ChildID] += string(ev.Kind) + " " + string(ev.State) + " " + ev.Activity + "\n"
	}
	sub := byChild["cx-t-main-c1.t-sub-aa"]
	for _, want := range []string{
		"created created \nstate_changed starting \nstate_changed running \nactivity  collab sub-agent started\n",
		"activity  sub-agent running (collab:wait)\n",
		"terminal completed \n",
	} {
		if !strings.Contains(sub, want) {
			t.Errorf("sub-agent a: no %q in:\n%s\nall: %v", want, sub, byChild)
		}
	}
	if again := byChild["cx-t-main-c1.t-sub-aa+2"]; !strings.Contains(again, "created created") || !strings.Contains(again, "terminal lost") {
		t.Errorf("the resumed sub-agent is not a new lifecycle ended with the process: %q", again)
	}
	if b := byChild["cx-t-main-c1.t-sub-bb"]; !strings.Contains(b, "created created") || !strings.Contains(b, "terminal lost") {
		t.Errorf("a sub-agent first seen ended is created and ends lost (never seen at work): %q", b)
	}
	all := sink.All()
	if strings.Contains(all, "SECRET") {
		t.Errorf("a prompt or message reached an event")
	}
	for _, want := range []string{`"reason":"completed"`, `"reason":"errored"`, `"claim":"agent-reported-end"`, `"parentChildId":"cx-t-main-c1"`} {
		if !strings.Contains(all, want) {
			t.Errorf("no %s in:\n%s", want, all)
		}
	}
}

// TestRealExecSubagent: the real `codex exec --json --enable
// multi_agent_v2` under lcwrap, its hooks trusted, with a mock model that
// spawns a sub-agent which runs a command: the sub-agent is a child of
// the session (codex's SubagentStart/SubagentStop hooks), its command is
// its own activity (PreToolUse naming it), and it ends as codex reports.
func TestRealExecSubagent(t *testing.T) {
	env, codexHome, srv := codexEnv(t,
		mockresponses.Step{Calls: []mockresponses.Call{mockresponses.Spawn("lcwrap_sub", "lcwrap sub-agent task")}},
		mockresponses.Step{Calls: []mockresponses.Call{mockresponses.WaitAgent()}})
	srv.SubAgent(mockresponses.Step{Calls: []mockresponses.Call{mockresponses.Exec("echo sub-marker")}})
	trust(t, codexHome)
	evs, _ := lcwrapExec(t, env, "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--enable", "multi_agent_v2", "spawn one")
	byChild := map[string]string{}
	var session string
	for _, ev := range evs {
		if ev.Source != Source {
			continue
		}
		if session == "" {
			session = ev.ChildID
		}
		byChild[ev.ChildID] += string(ev.Kind) + " " + string(ev.State) + " " + ev.Activity + "\n"
	}
	var sub, subID string
	for id, lines := range byChild {
		if strings.HasPrefix(id, session+".") {
			sub, subID = lines, id
		}
	}
	for _, want := range []string{"created created \nstate_changed starting \nstate_changed running \nactivity  default sub-agent started\n", "activity  Bash: echo sub-marker\n", "activity  Bash done\n", "terminal completed \n"} {
		if !strings.Contains(sub, want) {
			t.Errorf("sub-agent %s: no %q in:\n%s\nsession:\n%s", subID, want, sub, byChild[session])
		}
	}
	if strings.Contains(byChild[session], "echo sub-marker") {
		t.Errorf("the sub-agent's command was recorded on the session:\n%s", byChild[session])
	}
	if !strings.Contains(byChild[session], "activity  collab:wait\n") {
		t.Errorf("the exec stream's collab item is not the session's activity:\n%s", byChild[session])
	}
}

// TestGateOnce: a session's and a sub-agent's start and end said by two
// sources (the exec stream and the hooks) are recorded once; the second
// saying is an activity line naming its evidence.
func TestGateOnce(t *testing.T) {
	tr, sink := newTracker(t, agent.Config{Parent: "codex-proc", RunTag: "g1"})
	g := newGate(tr)
	var r ExecReader
	g.Apply(r.Line([]byte(`{"type":"thread.started","thread_id":"s1"}`)))
	g.Apply(NormalizeHook([]byte(hookSessionStart), false))
	g.Apply(r.Line([]byte(`{"type":"turn.started"}`)))
	g.Apply(NormalizeHook([]byte(strings.Replace(hookSubStart, `"a1"`, `"t-sub"`, 1)), false))
	g.Apply(r.Line([]byte(`{"type":"item.completed","item":{"id":"i0","type":"collab_tool_call","tool":"spawn_agent","sender_thread_id":"s1","receiver_thread_ids":["t-sub"],"agents_states":{"t-sub":{"status":"running"}},"status":"completed"}}`)))
	g.Apply(NormalizeHook([]byte(strings.Replace(hookSubStop, `"a1"`, `"t-sub"`, 1)), false))
	g.Apply(r.Line([]byte(`{"type":"item.completed","item":{"id":"i1","type":"collab_tool_call","tool":"wait","sender_thread_id":"s1","receiver_thread_ids":["t-sub"],"agents_states":{"t-sub":{"status":"completed"}},"status":"completed"}}`)))
	tr.End(agent.ProcessEnd{ChildID: "codex-proc"})
	sink.Check(t)
	got := sink.Summaries()
	if n := strings.Count(got, "created created"); n != 2 {
		t.Errorf("%d created events, want the session's and the sub-agent's:\n%s", n, got)
	}
	if n := strings.Count(got, "terminal completed"); n != 1 {
		t.Errorf("the sub-agent ended %d times:\n%s", n, got)
	}
	for _, want := range []string{"activity session start reported by SessionStart (startup)\n", "activity sub-agent start reported by item.completed:collab_tool_call\n", "activity sub-agent end reported by item.completed:collab_tool_call (completed)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
}
