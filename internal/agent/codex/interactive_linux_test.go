package codex

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/mockresponses"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// screen collects what a program writes on its terminal.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

var escapes = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]`)

// text is the output without escape sequences and spaces.
func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(strings.Fields(escapes.ReplaceAllString(s.buf.String(), "")), "")
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool, show func() string) {
	t.Helper()
	if !testtool.Poll(d, cond) {
		t.Fatalf("timed out waiting for %s; so far:\n%s", what, show())
	}
}

// tui is the real interactive codex on a terminal of its own.
type tui struct {
	t      *testing.T
	cmd    *exec.Cmd
	tty    *os.File
	scr    screen
	exited chan struct{}
}

// startTUI starts codex on a new pty (120x40) in a directory of its own;
// the test's end kills what is left of it.
func startTUI(t *testing.T, bin string, env []string) *tui {
	t.Helper()
	u := &tui{t: t, cmd: exec.Command(bin), exited: make(chan struct{})}
	u.cmd.Env, u.cmd.Dir = env, t.TempDir()
	tty, err := pty.StartWithSize(u.cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	u.tty = tty
	copied := make(chan struct{})
	go func() { defer close(copied); io_copy(&u.scr, tty) }()
	go func() { u.cmd.Wait(); close(u.exited) }()
	t.Cleanup(func() {
		syscall.Kill(-u.cmd.Process.Pid, syscall.SIGKILL) // its session and group: pty.Start made it a leader
		<-u.exited
		tty.Close()
		<-copied
	})
	return u
}

// ready waits for codex's prompt.
func (u *tui) ready() {
	u.t.Helper()
	waitFor(u.t, "the prompt", 90*time.Second, func() bool { return promptShown(u.scr.text()) }, u.scr.text)
}

// submit types a prompt (letters and spaces), waits for its echo, and
// presses Enter.
func (u *tui) submit(prompt string) {
	u.t.Helper()
	echo := strings.ReplaceAll(prompt, " ", "")
	typeUntilEcho(u.t, func() { u.tty.Write([]byte(prompt)) }, func() bool { return strings.Contains(u.scr.text(), echo) }, u.scr.text)
	u.tty.Write([]byte("\r"))
}

// quit presses Ctrl-C until codex has quit, as a user would.
func (u *tui) quit() {
	u.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		u.tty.Write([]byte{3})
		select {
		case <-u.exited:
			return
		case <-time.After(500 * time.Millisecond): // then Ctrl-C again
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("codex did not quit:\n%s", u.scr.text())
		}
	}
}

// TestRealInteractiveRollout runs the real interactive codex on a
// terminal: its rollout is followed only once proven (held by its
// app-server daemon, a setsid'd descendant), while a decoy rollout of
// another session, held open by a process outside the tree, is never
// attached; the daemon outliving codex is reported.
func TestRealInteractiveRollout(t *testing.T) {
	bin := requireCodex(t)
	env, codexHome, _ := codexEnv(t, mockresponses.Step{Calls: []mockresponses.Call{mockresponses.Exec("echo interactive-marker")}})
	decoy := rolloutFile(t, codexHome, threadB, threadB)
	start(t, "exec sleep 60", decoy)

	u := startTUI(t, bin, env)
	root, _, err := event.IdentityOf(event.System, u.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	tr, sink := newTracker(t, agent.Config{Parent: "codex-proc", RunTag: "it"})
	f := NewFollower(tr)
	f.Start(root)

	u.ready()
	if _, ok := f.Proven(); ok {
		t.Fatalf("a rollout was attached before codex opened one")
	}
	u.submit("run the marker")
	waitFor(t, "the turn's end in the rollout", 180*time.Second, func() bool {
		return strings.Contains(sink.Summaries(), "state_changed waiting\nactivity turn ended")
	}, func() string { return sink.Summaries() + "\nscreen:\n" + u.scr.text() })

	p, _ := f.Proven()
	if p.Path == decoy || p.ThreadID == threadB {
		t.Fatalf("the decoy was attached: %+v", p)
	}
	u.quit()
	f.Stop()
	tr.End(agent.ProcessEnd{ChildID: "codex-proc"})
	sink.Check(t)
	got := sink.Summaries()
	for _, want := range []string{"created created\nstate_changed starting\nstate_changed running\nactivity prompt submitted\n", "activity exec_command: echo interactive-marker\n", "terminal lost\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Contains(sink.All(), threadB) {
		t.Errorf("an event names the decoy's thread")
	}
	rep := f.Report()
	if rep.Rollout != "followed" || rep.Proof == nil || rep.Proof.Rollout != p.Path {
		t.Errorf("report %+v", rep)
	}
	if !appServer(rep.Daemons) {
		t.Errorf("the app-server daemon (a session of its own) that outlived codex is not reported: %+v", rep.Daemons)
	}
	if os.Getenv("LCWRAP_RECORD") != "" {
		b, _ := os.ReadFile(p.Path)
		record(t, "rollout-interactive.jsonl", b)
	}
}

// appServer reports whether daemons lists codex's app-server.
func appServer(daemons []CodexDaemon) bool {
	for _, d := range daemons {
		if strings.Contains(d.Command, "app-server") && d.OwnSession {
			return true
		}
	}
	return false
}

// io_copy copies until the pty is closed (EIO).
func io_copy(w *screen, r *os.File) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		w.Write(buf[:n])
		if err != nil {
			return
		}
	}
}
