package gemini_test

// These tests run the real Gemini CLI (@google/gemini-cli 0.61.0,
// installed by .ci/run) under a freshly built lcwrap, offline against the
// Gemini API stand-in of internal/geminimock on 127.0.0.1, each with a
// HOME of its own, inside a network namespace whose only interface is
// loopback (testtool.Offline): what the CLI tried to reach elsewhere
// failed.

import (
	"bufio"
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
	"github.com/lcwrap/lcwrap/internal/agent/gemini"
	"github.com/lcwrap/lcwrap/internal/doccapture"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/geminimock"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

const installGemini = "npm install -g @google/gemini-cli@0.61.0"

func TestMain(m *testing.M) {
	code := m.Run()
	testtool.Cleanup()
	os.Exit(code)
}

// world is one test's HOME, project directory, journal and mock API.
type world struct {
	t                      *testing.T
	home, project, journal string
	mock                   *geminimock.Server
	env                    []string
}

func newWorld(t *testing.T, script ...geminimock.Step) *world {
	t.Helper()
	w := &world{t: t, home: t.TempDir(), project: t.TempDir()}
	w.journal = filepath.Join(t.TempDir(), "journal.jsonl")
	mock, err := geminimock.Start(script...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mock.Close() })
	w.mock = mock
	// API-key auth, no folder trust question, no usage statistics, no
	// update check.
	settings := `{"security":{"auth":{"selectedType":"gemini-api-key"},"folderTrust":{"enabled":false}},` +
		`"privacy":{"usageStatisticsEnabled":false},"general":{"disableAutoUpdate":true,"disableUpdateNag":true}}`
	if err := os.MkdirAll(filepath.Join(w.home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.home, ".gemini", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LCWRAP_") || strings.HasPrefix(k, "GEMINI_") || strings.HasPrefix(k, "GOOGLE_") ||
			k == "HOME" || k == "XDG_CACHE_HOME" || k == "XDG_CONFIG_HOME" || k == "XDG_RUNTIME_DIR" {
			continue
		}
		w.env = append(w.env, kv)
	}
	w.env = append(w.env, "HOME="+w.home, "LCWRAP_JOURNAL="+w.journal, "GEMINI_API_KEY=lcwrap-test-not-a-key",
		"GOOGLE_GEMINI_BASE_URL="+mock.URL, "NO_COLOR=1", "GORACE=atexit_sleep_ms=0")
	return w
}

// run runs argv in the project directory; it is killed (with its group)
// after two minutes.
func (w *world) run(argv ...string) (string, string, int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
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
		w.t.Fatalf("%v: still running after two minutes\n%s\n%s", argv, out.String(), errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// events reads the journal's events.
func (w *world) events() []event.Event {
	w.t.Helper()
	b, err := os.ReadFile(w.journal)
	if err != nil {
		w.t.Fatal(err)
	}
	var evs []event.Event
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev event.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			w.t.Fatalf("journal line: %v\n%s", err, sc.Text())
		}
		evs = append(evs, ev)
	}
	return evs
}

// summary is one child's events as "kind state/activity" lines.
func summary(evs []event.Event, child string) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.ChildID != child {
			continue
		}
		b.WriteString(string(ev.Kind))
		switch {
		case ev.State != "":
			b.WriteString(" " + string(ev.State))
		case ev.Activity != "":
			b.WriteString(" " + ev.Activity)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestHeadlessShell: `lcwrap -- gemini -p … -o stream-json --yolo`, one
// shell call, exit 0. The session is a child of the process, its tool
// call activity, its end Gemini's report; the process's terminal event
// carries Gemini's result as its report; the run's settings file is gone.
func TestHeadlessShell(t *testing.T) {
	testtool.Need(t, "gemini", installGemini)
	lc := testtool.Lcwrap(t)
	if !testtool.Offline(t) {
		return
	}
	w := newWorld(t, geminimock.Step{Calls: []geminimock.Call{geminimock.Shell("echo lcwrap-mock-ok > lcwrap-mock.txt")}})
	out, errs, code := w.run(lc, "--", "gemini", "-p", "lcwrap secret prompt", "-o", "stream-json", "--yolo")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(w.project, "lcwrap-mock.txt")); err != nil || string(b) != "lcwrap-mock-ok\n" {
		t.Fatalf("the shell call did not run: %q %v\nstdout:\n%s\nstderr:\n%s", b, err, out, errs)
	}
	if !strings.Contains(out, `"type":"result"`) {
		t.Errorf("stream-json did not pass through:\n%s", out)
	}
	evs := w.events()
	var proc, session string
	var created, terminal *event.Event
	for i, ev := range evs {
		switch {
		case ev.Source == "lcwrap" && ev.Kind == event.KindCreated:
			proc, created = ev.ChildID, &evs[i]
		case ev.Source == "lcwrap" && ev.Kind == event.KindTerminal:
			terminal = &evs[i]
		case ev.Source == "gemini" && ev.Kind == event.KindCreated:
			session = ev.ChildID
			if ev.Lineage.ParentChildID != proc {
				t.Errorf("session's parent %q, want the process %q", ev.Lineage.ParentChildID, proc)
			}
		}
	}
	if created == nil || terminal == nil || session == "" {
		t.Fatalf("no process or session in the journal:\n%s", summary(evs, proc))
	}
	var cd struct {
		Agent   agent.AgentLaunch `json:"agent"`
		Command []string          `json:"command"`
	}
	json.Unmarshal(created.Details, &cd)
	if strings.Contains(string(created.Details), "secret prompt") {
		t.Errorf("the prompt was recorded: %s", created.Details)
	}
	hooks := len(cd.Agent.Evidence) > 0 && strings.HasPrefix(cd.Agent.Evidence[0], "hooks:")
	t.Logf("evidence: %q", cd.Agent.Evidence)
	// Gemini's telemetry comes when its exporter sends it (a batch every
	// 5 s), between any two lines: its diagnostics are checked below
	// (checkUsage), and its decisions are activity lines wherever they
	// land.
	got := regexp.MustCompile(`(?m)^(diagnostic|activity permission for .*)\n`).ReplaceAllString(summary(evs, session), "")
	var want string
	if hooks {
		// As root (in the namespace): the hooks are the evidence.
		want = "created created\nstate_changed starting\nstate_changed running\nactivity prompt submitted\n" +
			"activity run_shell_command: echo lcwrap-mock-ok > lcwrap-mock.txt\nactivity run_shell_command done\n" +
			"state_changed waiting\nactivity turn ended; waiting for the user\nterminal completed\n"
		m := regexp.MustCompile(`GEMINI_CLI_SYSTEM_DEFAULTS_PATH=(\S+)\)`).FindStringSubmatch(cd.Agent.Evidence[0])
		if m == nil {
			t.Fatalf("no settings file in %q", cd.Agent.Evidence)
		}
		if _, err := os.Stat(filepath.Dir(m[1])); !os.IsNotExist(err) {
			t.Errorf("the run's settings directory outlived the run: %v", err)
		}
	} else {
		// Gemini reads no settings file lcwrap can write: the stream is.
		t.Logf("no hooks this run (%s): the stream is the evidence", errs)
		want = "created created\nstate_changed starting\nstate_changed running\nactivity prompt submitted\n" +
			"activity run_shell_command: echo lcwrap-mock-ok > lcwrap-mock.txt\nactivity run_shell_command done\n" +
			"activity result (success)\nterminal lost\n"
	}
	if got != want {
		t.Errorf("session %s (hooks: %v):\n%s\nwant:\n%s", session, hooks, got, want)
	}
	var td struct {
		Report *agent.AgentReport `json:"agentReport"`
	}
	json.Unmarshal(terminal.Details, &td)
	if r := td.Report; r == nil || r.ReportedBy != "gemini" || r.Subtype != "success" || r.Usage == nil || r.Usage.Input == nil {
		t.Errorf("agentReport: %s", terminal.Details)
	}
	if terminal.State != event.StateCompleted {
		t.Errorf("process: %s", terminal.State)
	}
	if w.mock.Requests() == 0 {
		t.Errorf("the mock answered nothing")
	}
	checkUsage(t, evs, session, w.mock.Requests())
	if _, errs, code := w.run(lc, "validate", w.journal); code != 0 {
		t.Errorf("validate: %d %s", code, errs)
	}
}

// waitFor polls cond until it holds or 90s have passed.
func waitFor(t *testing.T, what string, cond func() bool, show func() string) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 90s for %s\n%s", what, show())
		}
	}
}

// journalEvents reads the journal as far as it is written (nil before).
func (w *world) journalEvents() []event.Event {
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

// sessionStates lists the Gemini session's state changes so far.
func sessionStates(evs []event.Event) []string {
	var states []string
	for _, ev := range evs {
		if ev.Source != "gemini" || (ev.Kind != event.KindStateChanged && ev.Kind != event.KindTerminal) {
			continue
		}
		s := string(ev.State)
		if d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details); d.WaitingFor != "" {
			s += ":" + d.WaitingFor
		}
		states = append(states, s)
	}
	return states
}

// TestTUIPermissionUnderPTY drives the real TUI under `lcwrap --pty` in
// tmux: the shell call's permission dialog is a waiting state for
// permission (its Notification hook), allowing it is running again, the
// turn's end waits for the user, and /quit ends the session as Gemini
// reports it. Hooks need root's settings file: in the namespace, lcwrap
// runs as its root.
func TestTUIPermissionUnderPTY(t *testing.T) {
	testtool.Need(t, "gemini", installGemini)
	testtool.Need(t, "tmux", "apt-get install tmux")
	lc := testtool.Lcwrap(t)
	testtool.Companion(t, "lcwrap-top") // built before Offline re-runs the test in its namespace
	if !testtool.Offline(t) {
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("lcwrap adds Gemini's hooks only as root, and the namespace maps this user to no root")
	}
	w := newWorld(t, geminimock.Step{Calls: []geminimock.Call{geminimock.Shell("echo lcwrap-mock-ok > lcwrap-mock.txt")}})
	x := testtool.NewTmux(t)
	script := filepath.Join(t.TempDir(), "run.sh")
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncd '" + w.project + "' || exit 1\n")
	// Gemini's TUI turns itself off in CI (CI or CONTINUOUS_INTEGRATION set,
	// as .ci/run sets CI=true): a person's terminal has neither.
	b.WriteString("unset CI CONTINUOUS_INTEGRATION\n")
	for _, kv := range w.env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.ContainsAny(k, " '\"$") || k == "TERM" || k == "CI" || k == "CONTINUOUS_INTEGRATION" {
			continue
		}
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	fmt.Fprintf(&b, "exec %s --child-id gemini-1 --pty -- gemini\n", lc)
	os.WriteFile(script, []byte(b.String()), 0o755)
	x.Do("new-session", "-d", "-s", "t", "-x", "140", "-y", "45", script)
	show := func() string {
		return fmt.Sprintf("session states %v\nscreen:\n%s", sessionStates(w.journalEvents()), x.Screen("t"))
	}
	waitFor(t, "the prompt box", func() bool { return strings.Contains(x.Screen("t"), "Type your message") }, show)
	x.Do("send-keys", "-t", "t", "-l", "please run the shell")
	waitFor(t, "the prompt typed", func() bool { return strings.Contains(x.Screen("t"), "please run the shell") }, show)
	x.Do("send-keys", "-t", "t", "Enter")
	waitFor(t, "the permission dialog", func() bool {
		return slices.Contains(sessionStates(w.journalEvents()), "waiting:permission") && strings.Contains(x.Screen("t"), "Allow once")
	}, show)
	// What status and top show of the wait (docs/agents-gemini.md).
	st, errs, code := w.run(lc, "status")
	if code != 0 || !strings.Contains(st, "waiting:permission") {
		t.Fatalf("status: %d %s\n%s", code, errs, st)
	}
	doccapture.Check(t, "../../../docs/agents-gemini.md", "gemini-wait-status", "$ lcwrap status\n"+st)
	doccapture.Check(t, "../../../docs/agents-gemini.md", "gemini-wait-top", "$ lcwrap top\n"+w.top(lc, 7, "", "waiting:permission", "waiting for permission"))
	x.Do("send-keys", "-t", "t", "Enter") // 1. Allow once
	waitFor(t, "running again, then the turn's end", func() bool {
		st := sessionStates(w.journalEvents())
		i := slices.Index(st, "waiting:permission")
		return i >= 0 && slices.Contains(st[i:], "running") && slices.Contains(st[i:], "waiting:user")
	}, show)
	if _, err := os.Stat(filepath.Join(w.project, "lcwrap-mock.txt")); err != nil {
		t.Fatalf("the allowed shell call did not run: %v", err)
	}
	// Gemini's telemetry of the decision is sent when its exporter
	// sends (a batch a second): waited for before /quit, as a decision
	// that comes after the session's end is counted, not shown.
	waitFor(t, "the decision from Gemini's telemetry", func() bool {
		for _, ev := range w.journalEvents() {
			if ev.Source == "gemini" && strings.HasPrefix(ev.Activity, "permission for run_shell_command: accept, decided by (gemini does not say who)") {
				return true
			}
		}
		return false
	}, show)
	x.Do("send-keys", "-t", "t", "-l", "/quit")
	waitFor(t, "/quit typed", func() bool { return strings.Contains(x.Screen("t"), "Exit the cli") }, show)
	x.Do("send-keys", "-t", "t", "Enter")
	sent := time.Now()
	waitFor(t, "the process's end", func() bool {
		if time.Since(sent) > 5*time.Second && strings.Contains(x.Screen("t"), "Exit the cli") {
			x.Try("send-keys", "-t", "t", "Enter") // the completion menu took the first
			sent = time.Now()
		}
		for _, ev := range w.journalEvents() {
			if ev.Source == "lcwrap" && ev.Kind == event.KindTerminal {
				return true
			}
		}
		return false
	}, show)
	states := sessionStates(w.events())
	want := []string{"starting", "running", "waiting:permission", "running", "waiting:user", "completed"}
	if !slices.Equal(states, want) {
		t.Errorf("session states %v, want %v", states, want)
	}
	if html := w.report(lc, "report-gemini-wait.png"); !regexp.MustCompile(`waiting for permission [^<]*\(opened by Notification, closed by AfterTool\)`).MatchString(html) {
		t.Errorf("the report does not show the wait for permission")
	}
	if _, errs, code := w.run(lc, "validate", w.journal); code != 0 {
		t.Errorf("validate: %d %s", code, errs)
	}
}

// TestFailingHookFailsOpen: lcwrap's BeforeTool hook as it is written
// (hookCommand), its lcwrap gone (bash's 127, which alone Gemini takes as
// "deny": measured), and a hook that exits 1, do not stop the tool.
func TestFailingHookFailsOpen(t *testing.T) {
	testtool.Need(t, "gemini", installGemini)
	if !testtool.Offline(t) {
		return
	}
	w := newWorld(t, geminimock.Step{Calls: []geminimock.Call{geminimock.Shell("echo lcwrap-mock-ok > lcwrap-mock.txt")}})
	// lcwrap's hooks as --print-settings writes them (the relay's command
	// differs only by --relay), their lcwrap gone; and a hook that exits 1.
	var hooks struct {
		Hooks map[string][]map[string]any `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(gemini.UserSettings("/nonexistent/lcwrap")), &hooks); err != nil {
		t.Fatal(err)
	}
	hooks.Hooks["BeforeTool"] = append(hooks.Hooks["BeforeTool"], map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "exit 1"}}})
	hb, _ := json.Marshal(hooks.Hooks)
	settings := `{"security":{"auth":{"selectedType":"gemini-api-key"},"folderTrust":{"enabled":false}},` +
		`"privacy":{"usageStatisticsEnabled":false},"general":{"disableAutoUpdate":true,"disableUpdateNag":true},` +
		`"hooks":` + string(hb) + `}`
	if err := os.WriteFile(filepath.Join(w.home, ".gemini", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code := w.run("gemini", "-p", "go", "-o", "stream-json", "--yolo")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(w.project, "lcwrap-mock.txt")); err != nil {
		t.Fatalf("the tool did not run behind a failing hook: %v\nstdout:\n%s\nstderr:\n%s", err, out, errs)
	}
}

// checkUsage: the session's last usage diagnostic holds Gemini's own
// totals of the mock's answers (each reports 10 prompt and 5 candidate
// tokens), no cost (Gemini reports none), attributed to gemini.
func checkUsage(t *testing.T, evs []event.Event, session string, requests int) {
	t.Helper()
	var last *agent.AgentTotals
	for _, ev := range evs {
		if ev.ChildID != session || ev.Kind != event.KindDiagnostic {
			continue
		}
		var d struct {
			Usage *agent.AgentTotals `json:"agentUsage"`
		}
		if json.Unmarshal(ev.Details, &d) == nil && d.Usage != nil {
			last = d.Usage
		}
	}
	if last == nil {
		t.Fatalf("no usage from Gemini's telemetry in the journal:\n%s", summary(evs, session))
	}
	t.Logf("usage: %+v (mock answered %d)", *last, requests)
	if last.ReportedBy != "gemini" || last.Via != gemini.ViaOTLP || !last.CostUnknown || last.CostUSD != 0 {
		t.Errorf("usage attribution: %+v", *last)
	}
	if last.Requests < 1 || last.Requests > int64(requests) || last.Input != 10*last.Requests || last.Output != 5*last.Requests {
		t.Errorf("usage: %+v, want 10 in and 5 out per response, at most %d responses", *last, requests)
	}
}
