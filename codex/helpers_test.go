package codex

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/agent"
	"github.com/lcwrap/lcwrap/emit"
	"github.com/lcwrap/lcwrap/internal/mockresponses"
	"github.com/lcwrap/lcwrap/internal/testtool"
	"github.com/lcwrap/lcwrap/jsonl"
	"github.com/lcwrap/lcwrap/projection"
)

// captured keeps every event written, in order.
type captured struct {
	mu    sync.Mutex
	evs   []jsonl.Event
	lines [][]byte
}

func (c *captured) Name() string { return "capture" }
func (c *captured) WriteEvent(ev *jsonl.Event, line []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evs = append(c.evs, *ev)
	c.lines = append(c.lines, append([]byte(nil), line...))
	return nil
}
func (c *captured) Close() error { return nil }

// check validates and projects every captured event, failing on any
// refusal.
func (c *captured) check(t *testing.T) *projection.Projection {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	p := projection.New()
	for i := range c.evs {
		if err := c.evs[i].Validate(); err != nil {
			t.Fatalf("event %d invalid: %v\n%s", i, err, c.lines[i])
		}
		if out := p.Apply(&c.evs[i], c.lines[i]); out.Result != projection.Applied {
			t.Fatalf("event %d: %v %v\n%s", i, out.Result, out.Err, c.lines[i])
		}
	}
	return p
}

// summary lists "kind state activity" of every event, one per line.
func (c *captured) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, ev := range c.evs {
		b.WriteString(strings.Join(strings.Fields(string(ev.Kind)+" "+string(ev.State)+" "+ev.Activity), " ") + "\n")
	}
	return b.String()
}

// all returns every captured line, joined.
func (c *captured) all() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(bytes.Join(c.lines, nil))
}

func newTracker(t *testing.T, cfg agent.Config) (*agent.Tracker, *captured) {
	t.Helper()
	sink := &captured{}
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
