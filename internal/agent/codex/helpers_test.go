package codex

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/eventcap"
	"github.com/lcwrap/lcwrap/internal/mockresponses"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

func newTracker(t *testing.T, cfg agent.Config) (*agent.Tracker, *eventcap.Sink) {
	t.Helper()
	sink := &eventcap.Sink{}
	cfg.Source = "codex"
	cfg.Emitter = emit.New(emit.Options{Source: "codex"}, sink)
	if cfg.Prefix == "" {
		cfg.Prefix = "cx"
	}
	return agent.New(cfg), sink
}

// feed applies every line of data with read.
func feed(tr *agent.Tracker, data []byte, read func([]byte) agent.Outcome) {
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			tr.Apply(read(l))
		}
	}
}

// requireCodex returns the codex CLI's path; without it the test skips
// locally and fails under CI.
func requireCodex(t *testing.T) string {
	t.Helper()
	return testtool.Need(t, "codex", "npm install -g @openai/codex@0.171.0")
}

// codexEnv is a private HOME and CODEX_HOME pointed at a mock serving
// script; it returns the environment, the CODEX_HOME and the mock.
func codexEnv(t *testing.T, script ...mockresponses.Step) ([]string, string, *mockresponses.Server) {
	t.Helper()
	srv, err := mockresponses.Start(script...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	home := t.TempDir()
	ch := filepath.Join(home, ".codex")
	if err := mockresponses.WriteCodexHome(ch, srv.URL); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "CODEX_HOME="+ch, mockresponses.EnvKey+"=sk-lcwrap-test-not-a-key", "NO_COLOR=1")
	t.Cleanup(func() { mockresponses.StopDaemons(ch) })
	return env, ch, srv
}

// runExec runs `codex exec --json` with a prompt and returns its stdout.
func runExec(t *testing.T, env []string, prompt string) []byte {
	t.Helper()
	return runExecStatus(t, env, prompt, 0)
}

// runExecStatus is runExec for a run that must exit with code.
func runExecStatus(t *testing.T, env []string, prompt string, code int) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, requireCodex(t), "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", prompt)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil || cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != code {
		t.Fatalf("codex exec: %v, want exit code %d\nstdout:\n%s\nstderr:\n%s", err, code, out, stderr.Bytes())
	}
	return out
}

// promptShown reports whether codex's TUI shows its prompt on screen (with
// or without spaces), its session loaded: 0.171.0 greets with tips ("To
// get started, describe a task") or, at other times, with its logo above
// the input's placeholder ("Ask Codex to do anything"), and drops what is
// typed until its status line names the model (the mock's, "GPT-5.5
// default").
func promptShown(screen string) bool {
	s := strings.Join(strings.Fields(screen), "")
	return (strings.Contains(s, "describeatask") || strings.Contains(s, "AskCodextodoanything")) && strings.Contains(s, "GPT-5.5default")
}

// typeUntilEcho types (with typeIt) until echoed holds: should codex's TUI
// have dropped what was typed, what got no echo within 20 seconds is typed
// again (a prompt typed twice is still a prompt to the mock). It fails the
// test after a generous deadline.
func typeUntilEcho(t *testing.T, typeIt func(), echoed func() bool, show func() string) {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for {
		typeIt()
		retry := time.Now().Add(20 * time.Second)
		for time.Now().Before(retry) {
			if echoed() {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for the prompt's echo; so far:\n%s", show())
		}
	}
}
