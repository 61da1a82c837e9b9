package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/eventcap"
)

func newTracker(t *testing.T, cfg Config) (*Tracker, *eventcap.Sink) {
	t.Helper()
	sink := &eventcap.Sink{}
	cfg.Emitter = emit.New(emit.Options{Source: "claude-code"}, sink)
	if cfg.Source == "" {
		cfg.Source = "claude-code"
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "cc"
	}
	return New(cfg), sink
}

func obs(kind Kind, native string) Observation {
	return Observation{Kind: kind, Session: "s1", Native: native}
}

func TestTrackerSessionLifecycle(t *testing.T) {
	tr, sink := newTracker(t, Config{Parent: "claude-abc", Root: "claude-abc"})
	bash := obs(ToolStarted, "PreToolUse")
	bash.Tool, bash.Summary = "Bash", "echo hi"
	bashDone := obs(ToolEnded, "PostToolUse")
	bashDone.Tool = "Bash"
	perm := obs(Waiting, "PermissionRequest")
	perm.WaitingFor, perm.Tool = event.WaitPermission, "Bash"
	sub := Observation{Kind: SubagentStarted, Session: "s1", Agent: "a1", AgentType: "Explore", Native: "SubagentStart"}
	subTool := Observation{Kind: ToolStarted, Session: "s1", Agent: "a1", Tool: "Glob", Summary: "*.go", Native: "PreToolUse"}
	subStop := Observation{Kind: SubagentStopped, Session: "s1", Agent: "a1", Native: "SubagentStop"}
	end := obs(SessionEnded, "SessionEnd")
	end.Reason = "other"
	for _, o := range []Observation{
		obs(SessionStarted, "SessionStart"),
		obs(PromptSubmitted, "UserPromptSubmit"),
		bash, perm, perm, bashDone,
		sub, subTool, subStop, subStop,
		obs(TurnEnded, "Stop"), obs(TurnEnded, "Stop"),
		obs(PromptSubmitted, "UserPromptSubmit"),
		end, end,
	} {
		if err := tr.Apply(Observe(o)); err != nil {
			t.Fatal(err)
		}
	}
	if errs := tr.Errors(); len(errs) > 0 {
		t.Fatal(errs)
	}
	sink.Check(t)
	want := []string{
		"created created", "state_changed starting", "state_changed running", "activity prompt submitted",
		"activity Bash: echo hi", "state_changed waiting", "activity waiting for permission (Bash)", "activity waiting for permission (Bash)",
		"state_changed running", "activity Bash done",
		"state_changed waiting", "activity turn ended; waiting for the user", "activity turn ended; waiting for the user",
		"state_changed running", "activity prompt submitted", "terminal completed", "diagnostic",
	}
	got := sink.Of("cc-s1")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("session events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantSub := []string{"created created", "state_changed starting", "state_changed running", "activity Explore sub-agent started", "activity Glob: *.go", "terminal completed", "diagnostic"}
	if got := sink.Of("cc-s1.a1"); strings.Join(got, "\n") != strings.Join(wantSub, "\n") {
		t.Fatalf("sub-agent events:\n%s", strings.Join(got, "\n"))
	}
	for _, ev := range sink.Events() {
		switch ev.ChildID {
		case "cc-s1":
			if ev.Lineage.ParentChildID != "claude-abc" || ev.Lineage.RootChildID != "claude-abc" {
				t.Fatalf("session lineage %+v", ev.Lineage)
			}
		case "cc-s1.a1":
			if ev.Lineage.ParentChildID != "cc-s1" || ev.Lineage.RootChildID != "claude-abc" {
				t.Fatalf("sub-agent lineage %+v", ev.Lineage)
			}
		}
		if ev.Capabilities.History != "known" {
			t.Fatalf("history should be known when the start was seen: %+v", ev)
		}
		if ev.Kind == event.KindTerminal {
			var d map[string]any
			json.Unmarshal(ev.Details, &d)
			if d["claim"] != ClaimAgentReportedEnd {
				t.Fatalf("terminal claim %v", d["claim"])
			}
		}
	}
	if tr.End(ProcessEnd{ChildID: "claude-abc"}) == nil {
		t.Fatal("End should name the sessions it saw")
	}
}

func TestTrackerProcessEndLosesOpenChildrenOnce(t *testing.T) {
	tr, sink := newTracker(t, Config{Parent: "p", RunTag: "r1"})
	tr.Apply(Observe(Observation{Kind: PromptSubmitted, Session: "0123456789abcdef", Native: "UserPromptSubmit"}))
	tr.Apply(Observe(Observation{Kind: SubagentStarted, Session: "0123456789abcdef", Agent: "ag", Native: "SubagentStart"}))
	extra := tr.End(ProcessEnd{ChildID: "p", Exit: event.ExitCode(1)})
	if extra == nil {
		t.Fatal("no details for the process")
	}
	if tr.End(ProcessEnd{ChildID: "p"}) != nil {
		t.Fatal("End twice")
	}
	if err := tr.Apply(Observe(obs(PromptSubmitted, "x"))); err != ErrEnded {
		t.Fatalf("after End: %v", err)
	}
	sink.Check(t)
	id := "cc-01234567-r1"
	got := sink.Of(id)
	if got[len(got)-1] != "terminal lost" || got[0] != "created created" {
		t.Fatalf("session: %v", got)
	}
	if got := sink.Of(id + ".ag"); got[len(got)-1] != "terminal lost" {
		t.Fatalf("sub-agent: %v", got)
	}
	for _, ev := range sink.Events() {
		if ev.ChildID == id && ev.Capabilities.History != "unknown" {
			t.Fatal("a session first seen at a prompt has unknown history")
		}
	}
}

func TestTrackerNormalizationCounts(t *testing.T) {
	tr, sink := newTracker(t, Config{})
	tr.Apply(Unrecognize("", "Mystery"))
	tr.Apply(Observe(obs(SessionStarted, "SessionStart")))
	for range 3 {
		tr.Apply(Unrecognize("s1", "Mystery"))
		tr.Apply(Ignore("s1", "bookkeeping"))
	}
	for i := range 40 {
		tr.Apply(Unrecognize("s1", strings.Repeat("k", i+1)))
	}
	end := obs(SessionEnded, "SessionEnd")
	tr.Apply(Observe(end))
	sink.Check(t)
	diags := 0
	var summary map[string]any
	for _, ev := range sink.Events() {
		if ev.Kind == event.KindDiagnostic {
			diags++
			var d map[string]any
			json.Unmarshal(ev.Details, &d)
			if n, ok := d["normalization"].(map[string]any)["counts"]; ok {
				summary = n.(map[string]any)
			}
		}
	}
	if diags > MaxCountKinds+2 {
		t.Fatalf("%d diagnostics: not bounded", diags)
	}
	if summary["unrecognized:Mystery"] != float64(3) || summary["ignored:bookkeeping"] != float64(3) || summary[OtherKind] == nil {
		t.Fatalf("summary %v", summary)
	}
	if extra := tr.End(ProcessEnd{}); extra == nil || extra.Unattributed == nil {
		t.Fatalf("the payload without a session must be reported: %v", extra)
	}
}

func TestTrackerEndWithoutWorkIsLost(t *testing.T) {
	tr, sink := newTracker(t, Config{})
	tr.Apply(Observe(obs(SessionStarted, "SessionStart"), obs(SessionEnded, "SessionEnd")))
	sink.Check(t)
	got := sink.Of("cc-s1")
	if got[len(got)-1] != "terminal lost" {
		t.Fatalf("%v", got)
	}
}

// TestTrackerLatePayloads: payloads after a session's end (an async hook
// finishing late) open no new session; only a new start does.
func TestTrackerLatePayloads(t *testing.T) {
	tr, sink := newTracker(t, Config{})
	sub := Observation{Kind: SubagentStarted, Session: "s1", Agent: "a1", Native: "SubagentStart"}
	tr.Apply(Observe(obs(SessionStarted, "SessionStart"), obs(PromptSubmitted, "UserPromptSubmit"), sub, obs(SessionEnded, "SessionEnd")))
	late := obs(ToolEnded, "PostToolUse")
	late.Tool = "Bash"
	stop := Observation{Kind: SubagentStopped, Session: "s1", Agent: "a1", Native: "SubagentStop"}
	tr.Apply(Observe(late, stop, obs(TurnEnded, "Stop")))
	sink.Check(t)
	for _, ev := range sink.Events() {
		if ev.ChildID == "cc-s1+2" {
			t.Fatalf("a late payload opened a new lifecycle: %+v", ev)
		}
	}
	if got := sink.Of("cc-s1.a1"); got[len(got)-1] != "diagnostic" {
		t.Fatalf("a late SubagentStop: %v", got)
	}
	tr.Apply(Observe(Observation{Kind: SessionStarted, Session: "s1", Source: "resume", Native: "SessionStart"}))
	if got := sink.Of("cc-s1+2"); len(got) == 0 || got[0] != "created created" {
		t.Fatalf("a resumed session: %v", got)
	}
}

// TestTrackerOversizedEventRefusedAlone: an observation whose event would
// not fit a journal line (a fact too long, an id too long) is refused
// alone; the session's other events are written (issue 23 item 4).
func TestTrackerOversizedEventRefusedAlone(t *testing.T) {
	tr, sink := newTracker(t, Config{Parent: "claude-abc", Root: "claude-abc"})
	long := Observation{Kind: SessionStarted, Session: strings.Repeat("x", 64<<10), Native: "SessionStart"}
	note := obs(Note, "PreCompact")
	note.Summary = "compacting"
	note.Facts.Cwd = strings.Repeat("d", 70<<10)
	end := obs(SessionEnded, "SessionEnd")
	for _, o := range []Observation{long, obs(SessionStarted, "SessionStart"), obs(PromptSubmitted, "UserPromptSubmit"), note, end} {
		if err := tr.Apply(Observe(o)); err != nil {
			t.Fatal(err)
		}
	}
	// The oversized note is refused alone here, or cut to fit by the
	// emitter (issue 23 item 2): either way no line is over the cap.
	if errs := tr.Errors(); len(errs) > 1 || len(errs) == 1 && !strings.Contains(errs[0].Error(), "refused alone") {
		t.Errorf("errors %v, want at most the oversized activity refused alone", errs)
	}
	var states []string
	for _, ev := range sink.Events() {
		if line, _ := ev.Marshal(); len(ev.ChildID) > 100 || len(line) > maxEventLine {
			t.Fatalf("an event of %d bytes reached the sink", len(line))
		}
		states = append(states, string(ev.Kind)+":"+string(ev.State))
	}
	if len(states) == 0 || states[len(states)-1] != "terminal:completed" {
		t.Fatalf("events %v: the session's end is missing", states)
	}
	got := tr.End(ProcessEnd{ChildID: "claude-abc"})
	if got == nil || got.Unattributed["unrecognized:(session id over 256 bytes)"] != 1 {
		t.Errorf("the refused payload is not counted: %+v", got)
	}
}

// TestTrackerSessionsSharingAPrefixStayApart: two sessions of one run whose
// ids share their first 8 characters are two children (issue 23 item 11).
func TestTrackerSessionsSharingAPrefixStayApart(t *testing.T) {
	tr, sink := newTracker(t, Config{Parent: "p", RunTag: "r1"})
	a, b := "01234567-aaaa", "01234567-bbbb"
	for _, o := range []Observation{
		{Kind: SessionStarted, Session: a, Native: "SessionStart"},
		{Kind: SessionStarted, Session: b, Native: "SessionStart"},
		{Kind: PromptSubmitted, Session: a, Native: "UserPromptSubmit"},
		{Kind: PromptSubmitted, Session: b, Native: "UserPromptSubmit"},
		{Kind: SessionEnded, Session: a, Native: "SessionEnd"},
		{Kind: SessionStarted, Session: a, Native: "SessionStart"},
	} {
		if err := tr.Apply(Observe(o)); err != nil {
			t.Fatal(err)
		}
	}
	if errs := tr.Errors(); len(errs) > 0 {
		t.Fatal(errs)
	}
	sink.Check(t)
	ids := map[string]bool{}
	for _, ev := range sink.Events() {
		ids[ev.ChildID] = true
	}
	want := []string{"cc-01234567-r1", "cc-01234567-bbbb-r1", "cc-01234567-r1+2"}
	for _, id := range want {
		if !ids[id] {
			t.Errorf("no child %s among %v", id, ids)
		}
	}
	if len(ids) != len(want) {
		t.Errorf("children %v, want %v", ids, want)
	}
}
