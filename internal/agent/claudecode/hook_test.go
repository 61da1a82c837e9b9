package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/projection"
)

type capture struct{ lines [][]byte }

func (c *capture) Name() string { return "capture" }
func (c *capture) WriteEvent(_ *event.Event, line []byte) error {
	c.lines = append(c.lines, append([]byte(nil), line...))
	return nil
}
func (c *capture) Close() error { return nil }

func recorded(t *testing.T) [][]byte { return recordedIn(t, "testdata/hooks") }

func recordedIn(t *testing.T, dir string) [][]byte {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no recorded payloads in testdata/hooks")
	}
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// replay normalizes payloads into a tracker and returns the projection
// of what it wrote, failing on any event the projection refuses.
func replay(t *testing.T, payloads [][]byte) (*projection.Projection, []event.Event, [][]byte) {
	t.Helper()
	sink := &capture{}
	tr := agent.New(agent.Config{Source: Source, Prefix: ChildPrefix, Parent: "claude-p1", Root: "claude-p1", Limits: Limits,
		Emitter: emit.New(emit.Options{Source: Source}, sink)})
	for _, p := range payloads {
		if err := tr.Apply(Normalize(p)); err != nil {
			t.Fatal(err)
		}
	}
	tr.End(agent.ProcessEnd{ChildID: "claude-p1"})
	if errs := tr.Errors(); len(errs) > 0 {
		t.Fatal(errs)
	}
	p := projection.New()
	var evs []event.Event
	for _, l := range sink.lines {
		var ev event.Event
		if err := json.Unmarshal(l, &ev); err != nil {
			t.Fatal(err)
		}
		if err := ev.Validate(); err != nil {
			t.Fatalf("%v\n%s", err, l)
		}
		if out := p.Apply(&ev, l); out.Result != projection.Applied {
			t.Fatalf("%v %v\n%s", out.Result, out.Err, l)
		}
		evs = append(evs, ev)
	}
	return p, evs, sink.lines
}

func TestRecordedSession(t *testing.T) {
	_, evs, lines := replay(t, recorded(t))
	var session, sub []string
	for _, ev := range evs {
		row := strings.Join(strings.Fields(string(ev.Kind)+" "+string(ev.State)+" "+ev.Activity), " ")
		switch {
		case strings.Contains(ev.ChildID, "."):
			sub = append(sub, row)
			if ev.Lineage.ParentChildID != "cc-5d9a7b1f-7f0e-4f65-9f4a-fa2c4ce0ac56" && !strings.HasPrefix(ev.Lineage.ParentChildID, "cc-") {
				t.Fatalf("sub-agent parent %q", ev.Lineage.ParentChildID)
			}
		default:
			session = append(session, row)
			if ev.Lineage.ParentChildID != "claude-p1" {
				t.Fatalf("session parent %q", ev.Lineage.ParentChildID)
			}
		}
	}
	want := []string{
		"created created", "state_changed starting", "state_changed running", "activity prompt submitted",
		"activity Bash: echo lcwrap-mock-ok", "activity Bash done",
		"activity Agent: Explore: Look around", "activity Agent done",
		"state_changed waiting", "activity turn ended; waiting for the user",
		"state_changed running", "activity prompt submitted", "state_changed waiting", "activity turn ended; waiting for the user",
		"terminal completed",
	}
	if strings.Join(session, "\n") != strings.Join(want, "\n") {
		t.Fatalf("session:\n%s", strings.Join(session, "\n"))
	}
	wantSub := []string{"created created", "state_changed starting", "state_changed running", "activity Explore sub-agent started", "terminal completed"}
	if strings.Join(sub, "\n") != strings.Join(wantSub, "\n") {
		t.Fatalf("sub-agent:\n%s", strings.Join(sub, "\n"))
	}
	all := bytes.Join(lines, nil)
	for _, never := range []string{"lcwrap-scenario:both please", "lcwrap-subagent-task", "last_assistant_message", "lcwrap mock: all done"} {
		if bytes.Contains(all, []byte(never)) {
			t.Fatalf("%q reached the events", never)
		}
	}
}

// TestRecordedInteractive: an interactive session with a permission
// prompt, recorded with the real claude: waiting while the prompt is open
// (the later permission Notification is activity), running again when
// the tool ran, waiting at the turn's end, completed at /exit.
func TestRecordedInteractive(t *testing.T) {
	_, evs, _ := replay(t, recordedIn(t, "testdata/hooks-interactive"))
	var rows []string
	for _, ev := range evs {
		row := strings.Join(strings.Fields(string(ev.Kind)+" "+string(ev.State)+" "+ev.Activity), " ")
		if ev.Kind == event.KindStateChanged && ev.State == event.StateWaiting {
			d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details)
			row += " for " + d.WaitingFor
		}
		rows = append(rows, row)
	}
	want := []string{
		"created created", "state_changed starting", "state_changed running", "activity prompt submitted",
		"activity Bash: echo lcwrap-mock-ok > lcwrap-mock.txt",
		"state_changed waiting for permission", "activity waiting for permission (Bash: echo lcwrap-mock-ok > lcwrap-mock.txt)",
		"activity waiting for permission: Claude needs your permission",
		"state_changed running", "activity Bash done",
		"state_changed waiting for user", "activity turn ended; waiting for the user",
		"terminal completed",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s", strings.Join(rows, "\n"))
	}
}

func TestSecretsNeverRecorded(t *testing.T) {
	secret := "sk-ant-api03-" + strings.Repeat("Z", 40)
	payloads := [][]byte{
		[]byte(`{"session_id":"s9","hook_event_name":"UserPromptSubmit","prompt":"use ` + secret + ` please"}`),
		[]byte(`{"session_id":"s9","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"curl -H 'Authorization: Bearer ` + secret + `' https://x"}}`),
		[]byte(`{"session_id":"s9","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"export API_KEY=` + secret + `"}}`),
		[]byte(`{"session_id":"s9","hook_event_name":"PostToolUse","tool_name":"WebFetch","tool_input":{"url":"https://x/?token=` + secret + `"},"tool_response":"` + secret + `"}`),
		[]byte(`{"session_id":"s9","hook_event_name":"Stop","last_assistant_message":"` + secret + `"}`),
		[]byte(`{"session_id":"s9","hook_event_name":"Notification","notification_type":"permission_prompt","message":"key ` + secret + `"}`),
	}
	_, _, lines := replay(t, payloads)
	if bytes.Contains(bytes.Join(lines, nil), []byte(strings.Repeat("Z", 20))) {
		t.Fatalf("a secret reached the events:\n%s", bytes.Join(lines, nil))
	}
}

func TestNormalizePolicy(t *testing.T) {
	for _, tc := range []struct {
		payload      string
		unrecognized string
		ignored      string
		kind         agent.Kind
		waitingFor   event.WaitReason
		tool         string
	}{
		{payload: ``, unrecognized: "(unreadable hook payload)"},
		{payload: `[1,2]`, unrecognized: "(unreadable hook payload)"},
		{payload: "\xff\xfe", unrecognized: "(unreadable hook payload)"},
		{payload: `{"session_id":"s"}`, unrecognized: "(hook payload without hook_event_name)"},
		{payload: `{"session_id":"s","hook_event_name":"BrandNewHook","tool_input":{"x":1}}`, unrecognized: "BrandNewHook"},
		{payload: `{"session_id":"s","hook_event_name":"ConfigChange"}`, ignored: "configuration change"},
		{payload: `{"session_id":"s","hook_event_name":"SubagentStart"}`, unrecognized: "(SubagentStart without agent_id)"},
		{payload: `{"session_id":"s","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"},"new_field":{"a":[1]}}`, kind: agent.Waiting, waitingFor: event.WaitPermission, tool: "Bash"},
		{payload: `{"session_id":"s","hook_event_name":"Notification","notification_type":"idle_prompt","message":"Claude is waiting for your input"}`, kind: agent.Waiting, waitingFor: event.WaitUser},
		{payload: `{"session_id":"s","hook_event_name":"Notification","notification_type":"auth_success"}`, kind: agent.Note},
		{payload: `{"session_id":"s","hook_event_name":"StopFailure","error":"rate_limit","error_details":"secret stuff"}`, kind: agent.ErrorReported},
		{payload: `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"not an object"}`, kind: agent.ToolStarted, tool: "Bash"},
	} {
		out := Normalize([]byte(tc.payload))
		if out.Unrecognized != tc.unrecognized || out.Ignored != tc.ignored {
			t.Errorf("%s: %+v", tc.payload, out)
			continue
		}
		if tc.kind == "" {
			if len(out.Observations) != 0 {
				t.Errorf("%s: observations %+v", tc.payload, out.Observations)
			}
			continue
		}
		if len(out.Observations) != 1 {
			t.Errorf("%s: %+v", tc.payload, out)
			continue
		}
		o := out.Observations[0]
		if o.Kind != tc.kind || o.WaitingFor != tc.waitingFor || o.Tool != tc.tool {
			t.Errorf("%s: %+v", tc.payload, o)
		}
		if o.Kind == agent.ErrorReported && o.Reason != "rate_limit" {
			t.Errorf("error class %q", o.Reason)
		}
	}
}

func TestStreamReport(t *testing.T) {
	b, err := os.ReadFile("testdata/stream/print-both.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s := NewStream(nil, false)
	for len(b) > 0 { // odd-sized writes: lines arrive in pieces
		n := min(len(b), 777)
		s.Write(b[:n])
		b = b[n:]
	}
	s.Flush()
	r := s.Report()
	if r == nil || r.Subtype != "success" || r.IsError == nil || *r.IsError || *r.NumTurns != 1 || r.Results != 2 || r.ReportedBy != Source {
		t.Fatalf("report %+v", r)
	}
	if r.Usage == nil || *r.Usage.Output != 6 {
		t.Fatalf("usage %+v", r.Usage)
	}
	b, _ = event.MarshalDetails(r)
	if strings.Contains(string(b), "all done") {
		t.Fatalf("the result text reached the report: %s", b)
	}
}

func TestStreamActivity(t *testing.T) {
	b, err := os.ReadFile("testdata/stream/print-both.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	sink := &capture{}
	tr := agent.New(agent.Config{Source: Source, Prefix: ChildPrefix, Parent: "claude-p1",
		Emitter: emit.New(emit.Options{Source: Source}, sink)})
	s := NewStream(tr, true)
	s.Write(b)
	s.Write([]byte("not json at all\n"))
	s.Flush()
	tr.End(agent.ProcessEnd{ChildID: "claude-p1"})
	all := string(bytes.Join(sink.lines, nil))
	for _, want := range []string{`"activity":"Bash: echo lcwrap-mock-ok"`, `"activity":"Agent: Explore: Look around"`, `"state":"waiting"`, `"agentType":"Explore"`, `"claim":"launched-process-ended"`} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %s in\n%s", want, all)
		}
	}
	if errs := tr.Errors(); len(errs) > 0 {
		t.Fatal(errs)
	}
}

func FuzzNormalize(f *testing.F) {
	files, _ := filepath.Glob("testdata/hooks*/*.json")
	for _, file := range files {
		b, _ := os.ReadFile(file)
		f.Add(b)
	}
	f.Add([]byte(`{"session_id":"s","hook_event_name":"Notification","notification_type":"permission_prompt"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := Normalize(b)
		n := 0
		if out.Unrecognized != "" {
			n++
		}
		if out.Ignored != "" {
			n++
		}
		if len(out.Observations) > 0 {
			n++
		}
		if n != 1 {
			t.Fatalf("an outcome must be exactly one of observations, ignored, unrecognized: %+v", out)
		}
		for _, o := range out.Observations {
			if len([]rune(o.Summary)) > MaxSummary+1 {
				t.Fatalf("summary too long: %q", o.Summary)
			}
		}
		// Whatever it made must become valid events.
		sink := &capture{}
		tr := agent.New(agent.Config{Source: Source, Prefix: ChildPrefix, Emitter: emit.New(emit.Options{Source: Source}, sink)})
		tr.Apply(out)
		tr.End(agent.ProcessEnd{})
		if errs := tr.Errors(); len(errs) > 0 {
			t.Fatal(errs)
		}
	})
}

func FuzzStreamLine(f *testing.F) {
	b, _ := os.ReadFile("testdata/stream/print-both.jsonl")
	for _, l := range bytes.Split(b, []byte("\n")) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, activity := range []bool{false, true} {
			out, report := ParseStreamLine(line, activity)
			if report != nil && report.ReportedBy != Source {
				t.Fatalf("report not attributed: %v", report)
			}
			sink := &capture{}
			tr := agent.New(agent.Config{Source: Source, Prefix: ChildPrefix, Emitter: emit.New(emit.Options{Source: Source}, sink)})
			tr.Apply(out)
			tr.End(agent.ProcessEnd{})
			if errs := tr.Errors(); len(errs) > 0 {
				t.Fatal(errs)
			}
		}
	})
}

func TestRecordedArgv(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"claude -p fix-it --allowedTools Bash Agent --output-format stream-json", "claude -p [prompt] --allowedTools Bash Agent --output-format stream-json"},
		{"claude --model opus hello --system-prompt secret-ish", "claude --model opus [prompt] --system-prompt [prompt]"},
		{"claude --append-system-prompt=abc -- -p", "claude --append-system-prompt=[prompt] -- [prompt]"},
		{"claude mcp list", "claude mcp list"},
		{"claude", "claude"},
	} {
		got := strings.Join(RecordedArgv(strings.Fields(tc.in)), " ")
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func TestFindRegistry(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("4242.json", `{"pid":4242,"sessionId":"s-1","procStart":"777","status":"idle","cwd":"/p","version":"2.1.332"}`)
	r, err := FindRegistry(4242, 777, []string{"/nonexistent", dir})
	if err != nil || r.SessionID != "s-1" {
		t.Fatalf("%+v %v", r, err)
	}
	// A file left by an earlier process with the same pid proves nothing.
	if _, err := FindRegistry(4242, 778, []string{dir}); err == nil {
		t.Fatal("a registry of another process (start time differs) was taken as proof")
	}
	write("99.json", `not json`)
	if _, err := FindRegistry(99, 1, []string{dir}); err == nil {
		t.Fatal("an unreadable registry was taken as proof")
	}
	obs := RegistryObservations(r, true)
	if len(obs) != 2 || obs[1].Kind != agent.Waiting {
		t.Fatalf("%+v", obs)
	}
	r.Status = "busy"
	if obs := RegistryObservations(r, false); len(obs) != 1 || obs[0].Kind != agent.Working {
		t.Fatalf("%+v", obs)
	}
	r.Status = "brand-new-status"
	if obs := RegistryObservations(r, false); obs[0].Kind != agent.Note {
		t.Fatalf("an unknown status became %v", obs[0].Kind)
	}
}

func TestMergeSettings(t *testing.T) {
	ours := InjectedSettings("http://127.0.0.1:9/hook", "/bin/lcwrap")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.json"), []byte(`{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"mine"}]}]},"n":1.50}`), 0o600)
	var saved []byte
	save := func(b []byte) (string, error) { saved = b; return "/tmp/merged.json", nil }
	for _, tc := range []struct {
		args []string
		at   int
		err  bool
	}{
		{[]string{"-p", "x", "--settings", `{"model":"opus"}`}, 3, false},
		{[]string{"--settings=s.json", "-p"}, 0, false},
		{[]string{"--settings", "s.json"}, 1, false},
		{[]string{"--settings", "missing.json"}, 0, true},
		{[]string{"--settings", `{"hooks":[]}`}, 0, true},
		{[]string{"--settings", `{"hooks":{"Stop":{}}}`}, 0, true},
		{[]string{"--settings", "{}", "--settings", "{}"}, 0, true},
		{[]string{"--settings"}, 0, true},
	} {
		saved = nil
		out, at, err := MergeSettings(tc.args, ours, dir, save)
		if (err != nil) != tc.err || err != nil && !errors.Is(err, ErrCannotMerge) {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if err != nil {
			if !slices.Equal(out, tc.args) {
				t.Errorf("%q: changed on error: %q", tc.args, out)
			}
			continue
		}
		if at != tc.at {
			t.Errorf("%q: replaced %d, want %d", tc.args, at, tc.at)
		}
		merged := strings.TrimPrefix(out[at], "--settings=")
		if saved != nil {
			if merged != "/tmp/merged.json" {
				t.Errorf("%q: a file's settings must not go on the command line: %q", tc.args, out[at])
			}
			merged = string(saved)
		}
		var m struct {
			Model string                       `json:"model"`
			Hooks map[string][]json.RawMessage `json:"hooks"`
		}
		if err := json.Unmarshal([]byte(merged), &m); err != nil || m.Model != "opus" || len(m.Hooks) != len(Events) {
			t.Errorf("%q: merged %s (%v)", tc.args, merged, err)
		}
		if saved != nil && (len(m.Hooks["Stop"]) != 2 || !strings.Contains(string(m.Hooks["Stop"][0]), "mine") || !strings.Contains(merged, `"n":1.50`)) {
			t.Errorf("the user's own hooks must come first, as written: %s", merged)
		}
	}
}
