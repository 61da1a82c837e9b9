package copilot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/eventcap"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

func newTracker(t testing.TB) (*agent.Tracker, *eventcap.Sink) {
	t.Helper()
	sink := &eventcap.Sink{}
	tr := agent.New(agent.Config{Source: Source, Prefix: ChildPrefix, Parent: "p", RunTag: "r",
		Emitter: emit.New(emit.Options{Source: Source}, sink)})
	return tr, sink
}

// replay relays every recorded payload of dir (NN-event.json, in order)
// as lcwrap's hook would, skipping the events lcwrap does not register.
func replay(t *testing.T, dir string) (*eventcap.Sink, *agent.Tracker) {
	t.Helper()
	tr, sink := newTracker(t)
	paths, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if len(paths) == 0 {
		t.Fatal("no recorded payloads")
	}
	r := &relay{}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ev := strings.TrimSuffix(filepath.Base(p)[3:], ".json")
		if ev == "preToolUse" || ev == "permissionRequest" {
			continue // recorded with a hook of the test's; never lcwrap's
		}
		tr.Apply(r.normalize(Wrap(ev, raw)))
	}
	tr.End(agent.ProcessEnd{ChildID: "p"})
	sink.Check(t)
	return sink, tr
}

// TestRecordedSubagent: a headless run whose task tool started a
// general-purpose sub-agent that ran one shell command. The sub-agent's
// own hooks name it as their sessionId: they are its events, under the
// session.
func TestRecordedSubagent(t *testing.T) {
	sink, _ := replay(t, "agent")
	session := "created created\nstate_changed starting\nstate_changed running\nactivity prompt submitted\n" +
		"activity task done\nstate_changed waiting\nactivity turn ended; waiting for the user\nterminal completed\n"
	sub := "created created\nstate_changed starting\nstate_changed running\nactivity general-purpose sub-agent started\n" +
		"activity prompt to the sub-agent\nactivity bash done\nactivity sub-agent turn ended (end_turn)\nterminal completed\n"
	if got := strings.Join(sink.Of("cp-86e34aea-r"), "\n") + "\n"; got != session {
		t.Errorf("session:\n%s\nwant:\n%s\nall:\n%s", got, session, sink.Summaries())
	}
	if got := strings.Join(sink.Of("cp-86e34aea-r.0bfe6ac4"), "\n") + "\n"; got != sub {
		t.Errorf("sub-agent:\n%s\nwant:\n%s", got, sub)
	}
	if all := sink.All(); strings.Contains(all, "lcwrap-subagent-task") || strings.Contains(all, "all done") {
		t.Errorf("prompt or response recorded:\n%s", all)
	}
}

// TestRecordedTUI: the TUI asked for permission to run a shell command
// (its notification hook, permission_prompt), it was allowed, then /exit.
func TestRecordedTUI(t *testing.T) {
	sink, _ := replay(t, "tui")
	want := "created created\nstate_changed starting\nstate_changed running\nactivity prompt submitted\n" +
		"state_changed waiting\nactivity waiting for permission: Run command: echo lcwrap-mock-ok > lcwrap-mock.txt\n" +
		"state_changed running\nactivity bash done\n" +
		"state_changed waiting\nactivity turn ended; waiting for the user\nterminal completed\n"
	if got := sink.Summaries(); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
}

// TestNormalize maps each hook event, and what it does not know.
func TestNormalize(t *testing.T) {
	for _, c := range []struct{ ev, payload, want string }{
		{"sessionStart", `{"sessionId":"s","source":"new","initialPrompt":"secret"}`, "session-started"},
		{"userPromptSubmitted", `{"sessionId":"s","prompt":"secret"}`, "prompt-submitted"},
		{"userPromptSubmitted", `{"sessionId":"a","agentId":"a","parentAgentId":"s"}`, "note"},
		{"preToolUse", `{"sessionId":"s","toolName":"bash"}`, "tool-started"},
		{"permissionRequest", `{"sessionId":"s","toolName":"bash"}`, "note"},
		{"postToolUse", `{"sessionId":"s","toolName":"bash","toolResult":{"resultType":"success"}}`, "tool-ended"},
		{"postToolUse", `{"sessionId":"s","toolName":"bash","toolResult":{"resultType":"failure"}}`, "tool-failed"},
		{"postToolUseFailure", `{"sessionId":"s","toolName":"bash"}`, "tool-failed"},
		{"notification", `{"sessionId":"s","notification_type":"permission_prompt","message":"Run?"}`, "waiting"},
		{"notification", `{"sessionId":"s","notification_type":"other"}`, "note"},
		{"agentStop", `{"sessionId":"s","stopReason":"end_turn"}`, "turn-ended"},
		{"subagentStart", `{"sessionId":"s","agentId":"a","agentType":"explore"}`, "subagent-started"},
		{"subagentStart", `{"sessionId":"s"}`, "unrecognized:subagentStart without agentId"},
		{"subagentStop", `{"sessionId":"s","agentId":"a"}`, "subagent-stopped"},
		{"errorOccurred", `{"sessionId":"s","error":{"name":"RateLimit","message":"secret"}}`, "error-reported"},
		{"sessionEnd", `{"sessionId":"s","reason":"user_exit"}`, "session-ended"},
		{"brandNew", `{"sessionId":"s"}`, "unrecognized:brandNew"},
		{"sessionStart", `[]`, "unrecognized:(payload that is not a JSON object)"},
	} {
		out := Normalize(c.ev, []byte(c.payload), nil)
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
			t.Errorf("%s %s: %q, want %q", c.ev, c.payload, got, c.want)
		}
	}
}

// TestWrap: a relayed body carries the event and the payload; a payload
// that is not JSON is relayed as null, never as broken JSON.
func TestWrap(t *testing.T) {
	ev, raw, ok := Unwrap(Wrap("agentStop", []byte(`{"sessionId":"s"}`)))
	if !ok || ev != "agentStop" || string(raw) != `{"sessionId":"s"}` {
		t.Errorf("%q %q %v", ev, raw, ok)
	}
	ev, raw, ok = Unwrap(Wrap(`we"ird`, []byte(`{not json`)))
	if !ok || ev != `we"ird` || string(raw) != "null" {
		t.Errorf("%q %q %v", ev, raw, ok)
	}
	if out := (&relay{}).normalize([]byte(`{"sessionId":"s"}`)); out.Unrecognized == "" {
		t.Errorf("a bare payload was read as a relayed one: %+v", out)
	}
}

// FuzzNormalize: no relayed body panics or makes an event that cannot be
// written.
func FuzzNormalize(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*/*.json")
	for _, p := range paths {
		raw, _ := os.ReadFile(p)
		f.Add(Wrap(strings.TrimSuffix(filepath.Base(p)[3:], ".json"), raw))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := (&relay{}).normalize(b)
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

// TestParseResult reads the result line recorded from the real CLI.
func TestParseResult(t *testing.T) {
	s := NewStream()
	data, err := os.ReadFile(filepath.Join("testdata", "stream", "agent.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	s.Write(data)
	s.Flush()
	r := s.Report()
	if r == nil || r.ReportedBy != "copilot" || r.Results != 1 || r.IsError == nil || *r.IsError || r.DurationMs == nil || r.SessionID == "" {
		t.Fatalf("report: %+v", r)
	}
	for _, l := range []string{`{"type":"result"`, `{"type":"assistant.message","data":{"content":"result"}}`, `"result"`} {
		if ParseResult([]byte(l)) != nil {
			t.Errorf("%s: a report", l)
		}
	}
}

// FuzzParseResult: no line panics.
func FuzzParseResult(f *testing.F) {
	testtool.SeedLines(f, "testdata/stream/*.jsonl")
	f.Fuzz(func(t *testing.T, b []byte) {
		if r := ParseResult(b); r != nil && r.ReportedBy != Source {
			t.Fatalf("%q: %+v", b, r)
		}
	})
}
