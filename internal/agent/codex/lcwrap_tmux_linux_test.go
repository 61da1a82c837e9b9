package codex

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/mockresponses"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// buildLcwrap builds the lcwrap binary once for the package's tests.
func buildLcwrap(t *testing.T) string { return testtool.Lcwrap(t) }

// tmuxSession runs one command line in a detached tmux session on a
// private server (-L), for as long as the test runs.
type tmuxSession struct {
	t      *testing.T
	socket string
}

func newTmux(t *testing.T, dir, command string) *tmuxSession {
	t.Helper()
	testtool.Need(t, "tmux", "apt-get install tmux")
	s := &tmuxSession{t: t, socket: fmt.Sprintf("lcwrap-codex-%d-%d", os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(func() { exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	cmd := exec.Command("tmux", "-L", s.socket, "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "-c", dir, command)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	return s
}

func (s *tmuxSession) pane() string {
	out, _ := exec.Command("tmux", "-L", s.socket, "capture-pane", "-p", "-t", "t").Output()
	return string(out)
}

func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"-L", s.socket, "send-keys", "-t", "t"}, keys...)...).CombinedOutput(); err != nil {
		s.t.Fatalf("tmux send-keys: %v\n%s", err, out)
	}
}

// journalEvents reads the journal's events (none when it does not exist).
func journalEvents(t *testing.T, path string) []event.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var evs []event.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev event.Event
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			evs = append(evs, ev)
		}
	}
	return evs
}

// interactiveRun is one `lcwrap --pty -- codex` under tmux, driven as a
// user would: wait for the prompt, type one, wait, then Ctrl-C twice.
func interactiveRun(t *testing.T, env []string, journal, prompt string, waitTurn bool) []event.Event {
	t.Helper()
	var envArgs []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == "HOME" || k == "CODEX_HOME" || k == mockresponses.EnvKey || k == "PATH" {
			envArgs = append(envArgs, "'"+kv+"'")
		}
	}
	command := fmt.Sprintf("env %s LCWRAP_JOURNAL=%s %s --pty -- codex; sleep 600", strings.Join(envArgs, " "), journal, buildLcwrap(t))
	s := newTmux(t, t.TempDir(), command)
	waitFor(t, "codex's prompt under lcwrap --pty", 90*time.Second, func() bool { return promptShown(s.pane()) }, s.pane)
	typeUntilEcho(t, func() { s.keys("-l", prompt) }, func() bool { return strings.Contains(s.pane(), prompt) }, s.pane)
	s.keys("Enter")
	if waitTurn {
		waitFor(t, "the turn's end in the journal", 180*time.Second, func() bool {
			for _, ev := range journalEvents(t, journal) {
				if ev.Source == Source && ev.State == event.StateWaiting {
					return true
				}
			}
			return false
		}, s.pane)
	} else {
		waitFor(t, "codex's answer on the screen", 180*time.Second, func() bool { return strings.Contains(s.pane(), "Worked for") }, s.pane)
	}
	s.keys("C-c")
	ended := func() bool {
		for _, ev := range journalEvents(t, journal) {
			if ev.Source == "lcwrap" && ev.Kind == event.KindTerminal {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(60 * time.Second)
	for !ended() && time.Now().Before(deadline) {
		s.keys("C-c")
		time.Sleep(500 * time.Millisecond) // Ctrl-C again until codex has quit
	}
	if !ended() {
		t.Fatalf("codex did not end under lcwrap:\n%s", s.pane())
	}
	return journalEvents(t, journal)
}

// terminalRollout decodes the launched process's codexRollout member.
func terminalRollout(t *testing.T, evs []event.Event) CodexRollout {
	t.Helper()
	for _, ev := range evs {
		if ev.Source == "lcwrap" && ev.Kind == event.KindTerminal {
			d, ok := event.DecodeDetails[TerminalMembers](ev.Details)
			if !ok || d.CodexRollout == nil {
				t.Fatalf("the terminal event has no codexRollout: %s", ev.Details)
			}
			return *d.CodexRollout
		}
	}
	t.Fatalf("no terminal event")
	return CodexRollout{}
}

// TestRealInteractiveUnderLcwrap: `lcwrap --pty -- codex` under tmux. The
// TUI works; its rollout is followed once proven (held by the app-server
// daemon this run started), never the decoy of another session next to
// it; the daemon that outlives codex is reported. A second run with the
// same CODEX_HOME reaches the daemon the first one left: the daemon is
// not its descendant, so nothing is proven and the run stays at process
// level.
func TestRealInteractiveUnderLcwrap(t *testing.T) {
	requireCodex(t)
	env, codexHome, _ := codexEnv(t,
		mockresponses.Step{Calls: []mockresponses.Call{mockresponses.Exec("echo first-marker")}})
	decoy := rolloutFile(t, codexHome, threadB, threadB)
	start(t, "exec sleep 60", decoy)

	journal := filepath.Join(t.TempDir(), "journal.jsonl")
	evs := interactiveRun(t, env, journal, "run the marker", true)
	var got []string
	for _, ev := range evs {
		if ev.Source == Source {
			got = append(got, string(ev.Kind)+" "+string(ev.State)+" "+ev.Activity)
		}
		if strings.Contains(string(ev.Details), threadB) {
			t.Errorf("an event names the decoy's thread: %s", ev.Details)
		}
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"created created", "activity  prompt submitted", "activity  exec_command: echo first-marker", "state_changed waiting", "terminal lost"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q among the session's events:\n%s", want, all)
		}
	}
	r := terminalRollout(t, evs)
	if r.Rollout != "followed" || r.Proof == nil || !r.Proof.OwnSession || len(r.Proof.Chain) < 2 {
		t.Errorf("codexRollout %+v", r)
	}
	if !appServer(r.Daemons) {
		t.Errorf("the app-server daemon that outlived codex is not reported: %+v", r.Daemons)
	}

	// The second run: its session is real, but held by the first run's
	// daemon, outside this run's tree.
	journal2 := filepath.Join(t.TempDir(), "journal.jsonl")
	evs = interactiveRun(t, env, journal2, "again please", false)
	for _, ev := range evs {
		if ev.Source == Source {
			t.Errorf("a session was attached without proof: %s %s %s", ev.Kind, ev.State, ev.Details)
		}
	}
	if r := terminalRollout(t, evs); r.Rollout != "not followed" {
		t.Errorf("second run: codexRollout %+v", r)
	} else {
		t.Logf("second run: %+v", r)
	}
}
