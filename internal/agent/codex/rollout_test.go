package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
)

// TestRolloutRecording maps rollouts recorded from the real codex
// 0.171.0 (exec and interactive, one command each): every line is
// recognised, and a turn's end is a wait for the user.
func TestRolloutRecording(t *testing.T) {
	for _, c := range []struct{ file, marker, end string }{
		// exec's rollout: exec exits after its turn, it waits for no one.
		{"rollout-exec-command.jsonl", "lcwrap-marker", "activity turn ended\n"},
		{"rollout-interactive.jsonl", "interactive-marker", "state_changed waiting\nactivity turn ended; waiting for the user\n"},
	} {
		t.Run(c.file, func(t *testing.T) { testRolloutRecording(t, c.file, c.marker, c.end) })
	}
}

func testRolloutRecording(t *testing.T, file, marker, end string) {
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	meta, ok := ParseSessionMeta([]byte(strings.SplitN(string(data), "\n", 2)[0]))
	if !ok || meta.ID == "" {
		t.Fatalf("no session_meta in the recording's first line")
	}
	tr, sink := newTracker(t, agent.Config{Parent: "p", RunTag: "r"})
	r := RolloutReader{Thread: meta.ID}
	feed(tr, data, r.Line)
	tr.End(agent.ProcessEnd{ChildID: "p"})
	sink.Check(t)
	got := sink.Summaries()
	for _, want := range []string{
		"created created\nstate_changed starting\nstate_changed running\nactivity prompt submitted\n",
		"activity exec_command: echo " + marker + "\n",
		"activity command done\n",
		end,
		"terminal lost\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if end == "activity turn ended\n" && strings.Contains(got, "waiting") {
		t.Errorf("exec's rollout says no wait, yet:\n%s", got)
	}
	if strings.Contains(sink.All(), "unrecognized") {
		t.Errorf("a line of the real CLI's rollout was not recognised:\n%s", sink.All())
	}
}

// TestRolloutLines maps the envelope's types and codex's event_msg kinds.
func TestRolloutLines(t *testing.T) {
	cases := []struct{ line, want string }{
		{`{"timestamp":"x","type":"session_meta","payload":{"id":"T","cli_version":"0.171.0","source":"cli"}}`, "session-started"},
		{`{"type":"session_meta","payload":{"id":"OTHER"}}`, "unrecognized:session_meta of another thread"},
		{`{"type":"turn_context","payload":{"cwd":"/"}}`, "ignored:"},
		{`{"type":"event_msg","payload":{"type":"task_started","turn_id":"x"}}`, "prompt-submitted"},
		{`{"type":"event_msg","payload":{"type":"task_complete","duration_ms":93}}`, "turn-ended"},
		{`{"type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}`, "turn-ended"},
		{`{"type":"event_msg","payload":{"type":"exec_approval_request","command":["ls"]}}`, "waiting"},
		{`{"type":"event_msg","payload":{"type":"request_user_input"}}`, "waiting"},
		{`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","command":["/bin/bash","-lc","ls"],"exit_code":2,"status":"failed"}}}`, "tool-failed"},
		{`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage"}}}`, "ignored:"},
		{`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"Hologram"}}}`, "unrecognized:event_msg:item_completed:Hologram"},
		{`{"type":"event_msg","payload":{"type":"exec_command_end","command":"ls","exit_code":0}}`, "tool-ended"},
		{`{"type":"event_msg","payload":{"type":"error","message":"boom"}}`, "error-reported"},
		{`{"type":"event_msg","payload":{"type":"token_count"}}`, "ignored:"},
		{`{"type":"event_msg","payload":{"type":"brand_new"}}`, "unrecognized:event_msg:brand_new"},
		{`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}}`, "tool-started"},
		{`{"type":"response_item","payload":{"type":"message","role":"user","content":[]}}`, "ignored:"},
		{`{"type":"response_item","payload":{"type":"new_item"}}`, "unrecognized:response_item:new_item"},
		{`{"type":"future_line","payload":{}}`, "unrecognized:future_line"},
		{`{"type":"event_msg","payload":"text"}`, "unrecognized:(malformed payload of event_msg)"},
		{`garbage`, "unrecognized:(malformed)"},
	}
	for _, c := range cases {
		r := RolloutReader{Thread: "T"}
		if got := outcomeKind(r.Line([]byte(c.line))); got != c.want {
			t.Errorf("%s: %s, want %s", c.line, got, c.want)
		}
	}
}

// FuzzRolloutLine: no line panics the reader or makes an invalid event.
func FuzzRolloutLine(f *testing.F) {
	seedLines(f, "rollout-exec-command.jsonl")
	seedLines(f, "rollout-interactive.jsonl")
	f.Fuzz(func(t *testing.T, line []byte) {
		tr, sink := newTracker(t, agent.Config{Parent: "p", RunTag: "r"})
		r := RolloutReader{Thread: "T"}
		tr.Apply(r.Line([]byte(`{"type":"session_meta","payload":{"id":"T"}}`)))
		tr.Apply(r.Line(line))
		ParseSessionMeta(line)
		tr.End(agent.ProcessEnd{ChildID: "p"})
		sink.Check(t)
		if errs := tr.Errors(); len(errs) > 0 {
			t.Fatalf("tracker errors: %v", errs)
		}
	})
}

// FuzzLines: the splitter passes exactly the complete lines it was given,
// however the bytes are cut.
func FuzzLines(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		var got []string
		l := NewLines(func(b []byte) { got = append(got, string(b)) })
		n := int(cut)%(len(data)+1) + 0
		l.Write(data[:n])
		l.Write(data[n:])
		want := strings.Split(string(data), "\n")
		want = want[:len(want)-1] // the last piece has no newline
		if strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != len(want) {
			t.Fatalf("lines %q, want %q", got, want)
		}
		if l.Partial() != (len(data) > 0 && data[len(data)-1] != '\n') {
			t.Fatalf("Partial() = %v for %q", l.Partial(), data)
		}
	})
}
