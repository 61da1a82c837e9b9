package opencode_test

// These tests run the real opencode (opencode-ai 1.18.33, installed by
// .ci/run) under a freshly built lcwrap, offline against the chat
// completions stand-in of internal/chatmock on 127.0.0.1 (its
// @ai-sdk/openai-compatible provider), with a HOME of its own whose
// ~/.config/opencode names @opencode-ai/plugin with an empty node_modules
// (else it installs it from npm at start), inside a network namespace
// whose only interface is loopback (testtool.Offline).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/chatmock"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

const installOpencode = "npm install -g opencode-ai@1.18.33"

func TestMain(m *testing.M) {
	code := m.Run()
	testtool.Cleanup()
	os.Exit(code)
}

var scripts = []chatmock.Script{
	{Marker: "lcwrap-subagent-task", Steps: []chatmock.Step{{Calls: []chatmock.Call{{Name: "bash", Args: map[string]any{"command": "echo sub > sub.txt", "description": "sub"}}}}}},
	{Marker: "lcwrap-scenario:agent", Steps: []chatmock.Step{{Calls: []chatmock.Call{{Name: "task", Args: map[string]any{"subagent_type": "general", "description": "lcwrap sub", "prompt": "lcwrap-subagent-task: run it"}}}}}},
	{Marker: "lcwrap-scenario:bash", Steps: []chatmock.Step{{Calls: []chatmock.Call{{Name: "bash", Args: map[string]any{"command": "echo lcwrap-mock-ok > lcwrap-mock.txt", "description": "lcwrap mock"}}}}}},
}

type world struct {
	t                      *testing.T
	home, project, journal string
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
	cfg := filepath.Join(w.home, ".config", "opencode")
	if err := os.MkdirAll(filepath.Join(cfg, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"package.json": `{"dependencies":{"@opencode-ai/plugin":"1.18.33"}}`,
		"opencode.json": fmt.Sprintf(`{"autoupdate":false,"share":"disabled","model":"mock/gpt-4.1",
"provider":{"mock":{"npm":"@ai-sdk/openai-compatible","name":"Mock","options":{"baseURL":%q,"apiKey":"lcwrap-test-not-a-key"},"models":{"gpt-4.1":{"name":"gpt-4.1"}}}}}`, mock.URL),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(cfg, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LCWRAP_") || strings.HasPrefix(k, "OPENCODE") || strings.HasPrefix(k, "XDG_") || k == "HOME" || k == "PWD" {
			continue
		}
		w.env = append(w.env, kv)
	}
	w.env = append(w.env, "HOME="+w.home, "PWD="+w.project, // opencode takes its directory from $PWD
		"LCWRAP_JOURNAL="+w.journal, "NO_COLOR=1", "GORACE=atexit_sleep_ms=0",
		"XDG_CONFIG_HOME="+filepath.Join(w.home, ".config"), "XDG_DATA_HOME="+filepath.Join(w.home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(w.home, ".cache"), "XDG_STATE_HOME="+filepath.Join(w.home, ".local", "state"))
	return w
}

func (w *world) run(argv ...string) (string, string, int) {
	w.t.Helper()
	return w.runFor(3*time.Minute, argv...)
}

// runFor is run with another limit.
func (w *world) runFor(limit time.Duration, argv ...string) (string, string, int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = w.project, w.env
	devnull, err := os.Open(os.DevNull) // opencode run appends a stdin that is no terminal to the prompt
	if err != nil {
		w.t.Fatal(err)
	}
	defer devnull.Close()
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		w.t.Fatalf("%v: still running after %v\n%s\n%s", argv, limit, out.String(), errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

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

// TestRunJSON: `lcwrap -- opencode run --format json …` whose model calls
// the shell tool; exit 0. The session is a child of the process, the
// shell call its activity, the turn's end a wait for the user, lost when
// the process ends; the tokens are opencode's report.
func TestRunJSON(t *testing.T) {
	testtool.Need(t, "opencode", installOpencode)
	lc := testtool.Lcwrap(t)
	if !testtool.Offline(t) {
		return
	}
	w := newWorld(t)
	out, errs, code := w.run(lc, "--", "opencode", "run", "--format", "json", "lcwrap-scenario:bash go")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if !strings.Contains(out, `"tool":"bash"`) || !strings.Contains(out, `"exit":0`) {
		t.Fatalf("no shell call that exited 0 in opencode's output\nstdout:\n%s\nstderr:\n%s", out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(w.project, "lcwrap-mock.txt")); err != nil || string(b) != "lcwrap-mock-ok\n" {
		t.Fatalf("the shell call did not run in the project: %q %v", b, err)
	}
	evs := w.events()
	var states, activity []string
	var terminal *event.Event
	for i, ev := range evs {
		switch {
		case ev.Source == "lcwrap" && ev.Kind == event.KindTerminal:
			terminal = &evs[i]
		case ev.Source == "opencode" && (ev.Kind == event.KindStateChanged || ev.Kind == event.KindTerminal):
			states = append(states, string(ev.State))
		case ev.Source == "opencode" && ev.Kind == event.KindActivity:
			activity = append(activity, ev.Activity)
		}
	}
	if want := []string{"starting", "running", "waiting", "lost"}; !slices.Equal(states, want) {
		t.Errorf("session states %v, want %v", states, want)
	}
	if !slices.Contains(activity, "bash done") {
		t.Errorf("activity %v", activity)
	}
	if terminal == nil {
		t.Fatal("no terminal event")
	}
	var td struct {
		Report *agent.AgentReport `json:"agentReport"`
	}
	json.Unmarshal(terminal.Details, &td)
	if r := td.Report; r == nil || r.ReportedBy != "opencode" || r.Usage == nil || *r.Usage.Input != 20 {
		t.Errorf("agentReport: %s", terminal.Details)
	}
	if _, errs, code := w.run(lc, "validate", w.journal); code != 0 {
		t.Errorf("validate: %d %s", code, errs)
	}
}

// TestServerFollowed: lcwrap's --port and its /event follower against
// the real server. The launched command is a stand-in named opencode that
// writes the port it was given to a file and runs the real `opencode
// serve` there (the TUI itself needs a terminal); `opencode run --attach`
// then drives a session whose task tool makes a child session whose shell
// call asks for a permission (run --attach rejects it). Seen: the
// sub-agent waiting for permission, the session waiting for the user,
// lost when the process ends.
func TestServerFollowed(t *testing.T) {
	real := testtool.Need(t, "opencode", installOpencode)
	lc := testtool.Lcwrap(t)
	if !testtool.Offline(t) {
		return
	}
	w := newWorld(t)
	bin := t.TempDir()
	portFile, doneFile := filepath.Join(bin, "port"), filepath.Join(bin, "done")
	script := fmt.Sprintf(`#!/bin/sh
[ "$1" = --port ] || exit 9
OPENCODE_PERMISSION='{"bash":"ask"}' %q serve --port "$2" &
pid=$!
echo "$2" > %q
while [ ! -e %q ]; do sleep 0.1; done
kill $pid
wait $pid
exit 0
`, real, portFile, doneFile)
	if err := os.WriteFile(filepath.Join(bin, "opencode"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var out, errs string
	var code int
	go func() {
		defer close(done)
		// It lives while the server starts and is driven: under a loaded
		// machine (the whole suite on two cores) three minutes were not
		// enough once.
		out, errs, code = w.runFor(6*time.Minute, lc, "--agent", "opencode", "--", filepath.Join(bin, "opencode"))
	}()
	defer func() { os.WriteFile(doneFile, nil, 0o644); <-done }()
	var port string
	testtool.EventuallyWithin(t, time.Minute, "the port file", func() bool {
		b, _ := os.ReadFile(portFile)
		port = strings.TrimSpace(string(b))
		return port != ""
	})
	// The server takes seconds to start: its API answers first, then run
	// --attach is tried again until it gets through (one sent while it
	// was still starting failed with "Session not found", measured).
	waitFor(t, 90*time.Second, "the server's answer", func() bool {
		code, _ := api(t, port, "GET", "/session", "")
		return code == 200
	}, func() string { return "" })
	var rout, rerrs string
	var rcode int
	for deadline := time.Now().Add(90 * time.Second); ; {
		rout, rerrs, rcode = w.run(real, "run", "--attach", "http://127.0.0.1:"+port, "--format", "json", "lcwrap-scenario:agent go")
		if rcode == 0 || time.Now().After(deadline) {
			break
		}
	}
	if rcode != 0 {
		t.Fatalf("run --attach: exit %d\n%s\n%s", rcode, rout, rerrs)
	}
	os.WriteFile(doneFile, nil, 0o644)
	<-done
	if code != 0 {
		t.Fatalf("lcwrap: exit %d\n%s\n%s", code, out, errs)
	}
	var states []string
	for _, ev := range w.events() {
		if ev.Source == "opencode" && (ev.Kind == event.KindStateChanged || ev.Kind == event.KindTerminal) {
			s := "session " + string(ev.State)
			if strings.Contains(ev.ChildID, ".") {
				s = "sub " + string(ev.State)
			}
			if d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details); d.WaitingFor != "" {
				s += ":" + d.WaitingFor
			}
			states = append(states, s)
		}
	}
	for _, want := range []string{"sub waiting:permission", "session waiting:user", "session lost"} {
		if !slices.Contains(states, want) {
			t.Errorf("no %q in %v", want, states)
		}
	}
	if _, errs, code := w.run(lc, "validate", w.journal); code != 0 {
		t.Errorf("validate: %d %s", code, errs)
	}
}
