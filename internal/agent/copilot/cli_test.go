package copilot_test

// These tests run the real GitHub Copilot CLI (@github/copilot 1.0.102,
// installed by .ci/run) under a freshly built lcwrap, in its
// bring-your-own-model mode (COPILOT_OFFLINE, no sign-in), offline against
// the chat completions stand-in of internal/chatmock on 127.0.0.1, each
// with a HOME of its own, inside a network namespace whose only interface
// is loopback (testtool.Offline).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/agent/copilot"
	"github.com/lcwrap/lcwrap/internal/chatmock"
	"github.com/lcwrap/lcwrap/internal/doccapture"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

const installCopilot = "npm install -g @github/copilot@1.0.102"

func TestMain(m *testing.M) {
	code := m.Run()
	testtool.Cleanup()
	os.Exit(code)
}

// The mock's scripts: a shell call; a general-purpose sub-agent (the
// task tool) whose own conversation makes a shell call.
var scripts = []chatmock.Script{
	{Marker: "lcwrap-scenario:bash", Steps: []chatmock.Step{{Calls: []chatmock.Call{{Name: "bash", Args: map[string]any{"command": "echo lcwrap-mock-ok > lcwrap-mock.txt", "description": "lcwrap mock"}}}}}},
	{Marker: "lcwrap-subagent-task", Steps: []chatmock.Step{{Calls: []chatmock.Call{{Name: "bash", Args: map[string]any{"command": "echo sub > sub.txt", "description": "sub"}}}}}},
	{Marker: "lcwrap-scenario:agent", Steps: []chatmock.Step{{Calls: []chatmock.Call{{Name: "task", Args: map[string]any{"agent_type": "general-purpose", "description": "lcwrap sub", "prompt": "lcwrap-subagent-task: run it", "name": "lcwrapsub"}}}}}},
}

type world struct {
	t                      *testing.T
	home, project, journal string
	mock                   *chatmock.Server
	env                    []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, home: t.TempDir(), project: t.TempDir()}
	w.journal = filepath.Join(t.TempDir(), "journal.jsonl")
	mock, err := chatmock.Start(scripts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mock.Close() })
	w.mock = mock
	// Copilot unpacks itself (235 MB) into its cache directory: shared by
	// the tests, so that it does so once.
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = filepath.Join(os.TempDir(), "lcwrap-test-cache")
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LCWRAP_") || strings.HasPrefix(k, "COPILOT_") || strings.HasPrefix(k, "GH_") ||
			strings.HasPrefix(k, "GITHUB_") || k == "HOME" || k == "XDG_CACHE_HOME" || k == "XDG_CONFIG_HOME" || k == "XDG_STATE_HOME" {
			continue
		}
		w.env = append(w.env, kv)
	}
	w.env = append(w.env, "HOME="+w.home, "XDG_CACHE_HOME="+cache, "LCWRAP_JOURNAL="+w.journal, "COPILOT_OFFLINE=true",
		"COPILOT_PROVIDER_BASE_URL="+mock.URL, "COPILOT_PROVIDER_API_KEY=lcwrap-test-not-a-key", "COPILOT_MODEL=gpt-4.1",
		"COPILOT_AUTO_UPDATE=false", "NO_COLOR=1", "GORACE=atexit_sleep_ms=0")
	return w
}

func (w *world) run(argv ...string) (string, string, int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = w.project, w.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		w.t.Fatalf("%v: still running after three minutes\n%s\n%s", argv, out.String(), errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// events reads the journal as far as it is written.
func (w *world) events() []event.Event {
	b, _ := os.ReadFile(w.journal)
	var evs []event.Event
	for _, l := range bytes.Split(b, []byte("\n")) {
		var ev event.Event
		if json.Unmarshal(l, &ev) == nil {
			evs = append(evs, ev)
		}
	}
	return evs
}

// states lists the state changes of the copilot children whose id ends
// as suffix says (a session: no "."; a sub-agent: with one).
func states(evs []event.Event, sub bool) []string {
	var st []string
	for _, ev := range evs {
		if ev.Source != "copilot" || strings.Contains(ev.ChildID, ".") != sub || (ev.Kind != event.KindStateChanged && ev.Kind != event.KindTerminal) {
			continue
		}
		s := string(ev.State)
		if d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details); d.WaitingFor != "" {
			s += ":" + d.WaitingFor
		}
		st = append(st, s)
	}
	return st
}

// TestHeadlessSubagent: `lcwrap -- copilot -p … --output-format json
// --allow-all-tools`, whose task tool starts a sub-agent that runs a shell
// command; exit 0. The session is a child of the process, the sub-agent a
// child of the session, the shell call the sub-agent's activity; the
// result is Copilot's report; the run's plugin is gone.
func TestHeadlessSubagent(t *testing.T) {
	testtool.Need(t, "copilot", installCopilot)
	lc := testtool.Lcwrap(t)
	testtool.Companion(t, "lcwrap-top") // built before Offline re-runs the test in its namespace
	if !testtool.Offline(t) {
		return
	}
	w := newWorld(t)
	out, errs, code := w.run(lc, "--child-id", "copilot-1", "--", "copilot", "-p", "lcwrap-scenario:agent go", "--output-format", "json", "--allow-all-tools", "--no-auto-update")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(w.project, "sub.txt")); err != nil || string(b) != "sub\n" {
		t.Fatalf("the sub-agent's shell call did not run: %q %v\nstderr:\n%s", b, err, errs)
	}
	evs := w.events()
	var proc string
	var created, terminal *event.Event
	parents := map[string]string{}
	activity := map[string][]string{}
	for i, ev := range evs {
		switch {
		case ev.Source == "lcwrap" && ev.Kind == event.KindCreated:
			proc, created = ev.ChildID, &evs[i]
		case ev.Source == "lcwrap" && ev.Kind == event.KindTerminal:
			terminal = &evs[i]
		case ev.Source == "copilot" && ev.Kind == event.KindCreated:
			parents[ev.ChildID] = ev.Lineage.ParentChildID
		case ev.Source == "copilot" && ev.Kind == event.KindActivity:
			activity[ev.ChildID] = append(activity[ev.ChildID], ev.Activity)
		}
	}
	if created == nil || terminal == nil || len(parents) != 2 {
		t.Fatalf("want the process, a session and a sub-agent; children %v", parents)
	}
	var session, sub string
	for c, p := range parents {
		if p == proc {
			session = c
		} else {
			sub = c
		}
	}
	if parents[sub] != session {
		t.Errorf("sub-agent %s's parent %q, want the session %q", sub, parents[sub], session)
	}
	// Copilot's own token counts, from its session file: the mock answers
	// 10 prompt and 5 completion tokens a request; the cost stays unknown.
	var usage *agent.AgentTotals
	for _, ev := range evs {
		if d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details); ev.ChildID == session && d.Usage != nil {
			usage = d.Usage
		}
	}
	if u := usage; u == nil || u.Requests < 2 || u.Input != 10*u.Requests || u.Output != 5*u.Requests || !u.CostUnknown || u.ReportedBy != "copilot" || u.Via != copilot.ViaUsage {
		t.Errorf("the session's usage: %+v", usage)
	}
	if got, want := states(evs, false), []string{"starting", "running", "waiting:user", "completed"}; !slices.Equal(got, want) {
		t.Errorf("session states %v, want %v", got, want)
	}
	if got, want := states(evs, true), []string{"starting", "running", "completed"}; !slices.Equal(got, want) {
		t.Errorf("sub-agent states %v, want %v", got, want)
	}
	if !slices.Contains(activity[sub], "bash done") || !slices.Contains(activity[session], "task done") {
		t.Errorf("activity %v", activity)
	}
	var cd struct {
		Agent   agent.AgentLaunch `json:"agent"`
		Command []string          `json:"command"`
	}
	json.Unmarshal(created.Details, &cd)
	if len(cd.Agent.AddedArgs) != 2 || cd.Agent.AddedArgs[0] != "--plugin-dir" || cd.Agent.AddedAt != 1 {
		t.Fatalf("created details.agent: %s", created.Details)
	}
	if _, err := os.Stat(cd.Agent.AddedArgs[1]); !os.IsNotExist(err) {
		t.Errorf("the run's plugin outlived the run: %v", err)
	}
	if strings.Contains(string(created.Details), "lcwrap-scenario") {
		t.Errorf("the prompt was recorded: %s", created.Details)
	}
	var td struct {
		Report *agent.AgentReport `json:"agentReport"`
	}
	json.Unmarshal(terminal.Details, &td)
	if r := td.Report; r == nil || r.ReportedBy != "copilot" || r.IsError == nil || *r.IsError || r.SessionID == "" {
		t.Errorf("agentReport: %s", terminal.Details)
	}
	if _, errs, code := w.run(lc, "validate", w.journal); code != 0 {
		t.Errorf("validate: %d %s", code, errs)
	}
	// What status, top and report show of it (docs/agents-copilot.md).
	st, errs, code := w.run(lc, "status", "--all")
	if code != 0 || !strings.Contains(st, sub) {
		t.Fatalf("status --all: %d %s\n%s", code, errs, st)
	}
	doccapture.Check(t, "../../../docs/agents-copilot.md", "copilot-subagent-status", "$ lcwrap status --all\n"+st)
	doccapture.Check(t, "../../../docs/agents-copilot.md", "copilot-subagent-top", "$ lcwrap top\n"+w.top(lc, 8, "e", sub, "sub-agent turn ended"))
	html := w.report(lc, "report-copilot-subagent.png")
	for _, want := range []string{sub, "general-purpose sub-agent started", "sub-agent turn ended"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report does not name %q", want)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool, show func() string) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 90s for %s\n%s", what, show())
		}
	}
}

// TestTUIPermissionUnderPTY drives the real TUI under `lcwrap --pty` in
// tmux: its folder-trust dialog (no hook says it: the session is not seen
// yet), a shell call's permission prompt (waiting for permission: its
// notification hook), allowed, the turn's end (waiting for the user), and
// /exit (the session ends as Copilot reports it).
func TestTUIPermissionUnderPTY(t *testing.T) {
	testtool.Need(t, "copilot", installCopilot)
	testtool.Need(t, "tmux", "apt-get install tmux")
	lc := testtool.Lcwrap(t)
	testtool.Companion(t, "lcwrap-top") // built before Offline re-runs the test in its namespace
	if !testtool.Offline(t) {
		return
	}
	w := newWorld(t)
	x := testtool.NewTmux(t)
	script := filepath.Join(t.TempDir(), "run.sh")
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncd '" + w.project + "' || exit 1\n")
	for _, kv := range w.env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.ContainsAny(k, " '\"$") || k == "TERM" {
			continue
		}
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	fmt.Fprintf(&b, "exec %s --child-id copilot-1 --pty -- copilot --no-auto-update\n", lc)
	os.WriteFile(script, []byte(b.String()), 0o755)
	x.Do("new-session", "-d", "-s", "t", "-x", "150", "-y", "45", script)
	show := func() string {
		evs := w.events()
		return fmt.Sprintf("session states %v\nscreen:\n%s", states(evs, false), x.Screen("t"))
	}
	waitFor(t, "the folder trust dialog", func() bool { return strings.Contains(x.Screen("t"), "Do you trust the files in this folder?") }, show)
	x.Do("send-keys", "-t", "t", "Enter") // 1. Yes
	waitFor(t, "the prompt", func() bool { return !strings.Contains(x.Screen("t"), "Do you trust") }, show)
	x.Do("send-keys", "-t", "t", "-l", "lcwrap-scenario:bash go")
	waitFor(t, "the prompt typed", func() bool { return strings.Contains(x.Screen("t"), "lcwrap-scenario:bash go") }, show)
	x.Do("send-keys", "-t", "t", "Enter")
	waitFor(t, "the permission prompt", func() bool {
		return slices.Contains(states(w.events(), false), "waiting:permission") && strings.Contains(x.Screen("t"), "Do you want to run this command?")
	}, show)
	// What status and top show of the wait (docs/agents-copilot.md).
	st, errs, code := w.run(lc, "status")
	if code != 0 || !strings.Contains(st, "waiting:permission") {
		t.Fatalf("status: %d %s\n%s", code, errs, st)
	}
	doccapture.Check(t, "../../../docs/agents-copilot.md", "copilot-wait-status", "$ lcwrap status\n"+st)
	doccapture.Check(t, "../../../docs/agents-copilot.md", "copilot-wait-top", "$ lcwrap top\n"+w.top(lc, 7, "", "waiting:permission", "waiting for permission"))
	x.Do("send-keys", "-t", "t", "Enter") // 1. Yes
	waitFor(t, "running again, then the turn's end", func() bool {
		st := states(w.events(), false)
		i := slices.Index(st, "waiting:permission")
		return i >= 0 && slices.Contains(st[i:], "running") && slices.Contains(st[i:], "waiting:user")
	}, show)
	if _, err := os.Stat(filepath.Join(w.project, "lcwrap-mock.txt")); err != nil {
		t.Fatalf("the allowed shell call did not run: %v", err)
	}
	x.Do("send-keys", "-t", "t", "-l", "/exit")
	waitFor(t, "/exit typed", func() bool { return strings.Contains(x.Screen("t"), "/exit") }, show)
	x.Do("send-keys", "-t", "t", "Enter")
	sent := time.Now()
	waitFor(t, "the process's end", func() bool {
		if time.Since(sent) > 5*time.Second && strings.Contains(x.Screen("t"), "/exit") {
			x.Try("send-keys", "-t", "t", "Enter") // a completion menu took the first
			sent = time.Now()
		}
		for _, ev := range w.events() {
			if ev.Source == "lcwrap" && ev.Kind == event.KindTerminal {
				return true
			}
		}
		return false
	}, show)
	want := []string{"starting", "running", "waiting:permission", "running", "waiting:user", "completed"}
	if got := states(w.events(), false); !slices.Equal(got, want) {
		t.Errorf("session states %v, want %v", got, want)
	}
	// The wait is the session file's (its notification hook said it too:
	// counted, not a second wait); its end says who answered.
	var waitFrom string
	var answer *agent.AgentDecision
	for _, ev := range w.events() {
		if ev.Source != "copilot" || ev.Kind != event.KindStateChanged {
			continue
		}
		d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details)
		switch {
		case ev.State == event.StateWaiting && d.WaitingFor == string(event.WaitPermission):
			waitFrom = d.Evidence
		case ev.State == event.StateRunning && d.Evidence == copilot.NativeCompleted:
			answer = d.Decision
		}
	}
	if html := w.report(lc, "report-copilot-wait.png"); !regexp.MustCompile(`waiting for permission [^<]*\(opened by permission\.requested, closed by permission\.completed\)`).MatchString(html) {
		i := strings.Index(html, "waiting for permission")
		t.Errorf("the report does not show the wait for permission and its answer: %.300s", html[max(i, 0):])
	}
	if waitFrom != copilot.NativeRequested || answer == nil || answer.Decision != "approved" || answer.Source != "human_response" {
		t.Errorf("the wait from %q, its answer %+v", waitFrom, answer)
	}
	if _, errs, code := w.run(lc, "validate", w.journal); code != 0 {
		t.Errorf("validate: %d %s", code, errs)
	}
}

// TestFailingHookFailsOpen: lcwrap's hooks as --print-settings writes them
// (the run's relay differs only by --relay), their lcwrap gone, stop
// nothing: the prompt is answered, the tool runs, copilot exits 0.
func TestFailingHookFailsOpen(t *testing.T) {
	testtool.Need(t, "copilot", installCopilot)
	if !testtool.Offline(t) {
		return
	}
	w := newWorld(t)
	plugin := t.TempDir()
	for name, body := range map[string]string{
		".plugin/plugin.json": `{"name":"lcwrap-gone","version":"1.0.0","hooks":"hooks/hooks.json"}`,
		"hooks/hooks.json":    copilot.UserSettings("/nonexistent/lcwrap"),
	} {
		p := filepath.Join(plugin, name)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, errs, code := w.run("copilot", "--plugin-dir", plugin, "-p", "lcwrap-scenario:bash go", "--allow-all-tools", "--no-auto-update")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(w.project, "lcwrap-mock.txt")); err != nil {
		t.Fatalf("the tool did not run behind failing hooks: %v\nstdout:\n%s\nstderr:\n%s", err, out, errs)
	}
}
