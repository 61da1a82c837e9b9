package gemini_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/doccapture"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/geminimock"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// TestHeadlessSubagent: the model calls invoke_agent (Gemini CLI 0.61.0's
// sub-agent tool) for the built-in generalist sub-agent, which runs a
// shell command and calls complete_task. The sub-agent is a child of the
// session, named, started when its transcript appears and ended by its
// summary line (Gemini's GOAL), before its invoke_agent call's end; its
// shell call is the session's activity (its hooks carry the session's id).
func TestHeadlessSubagent(t *testing.T) {
	testtool.Need(t, "gemini", installGemini)
	lc := testtool.Lcwrap(t)
	testtool.Companion(t, "lcwrap-top") // built before Offline re-runs the test in its namespace
	if !testtool.Offline(t) {
		return
	}
	// The session's last answer is held until Gemini's telemetry of the
	// invoke_agent call is in the journal (it exports a batch every 5 s,
	// whenever): so its tool-call decisions come before the turn's end,
	// and what status shows last is the same in every run.
	hold := make(chan struct{})
	w := newWorld(t, geminimock.Step{Calls: []geminimock.Call{geminimock.InvokeAgent("generalist", "run the check")}},
		geminimock.Step{Text: geminimock.FinalText, Hold: hold})
	go func() {
		defer close(hold)
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			for _, ev := range w.journalEvents() {
				if strings.HasPrefix(ev.Activity, "permission for invoke_agent: ") {
					return
				}
			}
		}
	}()
	w.mock.SubagentScript(
		geminimock.Step{Calls: []geminimock.Call{geminimock.Shell("echo lcwrap-sub-ok > lcwrap-sub.txt")}},
		geminimock.Step{Calls: []geminimock.Call{geminimock.CompleteTask("result", map[string]any{"response": "lcwrap mock: checked."})}},
	)
	out, errs, code := w.run(lc, "--child-id", "gemini-1", "--", "gemini", "-p", "lcwrap secret prompt", "-o", "stream-json", "--yolo")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(w.project, "lcwrap-sub.txt")); err != nil || string(b) != "lcwrap-sub-ok\n" {
		t.Fatalf("the sub-agent's shell call did not run: %q %v\nstdout:\n%s\nstderr:\n%s", b, err, out, errs)
	}
	files, _ := filepath.Glob(filepath.Join(w.home, ".gemini", "tmp", "*", "chats", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sub-agent transcripts: %q", files)
	}
	agentID := strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")
	evs := w.events()
	var session, sub string
	for _, ev := range evs {
		if ev.Source != "gemini" || ev.Kind != event.KindCreated {
			continue
		}
		d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details)
		switch {
		case d.AgentID == "":
			session = ev.ChildID
		case d.AgentID == agentID && d.AgentType == "generalist" && ev.Lineage.ParentChildID == session:
			sub = ev.ChildID
		default:
			t.Errorf("created %s under %s: %+v", ev.ChildID, ev.Lineage.ParentChildID, d)
		}
	}
	if session == "" || sub == "" {
		t.Fatalf("no session or sub-agent (%s):\n%s", agentID, summary(evs, session))
	}
	got := regexp.MustCompile(`(?m)^diagnostic\n`).ReplaceAllString(summary(evs, sub), "")
	if want := "created created\nstate_changed starting\nstate_changed running\nactivity generalist sub-agent started\nterminal completed\n"; got != want {
		t.Errorf("sub-agent %s:\n%s\nwant:\n%s", sub, got, want)
	}
	// In the journal's order: the sub-agent starts after its invoke_agent
	// call, before its shell call (the session's activity), and ends
	// before the invoke_agent call's end.
	var order []string
	for _, ev := range evs {
		switch {
		case ev.ChildID == sub && (ev.Kind == event.KindCreated || ev.Kind == event.KindTerminal):
			order = append(order, "sub-agent "+string(ev.Kind))
			if ev.Kind == event.KindTerminal {
				d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details)
				if d.Claim != agent.ClaimAgentReportedEnd || d.Reason != "GOAL" {
					t.Errorf("sub-agent's end: %+v", d)
				}
			}
		case ev.ChildID == session && ev.Kind == event.KindActivity && strings.HasPrefix(ev.Activity, "invoke_agent"),
			ev.ChildID == session && ev.Kind == event.KindActivity && strings.HasPrefix(ev.Activity, "run_shell_command:"):
			order = append(order, ev.Activity)
		}
	}
	if want := "invoke_agent|sub-agent created|run_shell_command: echo lcwrap-sub-ok > lcwrap-sub.txt|sub-agent terminal|invoke_agent done"; strings.Join(order, "|") != want {
		t.Errorf("order:\n%s\nwant:\n%s", strings.Join(order, "|"), want)
	}
	if _, errs, code := w.run(lc, "validate", w.journal); code != 0 {
		t.Errorf("validate: %d %s", code, errs)
	}
	// What status, top and report show of it (docs/agents-gemini.md).
	st, errs, code := w.run(lc, "status", "--all")
	if code != 0 || !strings.Contains(st, sub) {
		t.Fatalf("status --all: %d %s\n%s", code, errs, st)
	}
	doccapture.Check(t, "../../../docs/agents-gemini.md", "gemini-subagent-status", "$ lcwrap status --all\n"+st)
	doccapture.Check(t, "../../../docs/agents-gemini.md", "gemini-subagent-top", "$ lcwrap top\n"+w.top(lc, 8, "e", sub, "generalist sub-agent started"))
	html := w.report(lc, "report-gemini-subagent.png")
	for _, want := range []string{sub, "generalist sub-agent started", agentID} {
		if !strings.Contains(html, want) {
			t.Errorf("the report does not name %q", want)
		}
	}
}
