package claudecode_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/anthropicmock"
	"github.com/lcwrap/lcwrap/internal/event"
)

// TestAdoptBackgroundSessions: `lcwrap adopt --agent claude-code` with no
// pid follows every session Claude Code lists: a background session
// started with `claude --bg` (its credential through an apiKeyHelper, as
// a session offline needs) is a child with its pid, and after `claude
// stop` it ends as the agent's registry reports it.
func TestAdoptBackgroundSessions(t *testing.T) {
	w := newWorld(t)
	os.MkdirAll(filepath.Join(w.home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(w.home, ".claude", "settings.json"), []byte(`{"apiKeyHelper":"echo `+apiKey+`"}`), 0o600)
	var env []string
	for _, kv := range w.env {
		if !strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") {
			env = append(env, kv)
		}
	}
	w.env = env
	adopt := exec.Command(lcwrap(t), "adopt", "--agent", "claude-code")
	adopt.Env, adopt.Dir = w.env, w.project
	var errb strings.Builder
	adopt.Stderr = &errb
	if err := adopt.Start(); err != nil {
		t.Fatal(err)
	}
	defer adopt.Process.Kill()
	out, errs, code := w.run("claude", "--bg", "--allowedTools=Bash", anthropicmock.ScenarioBash+" go")
	if code != 0 {
		t.Fatalf("claude --bg: %d\n%s\n%s", code, out, errs)
	}
	id := regexp.MustCompile(`backgrounded · ([0-9a-z]+)`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("claude --bg printed no id:\n%s", out)
	}
	var session string
	show := func() string { return "adopt's stderr:\n" + errb.String() }
	waitFor(t, "the background session adopted", func() bool {
		for _, ev := range w.events() {
			d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details)
			if ev.Source == "claude-code" && ev.Kind == event.KindCreated && strings.HasPrefix(d.SessionID, id[1]) && ev.Lineage.External {
				session = ev.ChildID
			}
		}
		return session != ""
	}, show)
	waitFor(t, "the session's pid", func() bool {
		for _, ev := range w.events() {
			d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details)
			if ev.ChildID == session && d.Reported != nil && d.Reported.PID > 0 {
				return true
			}
		}
		return false
	}, show)
	if _, errs, code := w.run("claude", "stop", id[1]); code != 0 {
		t.Fatalf("claude stop: %d %s", code, errs)
	}
	var end event.Event
	waitFor(t, "the session's end", func() bool {
		for _, ev := range w.events() {
			if ev.ChildID == session && ev.Kind == event.KindTerminal {
				end = ev
				return true
			}
		}
		return false
	}, show)
	d, _ := event.DecodeDetails[agent.AgentEvent](end.Details)
	switch {
	case end.State == event.StateCancelled && d.Claim == agent.ClaimAgentReportedEnd: // its job state said stopped
	case end.State == event.StateLost && d.Claim == agent.ClaimAgentProcessEnded: // gone, its job state naming no end
	default:
		t.Fatalf("the stopped session ended %s with claim %q (%s)", end.State, d.Claim, end.Details)
	}
	adopt.Process.Signal(syscall.SIGINT)
	if err := adopt.Wait(); err == nil || adopt.ProcessState.ExitCode() != 130 {
		t.Fatalf("adopt after ^C: %v (want 130)\n%s", err, errb.String())
	}
	t.Logf("ended %s (%s)", end.State, d.Claim)
}
