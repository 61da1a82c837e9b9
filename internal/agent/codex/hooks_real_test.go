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

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/mockresponses"
)

// lcwrapExec runs `lcwrap --journal J -- codex exec --json …` and returns
// the journal's events and lcwrap's stderr.
func lcwrapExec(t *testing.T, env []string, args ...string) ([]event.Event, string) {
	t.Helper()
	requireCodex(t)
	journal := filepath.Join(t.TempDir(), "journal.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	argv := append([]string{"--journal", journal, "--", "codex"}, args...)
	cmd := exec.CommandContext(ctx, buildLcwrap(t), argv...)
	cmd.Env, cmd.Dir = env, t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("lcwrap -- codex: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.Bytes())
	}
	return journalEvents(t, journal), stderr.String()
}

// sessionLines are the codex events of a journal, one line each: kind,
// state, activity, evidence.
func sessionLines(evs []event.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Source != Source {
			continue
		}
		d, _ := event.DecodeDetails[struct {
			Evidence string `json:"evidence"`
		}](ev.Details)
		b.WriteString(string(ev.Kind) + " " + string(ev.State) + " " + ev.Activity + " [" + d.Evidence + "]\n")
	}
	return b.String()
}

// terminalHooks decodes the launched process's codexHooks member.
func terminalHooks(t *testing.T, evs []event.Event) CodexHooks {
	t.Helper()
	for _, ev := range evs {
		if ev.Source == "lcwrap" && ev.Kind == event.KindTerminal {
			d, ok := event.DecodeDetails[TerminalMembers](ev.Details)
			if !ok || d.CodexHooks == nil {
				t.Fatalf("the terminal event has no codexHooks: %s", ev.Details)
			}
			return *d.CodexHooks
		}
	}
	t.Fatalf("no terminal event")
	return CodexHooks{}
}

// TestRealExecHooks: `lcwrap -- codex exec --json` registers its hooks
// for the run (-c) once trusted. Untrusted, it registers none (codex would
// run none): lcwrap says so once, with the step, and follows the exec
// stream alone. Once trusted the
// way codex's /hooks review writes it (TrustConfig in the run's
// config.toml; no --dangerously-bypass-hook-trust), codex runs them and a
// tool call reaches lcwrap through PreToolUse and PostToolUse.
func TestRealExecHooks(t *testing.T) {
	step := mockresponses.Step{Calls: []mockresponses.Call{mockresponses.Exec("echo hooked-marker")}}
	args := []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "run the marker"}

	env, codexHome, _ := codexEnv(t, step)
	evs, stderr := lcwrapExec(t, env, args...)
	if n := strings.Count(stderr, "only once you have trusted it"); n != 1 || !strings.Contains(stderr, "lcwrap hook codex --print-config") {
		t.Errorf("untrusted: the step is said %d times, want once with --print-config:\n%s", n, stderr)
	}
	lines := sessionLines(evs)
	if strings.Contains(lines, "[PreToolUse]") || !strings.Contains(lines, "command: /bin/bash -lc 'echo hooked-marker'") {
		t.Errorf("untrusted: %s", lines)
	}
	if h := terminalHooks(t, evs); h.Payloads != 0 || len(h.NotTrusted) != len(HookEvents) || len(h.Registered) != 0 {
		t.Errorf("untrusted: codexHooks %+v", h)
	}

	cfg, err := os.ReadFile(filepath.Join(codexHome, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg = append(cfg, "\n"+TrustConfig(buildLcwrap(t))...)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	evs, stderr = lcwrapExec(t, env, args...)
	if strings.Contains(stderr, "trust") {
		t.Errorf("trusted: lcwrap still asks for trust:\n%s", stderr)
	}
	lines = sessionLines(evs)
	for _, want := range []string{
		"activity  Bash: echo hooked-marker [PreToolUse]",
		"activity  Bash done [PostToolUse]",
		"activity  prompt submitted [UserPromptSubmit]",
		"activity  turn ended [Stop]",
		"activity  session start reported by SessionStart (startup) [SessionStart]",
		"activity  command: /bin/bash -lc 'echo hooked-marker' [item.started:command_execution]",
	} {
		if !strings.Contains(lines, want+"\n") {
			t.Errorf("trusted: no %q in:\n%s", want, lines)
		}
	}
	if strings.Count(lines, "created created") != 1 || strings.Contains(lines, "waiting") {
		t.Errorf("trusted: one session, never waiting under exec:\n%s", lines)
	}
	if h := terminalHooks(t, evs); h.Payloads < 5 || len(h.NotTrusted) != 0 || len(h.Registered) != len(HookEvents) || h.BypassTrust {
		t.Errorf("trusted: codexHooks %+v", h)
	}
}

// trust adds TrustConfig for the test's lcwrap to codexHome's config.toml,
// as codex's /hooks review would.
func trust(t *testing.T, codexHome string) {
	t.Helper()
	cfg, err := os.ReadFile(filepath.Join(codexHome, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), append(cfg, "\n"+TrustConfig(buildLcwrap(t))...), 0o600); err != nil {
		t.Fatal(err)
	}
}
