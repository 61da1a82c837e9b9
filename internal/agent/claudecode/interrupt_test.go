package claudecode_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/anthropicmock"
	"github.com/lcwrap/lcwrap/internal/doccapture"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// startInTmux runs argv in the test's tmux, in the project directory with
// the world's environment.
func startInTmux(w *world, x *tmux, argv ...string) {
	script := filepath.Join(w.t.TempDir(), "run.sh")
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncd '" + w.project + "' || exit 1\n")
	for _, kv := range w.env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.ContainsAny(k, " '\"$") {
			continue
		}
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	for i, a := range argv {
		argv[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	fmt.Fprintf(&b, "exec %s\n", strings.Join(argv, " "))
	os.WriteFile(script, []byte(b.String()), 0o755)
	x.do("new-session", "-d", "-s", "t", "-x", "120", "-y", "40", script)
}

// TestInteractiveInterrupt: Esc during a long tool call fires no hook;
// lcwrap reads the interruption from the session's transcript and records
// the session waiting for the user, naming that evidence — `status` shows
// the reason.
func TestInteractiveInterrupt(t *testing.T) {
	w := newWorld(t)
	x := newTmux(t)
	startInTmux(w, x, lcwrap(t), "--child-id", "claude-1", "--", "claude", "--permission-mode", "default", "--allowedTools=Bash", anthropicmock.ScenarioSleep+" go")
	show := func() string {
		_, st := sessionStates(w.events())
		return fmt.Sprintf("session states %v\nscreen:\n%s", st, x.screen())
	}
	waitFor(t, "the long Bash call", func() bool {
		id, _ := sessionStates(w.events())
		return id != "" && slices.Contains(activities(w.events(), id), "Bash: "+anthropicmock.SleepCommand)
	}, show)
	// The tool's permission decision comes by telemetry, within its export
	// interval: wait for it, so that the last activity the capture shows
	// is the interruption's, not a decision that arrived after it.
	waitFor(t, "the Bash call's permission decision (telemetry)", func() bool {
		id, _ := sessionStates(w.events())
		return slices.ContainsFunc(activities(w.events(), id), func(a string) bool { return strings.HasPrefix(a, "permission for Bash") })
	}, show)
	if _, st := sessionStates(w.events()); st[len(st)-1] != "running" {
		t.Fatalf("before Esc the session is %v", st)
	}
	x.do("send-keys", "-t", "t", "Escape")
	var evidence string
	waitFor(t, "the interruption recorded", func() bool {
		for _, ev := range w.events() {
			if ev.Source == "claude-code" && ev.Kind == event.KindStateChanged && ev.State == event.StateWaiting {
				d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details)
				if d.WaitingFor == "user" && strings.HasPrefix(d.Evidence, "transcript: [Request interrupted by user") {
					evidence = d.Evidence
					return true
				}
			}
		}
		return false
	}, show)
	out, errs, code := w.run(lcwrap(t), "status", "--json")
	if code != 0 {
		t.Fatalf("status: %d %s", code, errs)
	}
	var st struct {
		Children []struct {
			Source  string `json:"source"`
			Display string `json:"display"`
			Waiting *struct {
				Reason   string `json:"reason"`
				Evidence string `json:"evidence"`
			} `json:"waiting"`
		} `json:"children"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range st.Children {
		if c.Source == "claude-code" {
			found = true
			if c.Display != "waiting" || c.Waiting == nil || c.Waiting.Reason != "user" || c.Waiting.Evidence != evidence {
				t.Fatalf("status shows the interrupted session as %+v %+v", c, c.Waiting)
			}
		}
	}
	if !found {
		t.Fatalf("no session in status:\n%s", out)
	}
	// The telemetry of the request comes within its export interval (1 s):
	// status then shows the agent's cost beside the reason.
	var table string
	waitFor(t, "the session's cost in status", func() bool {
		table, _, _ = w.run(lcwrap(t), "status")
		return strings.Contains(table, "waiting:user") && strings.Contains(table, "≈$")
	}, func() string { return table })
	testtool.Need(t, "jq", "apt-get install jq")
	js, errs, code := w.run("sh", "-c", lcwrap(t)+` status --json | jq '.children[] | select(.source == "claude-code") | {childId, display, waiting, agent}'`)
	if code != 0 {
		t.Fatalf("status --json | jq: %d %s", code, errs)
	}
	doccapture.Check(t, "../../../docs/agents.md", "agent-interrupted",
		"$ lcwrap status\n"+table+"$ lcwrap status --json | jq '.children[] | select(.source == \"claude-code\") | {childId, display, waiting, agent}'\n"+js)
	x.do("send-keys", "-t", "t", "/exit")
	waitFor(t, "/exit typed", func() bool { return strings.Contains(x.screen(), "/exit") }, show)
	x.do("send-keys", "-t", "t", "Enter")
	waitFor(t, "the session's end", func() bool {
		_, st := sessionStates(w.events())
		return len(st) > 0 && st[len(st)-1] == "completed"
	}, show)
}
