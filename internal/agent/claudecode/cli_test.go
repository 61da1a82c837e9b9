package claudecode_test

// These tests run the real Claude Code CLI (claude 2.1.332, installed by
// .ci/run) under a freshly built lcwrap, offline, against the Messages API
// stand-in of internal/anthropicmock on 127.0.0.1, each with a HOME of its
// own. Locally a missing claude (or tmux) skips them naming what to
// install; under CI=true it fails them.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"

	"github.com/lcwrap/lcwrap/internal/anthropicmock"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

const (
	installClaude = "npm install -g @anthropic-ai/claude-code@2.1.332"
	apiKey        = "sk-ant-test-000000000000000000000000"
)

// lcwrap is the lcwrap binary built once for the package's tests.
func lcwrap(t *testing.T) string { return testtool.Lcwrap(t) }

func TestMain(m *testing.M) {
	code := m.Run()
	testtool.Cleanup()
	os.Exit(code)
}

// world is one test's HOME, project directory, journal and mock API.
type world struct {
	t       *testing.T
	home    string
	project string
	journal string
	mock    *anthropicmock.Server
	env     []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	testtool.Need(t, "claude", installClaude)
	w := &world{t: t, home: t.TempDir(), project: t.TempDir()}
	w.journal = filepath.Join(t.TempDir(), "journal.jsonl")
	mock, err := anthropicmock.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mock.Close() })
	w.mock = mock
	// What interactive claude needs to start without a question: the
	// onboarding done, the key approved, the project trusted.
	cfg := map[string]any{
		"hasCompletedOnboarding": true,
		"customApiKeyResponses":  map[string]any{"approved": []string{apiKey[len(apiKey)-20:]}, "rejected": []string{}},
		"projects":               map[string]any{w.project: map[string]any{"hasTrustDialogAccepted": true}},
	}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(w.home, ".claude.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LCWRAP_") || strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "CLAUDE") || k == "HOME" || k == "XDG_STATE_HOME" || k == "XDG_CONFIG_HOME" {
			continue
		}
		w.env = append(w.env, kv)
	}
	marker := fmt.Sprintf("LCWRAP_CLAUDE_TEST=%d-%d", os.Getpid(), time.Now().UnixNano())
	w.env = append(w.env, "HOME="+w.home, "LCWRAP_JOURNAL="+w.journal, "ANTHROPIC_BASE_URL="+mock.URL, "ANTHROPIC_API_KEY="+apiKey,
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "GORACE=atexit_sleep_ms=0", marker)
	t.Cleanup(func() { killMarked(t, marker) })
	return w
}

// killMarked ends every process this test started (they all inherited
// marker in their environment) and waits, at most 10s, for them to be
// gone, so that none outlives the test or writes into its directories.
func killMarked(t *testing.T, marker string) {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var left []int
		dirs, _ := os.ReadDir("/proc")
		for _, d := range dirs {
			pid, err := strconv.Atoi(d.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile("/proc/" + d.Name() + "/environ")
			if err == nil && slices.Contains(strings.Split(string(env), "\x00"), marker) {
				left = append(left, pid)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes %v outlived the test", left)
			return
		}
	}
}

// run runs argv in the project directory and returns its stdout, stderr
// and exit code; it is killed (with its group) after a minute.
func (w *world) run(argv ...string) (string, string, int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
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
		w.t.Fatalf("%v: still running after a minute\n%s\n%s", argv, out.String(), errb.String())
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
	f, err := os.Open(w.journal)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	var evs []event.Event
	sc := bufio.NewScanner(f)
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

// statusChild is the part of `lcwrap status --json` these tests read.
type statusChild struct {
	ChildID  string          `json:"childId"`
	State    string          `json:"state"`
	Source   string          `json:"source"`
	Lineage  event.Lineage   `json:"lineage"`
	Activity json.RawMessage `json:"activity"`
}

func (w *world) status() []statusChild {
	w.t.Helper()
	out, errs, code := w.run(lcwrap(w.t), "status", "--all", "--json")
	if code != 0 {
		w.t.Fatalf("status: exit %d\n%s", code, errs)
	}
	var st struct {
		Children []statusChild `json:"children"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		w.t.Fatalf("status --json: %v\n%s", err, out)
	}
	return st.Children
}

// tree finds the launched process, its session and the session's
// sub-agent in the status rows.
func tree(t *testing.T, rows []statusChild) (proc, session, sub statusChild) {
	t.Helper()
	for _, r := range rows {
		switch {
		case r.Source == "lcwrap":
			proc = r
		case r.Source == "claude-code" && r.Lineage.ParentChildID == proc.ChildID && proc.ChildID != "":
			session = r
		}
	}
	for _, r := range rows {
		if r.Source == "claude-code" && session.ChildID != "" && r.Lineage.ParentChildID == session.ChildID {
			sub = r
		}
	}
	if proc.ChildID == "" || session.ChildID == "" || sub.ChildID == "" {
		t.Fatalf("want the process, its session and a sub-agent under it; status shows %+v", rows)
	}
	return proc, session, sub
}

func activities(evs []event.Event, child string) []string {
	var out []string
	for _, ev := range evs {
		if ev.ChildID == child && ev.Kind == event.KindActivity {
			out = append(out, ev.Activity)
		}
	}
	return out
}

// TestPrintModeUnderLcwrap is `lcwrap -- claude -p …` with no settings of
// the user's: the wrapper registers its hooks for the run, owns the
// events, and reads the stream-json it passes through.
func TestPrintModeUnderLcwrap(t *testing.T) {
	w := newWorld(t)
	out, errs, code := w.run(lcwrap(t), "--", "claude", "-p", anthropicmock.ScenarioBoth+" go",
		"--allowedTools", "Bash", "Agent", "--output-format", "stream-json", "--verbose")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if errs != "" {
		t.Fatalf("lcwrap said something on stderr:\n%s", errs)
	}
	if !strings.Contains(out, `"type":"result"`) {
		t.Fatalf("the stream did not pass through:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(w.project, "lcwrap-mock.txt")); err != nil {
		t.Fatalf("the Bash tool did not run: %v", err)
	}
	proc, session, sub := tree(t, w.status())
	if proc.State != "completed" || session.State != "completed" || sub.State != "completed" {
		t.Fatalf("states: process %s, session %s, sub-agent %s", proc.State, session.State, sub.State)
	}
	evs := w.events()
	acts := activities(evs, session.ChildID)
	if !slices.Contains(acts, "Bash: "+anthropicmock.BashCommand) || !slices.Contains(acts, "Agent: Explore: Look around") {
		t.Fatalf("session activity: %q", acts)
	}
	var term, created event.Event
	for _, ev := range evs {
		if ev.ChildID == proc.ChildID && ev.Kind == event.KindTerminal {
			term = ev
		}
		if ev.ChildID == proc.ChildID && ev.Kind == event.KindCreated {
			created = ev
		}
		if ev.Source == "claude-code" && ev.Kind == event.KindTerminal {
			d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details)
			if d.Claim != agent.ClaimAgentReportedEnd {
				t.Fatalf("%s ended with claim %q", ev.ChildID, d.Claim)
			}
		}
	}
	td, _ := event.DecodeDetails[launchedTerminal](term.Details)
	if td.Claim != event.ClaimExitStatusOnly || td.AgentReport == nil || td.AgentReport.ReportedBy != "claude-code" || td.AgentReport.Subtype != "success" || td.AgentSessions == nil {
		t.Fatalf("process terminal details: %s", term.Details)
	}
	cd, _ := event.DecodeDetails[launchedCreated](created.Details)
	if cd.Agent == nil || cd.Agent.AddedAt != 1 || len(cd.Agent.AddedArgs) != 2 || slices.Contains([]string(cd.Command), "--settings") {
		t.Fatalf("created details: %s", created.Details)
	}
	raw, _ := os.ReadFile(w.journal)
	for _, never := range []string{anthropicmock.ScenarioBoth + " go", anthropicmock.SubagentTask, anthropicmock.FinalText} {
		if bytes.Contains(raw, []byte(never)) {
			t.Fatalf("%q reached the journal", never)
		}
	}
}

// TestUserInstalledHook is the hook a user installs with
// --print-settings: claude run without lcwrap still leaves its session
// and sub-agent in the journal, external; under lcwrap the wrapper owns
// the events and the user's hook records nothing twice.
func TestUserInstalledHook(t *testing.T) {
	w := newWorld(t)
	settings, errs, code := w.run(lcwrap(t), "hook", "claude-code", "--print-settings")
	if code != 0 {
		t.Fatalf("--print-settings: exit %d\n%s", code, errs)
	}
	os.MkdirAll(filepath.Join(w.home, ".claude"), 0o700)
	if err := os.WriteFile(filepath.Join(w.home, ".claude", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	claude, _ := exec.LookPath("claude")
	if _, errs, code := w.run(claude, "-p", anthropicmock.ScenarioAgent+" go", "--allowedTools", "Agent"); code != 0 {
		t.Fatalf("claude: exit %d\n%s", code, errs)
	}
	// Async hooks may finish after claude exits.
	deadline := time.Now().Add(10 * time.Second)
	var sessions, subs int
	for {
		sessions, subs = 0, 0
		for _, ev := range w.events() {
			if ev.Kind == event.KindTerminal && ev.Source == "claude-code" {
				if !ev.Lineage.External {
					t.Fatalf("a user-installed hook's child must be external: %+v", ev)
				}
				if strings.Contains(ev.ChildID, ".") {
					subs++
				} else {
					sessions++
				}
			}
		}
		if sessions == 1 && subs == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if sessions != 1 || subs != 1 {
		t.Fatalf("want one session and one sub-agent ended, got %d and %d", sessions, subs)
	}
	before := len(w.events())
	if _, errs, code := w.run(lcwrap(t), "--", "claude", "-p", anthropicmock.ScenarioAgent+" again", "--allowedTools", "Agent"); code != 0 {
		t.Fatalf("lcwrap -- claude: exit %d\n%s", code, errs)
	}
	created := 0
	for _, ev := range w.events()[before:] {
		if ev.Kind == event.KindCreated && ev.Source == "claude-code" && !strings.Contains(ev.ChildID, ".") {
			created++
			if ev.Lineage.External {
				t.Fatalf("the wrapper's session is recorded by the user's hook: %+v", ev)
			}
		}
	}
	if created != 1 {
		t.Fatalf("%d sessions created under lcwrap, want exactly 1 (no double recording)", created)
	}
}

// waitFor polls cond (the journal, the screen) until it holds or 45s
// have passed.
func waitFor(t *testing.T, what string, cond func() bool, show func() string) {
	t.Helper()
	for deadline := time.Now().Add(45 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 45s for %s\n%s", what, show())
		}
	}
}

// sessionStates lists the session's state changes so far.
func sessionStates(evs []event.Event) (id string, states []string) {
	for _, ev := range evs {
		if ev.Source != "claude-code" || strings.Contains(ev.ChildID, ".") {
			continue
		}
		id = ev.ChildID
		if ev.Kind == event.KindStateChanged || ev.Kind == event.KindTerminal {
			s := string(ev.State)
			if d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details); d.WaitingFor != "" {
				s += ":" + d.WaitingFor
			}
			states = append(states, s)
		}
	}
	return id, states
}

// interactive drives a real interactive claude under lcwrap in tmux: a
// permission prompt shows a waiting row, answering it shows running
// again, and /exit ends the session as the agent reports it.
func interactive(t *testing.T, lcwrapFlags ...string) {
	w := newWorld(t)
	x := testtool.NewTmux(t)
	script := filepath.Join(t.TempDir(), "run.sh")
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncd '" + w.project + "' || exit 1\n")
	for _, kv := range w.env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.ContainsAny(k, " '\"$") {
			continue
		}
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	args := append([]string{lcwrap(t)}, lcwrapFlags...)
	args = append(args, "--", "claude", "--permission-mode", "default", anthropicmock.ScenarioBash+" go")
	fmt.Fprintf(&b, "exec %s\n", strings.Join(args, " "))
	os.WriteFile(script, []byte(b.String()), 0o755)
	x.Do("new-session", "-d", "-s", "t", "-x", "120", "-y", "40", script)
	show := func() string {
		_, st := sessionStates(w.events())
		return fmt.Sprintf("session states %v\nscreen:\n%s", st, x.Screen("t"))
	}
	waitFor(t, "the permission prompt", func() bool {
		_, st := sessionStates(w.events())
		return slices.Contains(st, "waiting:permission") && strings.Contains(x.Screen("t"), "Do you want to proceed?")
	}, show)
	var row statusChild
	for _, r := range w.status() {
		if r.Source == "claude-code" {
			row = r
		}
	}
	if row.State != "waiting" {
		t.Fatalf("status shows the session %q while the permission prompt is open", row.State)
	}
	x.Do("send-keys", "-t", "t", "Enter") // 1. Yes
	waitFor(t, "running again, then the turn's end", func() bool {
		_, st := sessionStates(w.events())
		i := slices.Index(st, "waiting:permission")
		return i >= 0 && slices.Contains(st[i:], "running") && slices.Contains(st[i:], "waiting:user")
	}, show)
	if _, err := os.Stat(filepath.Join(w.project, "lcwrap-mock.txt")); err != nil {
		t.Fatalf("the approved Bash call did not run: %v", err)
	}
	x.Do("send-keys", "-t", "t", "/exit")
	waitFor(t, "/exit typed", func() bool { return strings.Contains(x.Screen("t"), "/exit") }, show)
	x.Do("send-keys", "-t", "t", "Enter")
	waitFor(t, "the process's end", func() bool {
		for _, ev := range w.events() {
			if ev.Source == "lcwrap" && ev.Kind == event.KindTerminal {
				return true
			}
		}
		return false
	}, show)
	id, st := sessionStates(w.events())
	if st[len(st)-1] != "completed" {
		t.Fatalf("session %s: %v", id, st)
	}
}

func TestInteractiveWaitingForPermission(t *testing.T) { interactive(t) }

func TestInteractiveUnderPTY(t *testing.T) { interactive(t, "--pty") }

// TestAdoptInteractive: lcwrap adopt of a claude it did not start follows
// Claude Code's own pid registry, which proves the session that process
// runs, and ends the session as lost when the process is gone.
func TestAdoptInteractive(t *testing.T) {
	w := newWorld(t)
	x := testtool.NewTmux(t)
	script := filepath.Join(t.TempDir(), "claude.sh")
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncd '" + w.project + "' || exit 1\n")
	for _, kv := range w.env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	b.WriteString("exec claude --permission-mode default\n")
	os.WriteFile(script, []byte(b.String()), 0o755)
	x.Do("new-session", "-d", "-s", "t", "-x", "120", "-y", "40", script)
	var pid int
	waitFor(t, "claude's pid registry", func() bool {
		files, _ := filepath.Glob(filepath.Join(w.home, ".claude", "sessions", "*.json"))
		if len(files) == 1 {
			fmt.Sscanf(filepath.Base(files[0]), "%d.json", &pid)
		}
		return pid > 0
	}, func() string { return x.Screen("t") })
	cmd := exec.Command(lcwrap(t), "adopt", fmt.Sprint(pid))
	cmd.Env, cmd.Dir = w.env, w.project
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sessionSeen := func() bool {
		for _, ev := range w.events() {
			if ev.Source == "claude-code" && ev.Kind == event.KindCreated {
				return true
			}
		}
		return false
	}
	waitFor(t, "the adopted session", sessionSeen, func() string { return x.Screen("t") })
	x.Do("send-keys", "-t", "t", "/exit")
	waitFor(t, "/exit typed", func() bool { return strings.Contains(x.Screen("t"), "/exit") }, func() string { return x.Screen("t") })
	x.Do("send-keys", "-t", "t", "Enter")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("lcwrap adopt: %v", err)
	}
	var procLost, sessLost bool
	for _, ev := range w.events() {
		if ev.Kind != event.KindTerminal {
			continue
		}
		switch ev.Source {
		case "lcwrap":
			procLost = ev.State == event.StateLost
		case "claude-code":
			d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details)
			sessLost = ev.State == event.StateLost && d.Claim == agent.ClaimAgentProcessEnded && ev.Lineage.External
		}
	}
	if !procLost || !sessLost {
		t.Fatalf("want the adopted process and its session lost (claim %s): %v %v", agent.ClaimAgentProcessEnded, procLost, sessLost)
	}
}

// TestAgentEventsGoToTheRunsSinks: the wrapper owns the agent's events,
// so --no-journal and --emit apply to them too; and the user's own hooks
// still run beside lcwrap's.
func TestAgentEventsGoToTheRunsSinks(t *testing.T) {
	w := newWorld(t)
	marker := filepath.Join(t.TempDir(), "user-hook-ran")
	user := fmt.Sprintf(`{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch %s"}]}]}}`, marker)
	os.MkdirAll(filepath.Join(w.home, ".claude"), 0o700)
	if err := os.WriteFile(filepath.Join(w.home, ".claude", "settings.json"), []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "events.jsonl")
	_, errs, code := w.run(lcwrap(t), "--no-journal", "--emit", "file:"+file, "--", "claude", "-p", anthropicmock.ScenarioAgent+" go", "--allowedTools", "Agent")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(w.journal); !os.IsNotExist(err) {
		t.Fatalf("--no-journal, yet the journal was written: %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the user's own SessionStart hook did not run under lcwrap: %v", err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var ev event.Event
		if err := json.Unmarshal(l, &ev); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if ev.Source == "claude-code" && ev.Kind == event.KindTerminal {
			kinds = append(kinds, ev.ChildID)
		}
	}
	if len(kinds) != 2 { // the session and its sub-agent
		t.Fatalf("the --emit file holds %d agent children ended, want 2:\n%s", len(kinds), b)
	}
}

// TestUserSettingsFlag: a command that passes --settings itself gets
// lcwrap's hooks merged in, its own hooks kept and run (inline JSON, or a
// file whose content never goes on the command line); one that cannot be
// merged gets no hooks of lcwrap's, and one warning line says so.
func TestUserSettingsFlag(t *testing.T) {
	w := newWorld(t)
	for _, form := range []string{"inline", "file"} {
		marker := filepath.Join(t.TempDir(), "user-hook-ran")
		own := fmt.Sprintf(`{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch %s"}]}]}}`, marker)
		value := own
		if form == "file" {
			value = "own-settings.json"
			if err := os.WriteFile(filepath.Join(w.project, value), []byte(own), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		before := len(w.events())
		_, errs, code := w.run(lcwrap(t), "--", "claude", "-p", anthropicmock.ScenarioBash+" go", "--allowedTools", "Bash", "--settings", value)
		if code != 0 || errs != "" {
			t.Fatalf("%s: exit %d\n%s", form, code, errs)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("%s: the command's own SessionStart hook did not run: %v", form, err)
		}
		var session bool
		for _, ev := range w.events()[before:] {
			session = session || ev.Source == "claude-code" && ev.Kind == event.KindTerminal
			if ev.Source == "lcwrap" && ev.Kind == event.KindCreated {
				d, _ := event.DecodeDetails[launchedCreated](ev.Details)
				if d.Agent == nil || d.Agent.MergedAt == 0 || len(d.Agent.AddedArgs) != 0 || !slices.Contains([]string(d.Command), value) {
					t.Fatalf("%s: created details %s", form, ev.Details)
				}
			}
		}
		if !session {
			t.Fatalf("%s: no session recorded with the hooks merged", form)
		}
	}
	left, _ := filepath.Glob(filepath.Join(os.TempDir(), "lcwrap-claude-settings-*.json"))
	for _, f := range left {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "user-hook-ran") {
			t.Fatalf("the merged settings file %s was left behind", f)
		}
	}

	before := len(w.events())
	out, errs, code := w.run(lcwrap(t), "--", "claude", "-p", "hello", "--settings", "/nonexistent/settings.json")
	t.Logf("claude with an unreadable --settings: exit %d\n%s", code, out)
	if n := strings.Count(errs, "lcwrap:"); n != 1 || !strings.Contains(errs, "--settings") {
		t.Fatalf("want one warning about --settings, got:\n%s", errs)
	}
	for _, ev := range w.events()[before:] {
		if ev.Source == "claude-code" {
			t.Fatalf("agent events without lcwrap's hooks: %+v", ev)
		}
	}
}

// TestHookCallNeverFails: the hook command exits 0 and prints nothing on
// stdout whatever goes wrong, saying on stderr what it did not record.
func TestHookCallNeverFails(t *testing.T) {
	w := newWorld(t)
	payload := `{"session_id":"s1","hook_event_name":"SessionStart","source":"startup"}`
	for _, tc := range []struct {
		name   string
		args   []string
		env    []string
		stderr string
	}{
		{"relay to nobody", []string{"--relay"}, []string{"LCWRAP_HOOK_URL=http://127.0.0.1:1/hook", "LCWRAP_HOOK_TOKEN=x"}, "did not take the payload"},
		{"relay without a wrapper", []string{"--relay"}, nil, "nowhere to relay to"},
		{"unreadable journal path", []string{"--journal", "/dev/null/journal.jsonl"}, nil, "not recorded"},
	} {
		cmd := exec.Command(lcwrap(t), append([]string{"hook", "claude-code"}, tc.args...)...)
		cmd.Env = append(slices.Clip(w.env), tc.env...)
		cmd.Stdin = strings.NewReader(payload)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil || out.Len() > 0 || !strings.Contains(errb.String(), tc.stderr) {
			t.Errorf("%s: err %v, stdout %q, stderr %q (want it to say %q)", tc.name, err, out.String(), errb.String(), tc.stderr)
		}
	}
}

// TestWrapperKilled: the wrapper owns its sessions' events, so when it is
// killed (SIGKILL: no terminal event from anyone), status --reconcile
// finds the session's lifecycle source gone and records it lost, as it
// does the process.
func TestWrapperKilled(t *testing.T) {
	w := newWorld(t)
	x := testtool.NewTmux(t)
	script := filepath.Join(t.TempDir(), "run.sh")
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncd '" + w.project + "' || exit 1\n")
	for _, kv := range w.env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	fmt.Fprintf(&b, "exec %s -- claude --permission-mode default hello\n", lcwrap(t))
	os.WriteFile(script, []byte(b.String()), 0o755)
	x.Do("new-session", "-d", "-s", "t", "-x", "120", "-y", "40", script)
	waitFor(t, "the turn's end", func() bool {
		_, st := sessionStates(w.events())
		return slices.Contains(st, "waiting:user")
	}, func() string { return x.Screen("t") })
	var pid int
	fmt.Sscan(x.Do("display-message", "-p", "-t", "t", "#{pane_pid}"), &pid)
	if pid <= 0 {
		t.Fatal("no pane pid")
	}
	syscall.Kill(pid, syscall.SIGKILL) // the wrapper: tmux ran it in the pane (exec)
	waitFor(t, "the wrapper's end (reaped)", func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return err != nil
	}, func() string { return x.Screen("t") })
	// claude lives on, orphaned; killMarked ends it with the test.
	_, errs, code := w.run(lcwrap(t), "status", "--reconcile")
	if code != 0 {
		t.Fatalf("status --reconcile: exit %d\n%s", code, errs)
	}
	id, _ := sessionStates(w.events())
	var lost bool
	for _, ev := range w.events() {
		if ev.ChildID == id && ev.Kind == event.KindTerminal {
			d, _ := event.DecodeDetails[event.Terminal](ev.Details)
			lost = ev.State == event.StateLost && d.Reconciliation != nil && d.Reconciliation.Checked == "wrapper"
		}
	}
	if !lost {
		t.Fatalf("session %s is not lost after its wrapper was killed and reconcile ran:\n%s", id, errs)
	}
}

// launchedCreated and launchedTerminal read a launched process's details:
// lcwrap's members and the agent's.
type (
	launchedCreated struct {
		event.Created
		agent.CreatedMembers
	}
	launchedTerminal struct {
		event.Terminal
		agent.TerminalMembers
	}
)
