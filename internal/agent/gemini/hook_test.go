package gemini

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// hookOrder is the order Gemini CLI 0.61.0 called the recorded hooks of
// testdata/hooks in (a headless run with one shell call).
var hookOrder = []string{"sessionstart", "beforeagent", "precompress", "beforetool", "aftertool", "precompress-2", "afteragent", "sessionend"}

// TestRecordedHooks maps the payloads recorded from the real CLI, in the
// order it sent them, into one session's lifecycle.
func TestRecordedHooks(t *testing.T) {
	tr, sink := newTracker(t)
	for _, name := range hookOrder {
		raw, err := os.ReadFile(filepath.Join("testdata", "hooks", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		tr.Apply(Normalize(raw))
	}
	tr.End(agent.ProcessEnd{ChildID: "p"})
	sink.Check(t)
	want := "created created\nstate_changed starting\nstate_changed running\nactivity prompt submitted\n" +
		"activity run_shell_command: echo lcwrap-mock-ok > lcwrap-mock.txt\nactivity run_shell_command done\n" +
		"state_changed waiting\nactivity turn ended; waiting for the user\ndiagnostic\nterminal completed\n"
	if got := sink.Summaries(); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
	if all := sink.All(); strings.Contains(all, "run the shell please") || strings.Contains(all, "all done") || strings.Contains(all, "PGID") {
		t.Errorf("prompt, response or tool output recorded:\n%s", all)
	}
}

// TestNormalize maps each hook event, and what it does not know.
func TestNormalize(t *testing.T) {
	for _, c := range []struct{ payload, want string }{
		{`{"session_id":"s","hook_event_name":"SessionStart","source":"resume"}`, "session-started"},
		{`{"session_id":"s","hook_event_name":"BeforeAgent","prompt":"secret"}`, "prompt-submitted"},
		{`{"session_id":"s","hook_event_name":"AfterAgent"}`, "turn-ended"},
		{`{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"file_path":"a.go"}}`, "tool-started"},
		{`{"session_id":"s","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_response":{"error":"boom"}}`, "tool-failed"},
		{`{"session_id":"s","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_response":{"error":null}}`, "tool-ended"},
		{`{"session_id":"s","hook_event_name":"Notification","notification_type":"ToolPermission","message":"Allow?"}`, "waiting"},
		{`{"session_id":"s","hook_event_name":"Notification","notification_type":"Other"}`, "note"},
		{`{"session_id":"s","hook_event_name":"SessionEnd","reason":"exit"}`, "session-ended"},
		{`{"session_id":"s","hook_event_name":"PreCompress","trigger":"auto"}`, "ignored:"},
		{`{"session_id":"s","hook_event_name":"AfterModel"}`, "ignored:"},
		{`{"session_id":"s","hook_event_name":"Brand New"}`, "unrecognized:Brand New"},
		{`{"session_id":"s"}`, "unrecognized:(no hook_event_name)"},
		{`[1,2]`, "unrecognized:(payload that is not a JSON object)"},
		{"\xff", "unrecognized:(payload that is not a JSON object)"},
	} {
		out := Normalize([]byte(c.payload))
		var got string
		switch {
		case out.Unrecognized != "":
			got = "unrecognized:" + out.Unrecognized
		case out.Ignored != "":
			got = "ignored:"
		case len(out.Observations) == 1:
			got = string(out.Observations[0].Kind)
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.payload, got, c.want)
		}
	}
	o := Normalize([]byte(`{"session_id":"s","hook_event_name":"Notification","notification_type":"ToolPermission","message":"Allow\nls?"}`)).Observations[0]
	if o.WaitingFor != "permission" || o.Summary != "Allow ls?" {
		t.Errorf("permission notification: %+v", o)
	}
}

// TestSummary says what each built-in tool was asked, and nothing of an
// unknown tool.
func TestSummary(t *testing.T) {
	for _, c := range []struct{ tool, input, want string }{
		{"run_shell_command", `{"command":"make test\nrm -rf x"}`, "make test"},
		{"write_file", `{"file_path":"/a/b.go","content":"secret"}`, "/a/b.go"},
		{"grep_search", `{"pattern":"TODO","dir_path":"src"}`, "TODO in src"},
		{"web_fetch", `{"url":"http://x"}`, "http://x"},
		{"mcp_s_t", `{"command":"secret"}`, ""},
		{"run_shell_command", `not json`, ""},
	} {
		if got := Summary(c.tool, []byte(c.input)); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.tool, c.input, got, c.want)
		}
	}
}

// FuzzNormalize: no payload panics, and every outcome says something
// (observations, ignored, or unrecognised).
func FuzzNormalize(f *testing.F) {
	testtool.SeedLines(f, "testdata/hooks/*.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		out := Normalize(b)
		if len(out.Observations) == 0 && out.Ignored == "" && out.Unrecognized == "" {
			t.Fatalf("%q: no outcome", b)
		}
		tr, _ := newTracker(t)
		tr.Apply(out)
		if errs := tr.Errors(); len(errs) > 0 {
			t.Fatalf("%q: %v", b, errs)
		}
	})
}

// TestRecordedTUI maps the payloads recorded from the real TUI: a shell
// call that waited for permission, allowed once, then /quit — whose three
// SessionEnd calls are one end.
func TestRecordedTUI(t *testing.T) {
	tr, sink := newTracker(t)
	paths, _ := filepath.Glob(filepath.Join("testdata", "tui", "*.json"))
	if len(paths) != 11 {
		t.Fatalf("%d payloads", len(paths))
	}
	e := &ends{}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		tr.Apply(e.normalize(raw))
	}
	tr.End(agent.ProcessEnd{ChildID: "p"})
	sink.Check(t)
	want := "created created\nstate_changed starting\nstate_changed running\nactivity prompt submitted\n" +
		"activity run_shell_command: echo lcwrap-mock-ok > lcwrap-mock.txt\n" +
		"state_changed waiting\nactivity waiting for permission: Tool Confirm Shell Command requires execution\n" +
		"state_changed running\nactivity run_shell_command done\n" +
		"state_changed waiting\nactivity turn ended; waiting for the user\ndiagnostic\nterminal completed\n"
	if got := sink.Summaries(); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
}
