package claudecode

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// TestPrepareRun: a session claude gets lcwrap's hooks (its address in
// the environment, the settings on the command line, the prompt never
// recorded) and, with stream-json, a reader of its stdout; Close stops
// the hook server. A claude that runs no session changes nothing.
func TestPrepareRun(t *testing.T) {
	d := Driver{Exe: "/usr/bin/lcwrap", Dir: t.TempDir()}
	argv := strings.Fields("claude -p fix-it --output-format stream-json")
	r, err := d.Prepare(context.Background(), agent.Launch{Argv: argv, ChildID: "claude-1a2b3c4d"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.(agent.Starter); ok {
		t.Error("the claude run asks for an identity it does not use")
	}
	c := r.Command()
	if r.Stdout() == nil || c.Added == nil || c.Added.Agent != Source || len(c.Argv) != len(argv)+2 || c.Argv[1] != "--settings" {
		t.Fatalf("command %+v, stdout %v", c, r.Stdout())
	}
	if strings.Join(c.Recorded, " ") != "claude -p [prompt] --output-format stream-json" {
		t.Errorf("recorded %q", c.Recorded)
	}
	var url string
	for _, kv := range c.Env {
		if v, ok := strings.CutPrefix(kv, EnvHookURL+"="); ok {
			url = v
		}
	}
	if url == "" {
		t.Fatalf("env %q", c.Env)
	}
	r.Close()
	if resp, err := http.Post(url, "application/json", strings.NewReader("{}")); err == nil {
		resp.Body.Close()
		t.Error("the hook server still answers after Close")
	}
	var term event.Terminal
	r.Report(&term)

	r, err = d.Prepare(context.Background(), agent.Launch{Argv: []string{"claude", "--version"}, ChildID: "claude-1a2b3c4d"})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Command(); r.Stdout() != nil || c.Added != nil || c.Env != nil || strings.Join(c.Argv, " ") != "claude --version" {
		t.Errorf("claude --version: %+v", c)
	}
}

// TestAdoptShapes: a process not named claude is not Claude Code's
// unless the user says so; one whose start time is not in clock ticks
// cannot be matched to the registry; the other shapes are not followed.
func TestAdoptShapes(t *testing.T) {
	ctx := context.Background()
	if _, err := (Driver{}).Adopt(ctx, agent.AdoptRequest{Target: agent.PIDTarget{Name: "sh"}}); !errors.Is(err, agent.ErrNotAgent) {
		t.Errorf("sh: %v", err)
	}
	_, err := (Driver{}).Adopt(ctx, agent.AdoptRequest{Target: agent.PIDTarget{Name: "sh", Named: true, Identity: event.Identity{PID: os.Getpid(), Clock: "boot-ms"}}})
	if err == nil || errors.Is(err, agent.ErrNotAgent) || !strings.Contains(err.Error(), "not in clock ticks") {
		t.Errorf("named, no clock ticks: %v", err)
	}
	// (Every session of the registry, agent.RegistryTarget, is followed:
	// TestFleet, TestAdoptBackgroundSessions.)
	for _, tg := range []agent.Target{agent.ServerTarget{URL: "http://127.0.0.1:1"}} {
		a, err := (Driver{}).Adopt(ctx, agent.AdoptRequest{Target: tg})
		if a != nil || !errors.Is(err, agent.ErrNotSupported) {
			t.Errorf("%T: %v, %v", tg, a, err)
		}
	}
}
