package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/mockresponses"
)

// TestRealInteractivePermissionHooks: `lcwrap --pty -- codex -a
// on-request` under tmux, its hooks trusted the way codex's /hooks review
// writes them. The model asks to run a command outside the sandbox; while
// codex's approval prompt is on the screen, the session is waiting for
// permission (codex's PermissionRequest hook); once approved it runs the
// command (PostToolUse) and ends the turn, waiting for the user (Stop).
// Waits are generous: under load codex takes long to start.
func TestRealInteractivePermissionHooks(t *testing.T) {
	requireCodex(t)
	marker := filepath.Join(t.TempDir(), "approved-marker")
	env, codexHome, _ := codexEnv(t, mockresponses.Step{Calls: []mockresponses.Call{mockresponses.Escalated("touch "+marker, "lcwrap test wants approval")}})
	lcwrap := buildLcwrap(t)
	cfg, err := os.ReadFile(filepath.Join(codexHome, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), append(cfg, "\n"+TrustConfig(lcwrap)...), 0o600); err != nil {
		t.Fatal(err)
	}
	var envArgs []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == "HOME" || k == "CODEX_HOME" || k == mockresponses.EnvKey || k == "PATH" {
			envArgs = append(envArgs, "'"+kv+"'")
		}
	}
	journal := filepath.Join(t.TempDir(), "journal.jsonl")
	stderr := filepath.Join(t.TempDir(), "stderr")
	s := newTmux(t, t.TempDir(), fmt.Sprintf("env %s LCWRAP_JOURNAL=%s %s --pty -- codex -a on-request 2>%s; sleep 600", strings.Join(envArgs, " "), journal, lcwrap, stderr))
	waitFor(t, "codex's prompt under lcwrap --pty", 90*time.Second, func() bool { return promptShown(s.pane()) }, s.pane)
	typeUntilEcho(t, func() { s.keys("-l", "touch the marker") }, func() bool { return strings.Contains(s.pane(), "touch the marker") }, s.pane)
	s.keys("Enter")

	waiting := func(reason string) func() bool {
		return func() bool {
			evs := journalEvents(t, journal)
			if len(evs) == 0 {
				return false
			}
			last := evs[len(evs)-1]
			for i := len(evs) - 1; i >= 0; i-- {
				if evs[i].Source == Source && evs[i].Kind == event.KindStateChanged {
					last = evs[i]
					break
				}
			}
			d, _ := event.DecodeDetails[struct {
				WaitingFor string `json:"waitingFor"`
			}](last.Details)
			return last.State == event.StateWaiting && d.WaitingFor == reason
		}
	}
	show := func() string { return sessionLines(journalEvents(t, journal)) + "\nscreen:\n" + s.pane() }
	waitFor(t, "codex's approval prompt", 90*time.Second, func() bool { return strings.Contains(s.pane(), "Would you like to run") }, show)
	waitFor(t, "waiting for permission in the journal", 90*time.Second, waiting("permission"), show)
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the command ran before it was approved")
	}
	s.keys("y")
	waitFor(t, "the turn's end: waiting for the user", 90*time.Second, waiting("user"), show)
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(show(), "terminal lost") && time.Now().Before(deadline) {
		s.keys("C-c")
		time.Sleep(500 * time.Millisecond) // Ctrl-C again until codex has quit
	}
	evs := journalEvents(t, journal)
	lines := sessionLines(evs)
	for _, want := range []string{
		"state_changed waiting  [PermissionRequest]\nactivity  waiting for permission (Bash: touch " + marker + ") [PermissionRequest]\n",
		"activity  Bash done [PostToolUse]\n",
		"state_changed waiting  [Stop]\nactivity  turn ended; waiting for the user [Stop]\n",
		"terminal lost",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("no %q in:\n%s", want, lines)
		}
	}
	if i := strings.Index(lines, "[PermissionRequest]\n"); i < 0 || !strings.Contains(lines[i:], "state_changed running") {
		t.Errorf("the approval did not end the wait (running after PermissionRequest):\n%s", lines)
	}
	if strings.Count(lines, "created created") != 1 {
		t.Errorf("one session, created once:\n%s", lines)
	}
	if h := terminalHooks(t, evs); len(h.NotTrusted) != 0 || h.Payloads < 5 {
		t.Errorf("codexHooks %+v", h)
	}
	if b, _ := os.ReadFile(stderr); strings.Contains(string(b), "trust") {
		t.Errorf("lcwrap asked for trust although the hooks are trusted:\n%s", b)
	}
}
