package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/eventcap"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// The recorded run (internal/agent/gemini's TestHeadlessSubagent): the
// session b84ca6cf… invoked the generalist sub-agent 1e5a0129…, which ran
// a shell command and called complete_task.
const (
	recSession = "b84ca6cf-7fe7-4bb4-8134-4ddd657bd2a3"
	recAgent   = "1e5a0129-b525-48c5-b63b-523e4930076d"
	// the recorded transcript's (another run of the same script)
	fileAgent = "6958dad0-06f6-4bc7-b780-d79f9acc9241"
)

func TestParseSubagentTelemetry(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "otlp", "subagent-recorded.json"))
	if err != nil {
		t.Fatal(err)
	}
	recs, ok := ParseTelemetry(b)
	if !ok {
		t.Fatal("not read")
	}
	var got []string
	for _, r := range recs {
		if r.Session != recSession {
			t.Errorf("session %q", r.Session)
		}
		switch r.Event {
		case "agent_start", "agent_finish":
			got = append(got, r.Event+" "+r.AgentID+" "+r.AgentName+" "+r.TerminateReason)
		case "tool_call":
			got = append(got, "tool_call "+r.Tool+" by "+r.Agent)
		}
	}
	want := []string{
		"agent_start " + recAgent + " generalist ",
		"tool_call run_shell_command by " + recAgent,
		"tool_call complete_task by " + recAgent,
		"agent_finish " + recAgent + " generalist GOAL",
		"tool_call invoke_agent by ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// children lists each child's events as "child kind state activity".
func children(sink *eventcap.Sink) string {
	var b strings.Builder
	for _, ev := range sink.Events() {
		b.WriteString(ev.ChildID + " " + string(ev.Kind) + " " + string(ev.State) + " " + ev.Activity + "\n")
	}
	return b.String()
}

// TestSubagentFromTelemetry: agent.start and agent.finish make the
// sub-agent a child of its session, named, ended as Gemini reports; its
// tool call decisions are the session's activity, naming it.
func TestSubagentFromTelemetry(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "otlp", "subagent-recorded.json"))
	if err != nil {
		t.Fatal(err)
	}
	tr, sink := newTracker(t)
	sub := newSubagents(tr)
	tr.Apply(Normalize([]byte(`{"session_id":"` + recSession + `","hook_event_name":"SessionStart","source":"startup"}`)))
	tr.Apply(Normalize([]byte(`{"session_id":"` + recSession + `","hook_event_name":"BeforeAgent"}`)))
	q := newTelemetry(tr, sub)
	q.put(b)
	q.close()
	tr.End(agent.ProcessEnd{ChildID: "p"})
	got := children(sink)
	sa := "gm-b84ca6cf-r.1e5a0129"
	for _, want := range []string{
		sa + " created created \n" + sa + " state_changed starting \n" + sa + " state_changed running \n" + sa + " activity  generalist sub-agent started\n",
		"gm-b84ca6cf-r activity  permission for run_shell_command (its sub-agent 1e5a0129): accept, decided by (gemini does not say who)\n",
		sa + " terminal completed \n",
		"gm-b84ca6cf-r activity  permission for invoke_agent: accept",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	for _, ev := range sink.Events() {
		if ev.ChildID == sa && ev.Kind == event.KindCreated {
			var d agent.AgentEvent
			json.Unmarshal(ev.Details, &d)
			if d.AgentID != recAgent || d.AgentType != "generalist" || ev.Lineage.ParentChildID != "gm-b84ca6cf-r" {
				t.Errorf("created: %s %+v", ev.Lineage.ParentChildID, d)
			}
		}
	}
}

// writeTranscript puts the recorded sub-agent transcript's first n lines
// under dir/<session>/<agent>.jsonl.
func writeTranscript(t *testing.T, dir string, n int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "subagent", fileAgent+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	os.MkdirAll(filepath.Join(dir, recSession), 0o700)
	if err := os.WriteFile(filepath.Join(dir, recSession, fileAgent+".jsonl"), []byte(strings.Join(lines[:n], "")), 0o600); err != nil {
		t.Fatal(err)
	}
}

func hookJSON(dir, event, tool string) []byte {
	return []byte(`{"session_id":"` + recSession + `","transcript_path":"` + filepath.Join(dir, "session-2026-12-01T21-02-b84ca6cf.jsonl") +
		`","hook_event_name":"` + event + `","tool_name":"` + tool + `","tool_input":{"agent_name":"generalist","prompt":"x"}}`)
}

// TestSubagentFromTranscript: a hook that arrives once the sub-agent's
// transcript exists starts it (named by the one invoke_agent call open);
// its summary line ends it; the telemetry that follows adds nothing.
func TestSubagentFromTranscript(t *testing.T) {
	dir := t.TempDir()
	tr, sink := newTracker(t)
	sub := newSubagents(tr)
	e := &ends{sub: sub}
	apply := func(b []byte) { tr.Apply(e.normalize(b)) }
	apply([]byte(`{"session_id":"` + recSession + `","hook_event_name":"SessionStart","source":"startup"}`))
	apply(hookJSON(dir, "BeforeAgent", ""))
	apply(hookJSON(dir, "BeforeTool", "invoke_agent"))
	writeTranscript(t, dir, 6) // up to its shell call
	apply(hookJSON(dir, "BeforeTool", "run_shell_command"))
	apply(hookJSON(dir, "AfterTool", "run_shell_command"))
	writeTranscript(t, dir, 12) // its summary
	apply(hookJSON(dir, "AfterTool", "invoke_agent"))
	// The telemetry of the same sub-agent (ids made to match) adds nothing.
	rec, _ := os.ReadFile(filepath.Join("testdata", "otlp", "subagent-recorded.json"))
	q := newTelemetry(tr, sub)
	q.put([]byte(strings.ReplaceAll(string(rec), recAgent, fileAgent)))
	q.close()
	apply(hookJSON(dir, "SessionEnd", ""))
	tr.End(agent.ProcessEnd{ChildID: "p"})
	got := children(sink)
	sa, s := "gm-b84ca6cf-r.6958dad0", "gm-b84ca6cf-r"
	want := s + " activity  invoke_agent\n" +
		sa + " created created \n" + sa + " state_changed starting \n" + sa + " state_changed running \n" + sa + " activity  generalist sub-agent started\n" +
		s + " activity  run_shell_command\n" + s + " activity  run_shell_command done\n" +
		sa + " terminal completed \n" + s + " activity  invoke_agent done\n"
	if !strings.Contains(got, want) {
		t.Errorf("got\n%s\nwant (in it)\n%s", got, want)
	}
	if n := strings.Count(got, sa+" created"); n != 1 || strings.Contains(got, "started again") || strings.Contains(got, sa+" diagnostic") {
		t.Errorf("the telemetry repeated the sub-agent:\n%s", got)
	}
	for _, ev := range sink.Events() {
		if ev.ChildID == sa && ev.Kind == event.KindTerminal {
			var d agent.AgentEvent
			json.Unmarshal(ev.Details, &d)
			if d.Claim != agent.ClaimAgentReportedEnd || d.Reason != "GOAL" || d.Evidence != NativeSummary {
				t.Errorf("terminal: %+v", d)
			}
		}
	}
}

// TestSubagentTranscriptNotTrusted: a transcript path that is relative, a
// session id Gemini would rewrite, a file whose header is not a
// sub-agent's: nothing is started.
func TestSubagentTranscriptNotTrusted(t *testing.T) {
	if SubagentDir("chats/x.jsonl", "s") != "" || SubagentDir("/c/x.jsonl", "../s") != "" || SubagentDir("/c/x.jsonl", "") != "" {
		t.Error("an untrusted directory")
	}
	if got := SubagentDir("/c/chats/session-1.jsonl", "abc-1"); got != "/c/chats/abc-1" {
		t.Errorf("dir %q", got)
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, recSession), 0o700)
	os.WriteFile(filepath.Join(dir, recSession, fileAgent+".jsonl"), []byte(`{"sessionId":"`+fileAgent+`","kind":"main"}`+"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, recSession, "other.jsonl"), []byte(`{"sessionId":"`+fileAgent+`","kind":"subagent"}`+"\n"), 0o600)
	tr, sink := newTracker(t)
	e := &ends{sub: newSubagents(tr)}
	tr.Apply(e.normalize(hookJSON(dir, "BeforeAgent", "")))
	tr.Apply(e.normalize(hookJSON(dir, "AfterAgent", "")))
	if strings.Contains(children(sink), ".") {
		t.Errorf("a sub-agent:\n%s", children(sink))
	}
}

func TestSummaryAfter(t *testing.T) {
	f := filepath.Join(t.TempDir(), "a.jsonl")
	long := strings.Repeat("x", 200<<10)
	os.WriteFile(f, []byte(`{"a":1}`+"\n"+`{"b":"`+long+`"}`+"\n"+`{"$set":{"summ`), 0o600)
	found, off := summaryAfter(f, 0)
	if found || off != int64(8+len(long)+9) {
		t.Fatalf("found %v off %d", found, off)
	}
	os.WriteFile(f, []byte(`{"a":1}`+"\n"+`{"b":"`+long+`"}`+"\n"+`{"$set":{"summary":"x"}}`+"\n"), 0o600)
	if found, _ := summaryAfter(f, off); !found {
		t.Error("the summary line was not found")
	}
}

func FuzzSubagentTranscript(f *testing.F) {
	testtool.SeedLines(f, "testdata/subagent/*.jsonl")
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, recSession), 0o700)
		os.WriteFile(filepath.Join(dir, recSession, fileAgent+".jsonl"), b, 0o600)
		tr, _ := newTracker(t)
		e := &ends{sub: newSubagents(tr)}
		tr.Apply(e.normalize(hookJSON(dir, "BeforeTool", "invoke_agent")))
		tr.Apply(e.normalize(hookJSON(dir, "AfterTool", "invoke_agent")))
		tr.End(agent.ProcessEnd{ChildID: "p"})
		if errs := tr.Errors(); len(errs) > 0 {
			t.Fatalf("%q: %v", b, errs)
		}
	})
}
