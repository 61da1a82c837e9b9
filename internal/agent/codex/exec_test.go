package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
)

// TestExecRecording maps streams recorded from the real codex 0.171.0:
// one command, then a refused request (two reported errors, no state of
// their own).
func TestExecRecording(t *testing.T) {
	for _, c := range []struct{ file, want, session string }{
		{"exec-command.jsonl", "created created\nstate_changed starting\nstate_changed running\nactivity prompt submitted\n" +
			"activity command: /bin/bash -lc 'echo lcwrap-marker'\nactivity command done\nactivity agent message\nactivity turn completed\nterminal lost\n",
			"01a23102-88aa-7cd2-9a47-14d2e5f0f113"},
		{"exec-failed.jsonl", "created created\nstate_changed starting\nstate_changed running\nactivity prompt submitted\ndiagnostic\ndiagnostic\nterminal lost\n",
			"01a2312c-ca7c-7323-a0e7-cf57297fe76a"},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		tr, sink := newTracker(t, agent.Config{Parent: "p", RunTag: "r"})
		var r ExecReader
		feed(tr, data, r.Line)
		tr.End(agent.ProcessEnd{ChildID: "p"})
		sink.Check(t)
		if got := sink.Summaries(); got != c.want {
			t.Errorf("%s: events:\n%s\nwant:\n%s", c.file, got, c.want)
		}
		if r.Session() != c.session {
			t.Errorf("%s: session %q", c.file, r.Session())
		}
	}
}

// TestExecLines maps each event type the exec schema defines, and what it
// does not know.
func TestExecLines(t *testing.T) {
	cases := []struct {
		line string
		want string // kind, or "ignored:", "unrecognized:TAG"
	}{
		{`{"type":"thread.started","thread_id":"t1"}`, "session-started"},
		{`{"type":"thread.started"}`, "unrecognized:thread.started without thread_id"},
		{`{"type":"turn.started"}`, "prompt-submitted"},
		{`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":2,"new":{"x":1}}}`, "note"},
		{`{"type":"turn.failed","error":{"message":"boom"}}`, "error-reported"},
		{`{"type":"item.started","item":{"id":"i","type":"command_execution","command":"ls","status":"in_progress"}}`, "tool-started"},
		{`{"type":"item.completed","item":{"id":"i","type":"command_execution","command":"false","exit_code":1,"status":"failed"}}`, "tool-failed"},
		{`{"type":"item.updated","item":{"id":"i","type":"command_execution","command":"ls"}}`, "ignored:"},
		{`{"type":"item.completed","item":{"id":"i","type":"file_change","changes":[{"path":"a.go","kind":"update"}],"status":"completed"}}`, "tool-ended"},
		{`{"type":"item.started","item":{"id":"i","type":"mcp_tool_call","server":"s","tool":"t","status":"in_progress"}}`, "tool-started"},
		{`{"type":"item.completed","item":{"id":"i","type":"mcp_tool_call","server":"s","tool":"t","error":{"message":"x"},"status":"failed"}}`, "tool-failed"},
		{`{"type":"item.started","item":{"id":"i","type":"web_search","query":"q"}}`, "tool-started"},
		{`{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"secret words"}}`, "note"},
		{`{"type":"item.completed","item":{"id":"i","type":"reasoning","text":"hmm"}}`, "ignored:"},
		{`{"type":"item.updated","item":{"id":"i","type":"todo_list","items":[{"text":"a","completed":true},{"text":"b","completed":false}]}}`, "note"},
		{`{"type":"item.completed","item":{"id":"i","type":"error","message":"warn"}}`, "error-reported"},
		{`{"type":"item.completed","item":{"id":"i","type":"hologram"}}`, "unrecognized:item.completed:hologram"},
		{`{"type":"item.completed"}`, "unrecognized:item.completed without item"},
		{`{"type":"request_user_input","id":"t","call_id":"c","questions":[{}]}`, "waiting"},
		{`{"type":"error","message":"Reconnecting..."}`, "error-reported"},
		{`{"type":"item.plan.delta","item_id":"i","delta":"x"}`, "ignored:"},
		{`{"type":"thread.teleported"}`, "unrecognized:thread.teleported"},
		{`{}`, "unrecognized:(none)"},
		{`not json`, "unrecognized:(malformed)"},
		{`[1,2]`, "unrecognized:(malformed)"},
		{`{"type":"item.completed","item":{"type":"command_execution","exit_code":"zero"}}`, "unrecognized:(malformed)"},
	}
	for _, c := range cases {
		r := ExecReader{session: "s"}
		if got := outcomeKind(r.Line([]byte(c.line))); got != c.want {
			t.Errorf("%s: %s, want %s", c.line, got, c.want)
		}
	}
}

func outcomeKind(o agent.Outcome) string {
	switch {
	case o.Unrecognized != "":
		return "unrecognized:" + o.Unrecognized
	case o.Ignored != "":
		return "ignored:"
	case len(o.Observations) == 1:
		return string(o.Observations[0].Kind)
	}
	return "?"
}

// TestExecNoText: what codex says (messages, command output, reasoning)
// never reaches an event; a secret in a command is redacted.
func TestExecNoText(t *testing.T) {
	tr, sink := newTracker(t, agent.Config{Parent: "p", RunTag: "r"})
	var r ExecReader
	feed(tr, []byte(`{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"0","type":"reasoning","text":"private-reasoning"}}
{"type":"item.started","item":{"id":"1","type":"command_execution","command":"curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345' x","aggregated_output":"","status":"in_progress"}}
{"type":"item.completed","item":{"id":"1","type":"command_execution","command":"curl","aggregated_output":"private-output","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"2","type":"agent_message","text":"private-message"}}
`), r.Line)
	tr.End(agent.ProcessEnd{ChildID: "p"})
	sink.Check(t)
	all := sink.All()
	for _, s := range []string{"private-", "abcdefghijklmnopqrstuvwxyz012345"} {
		if strings.Contains(all, s) {
			t.Errorf("%q reached an event:\n%s", s, all)
		}
	}
}

// FuzzExecLine: no line panics the reader or makes an invalid event.
func FuzzExecLine(f *testing.F) {
	seedLines(f, "exec-command.jsonl")
	seedLines(f, "exec-failed.jsonl")
	f.Add([]byte(`{"type":"item.completed","item":{"type":"command_execution","exit_code":null}}`))
	f.Add([]byte(`{"type":"request_user_input","questions":null}`))
	f.Add([]byte(`{"type":"item.completed","item":{"type":"collab_tool_call","tool":"wait","receiver_thread_ids":["a","b"],"agents_states":{"a":{"status":"completed"},"c":{"status":"running"}}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		tr, sink := newTracker(t, agent.Config{Parent: "p", RunTag: "r"})
		r := ExecReader{}
		tr.Apply(r.Line([]byte(`{"type":"thread.started","thread_id":"t"}`)))
		tr.Apply(r.Line(line))
		tr.End(agent.ProcessEnd{ChildID: "p"})
		sink.Check(t)
		if errs := tr.Errors(); len(errs) > 0 {
			t.Fatalf("tracker errors: %v", errs)
		}
	})
}

// seedLines adds every line of a testdata file as a seed.
func seedLines(f *testing.F, name string) {
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" {
			f.Add([]byte(l))
		}
	}
}
