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

	"github.com/lcwrap/lcwrap/agent"
	"github.com/lcwrap/lcwrap/internal/mockresponses"
	"github.com/lcwrap/lcwrap/internal/procid"
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
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; so far:\n%s", what, show())
		}
		time.Sleep(20 * time.Millisecond)
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

	cmd := exec.Command(bin)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	var scr screen
	copied := make(chan struct{})
	go func() { defer close(copied); io_copy(&scr, tty) }()
	ended := false
	t.Cleanup(func() {
		if !ended {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		}
		tty.Close()
		<-copied
	})
	root, _, err := procid.Of(procid.System, cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	tr, sink := newTracker(t, agent.Config{Parent: "codex-proc", RunTag: "it"})
	f := NewFollower(tr)
	f.Start(root)

	waitFor(t, "the prompt", 30*time.Second, func() bool { return strings.Contains(scr.text(), "describeatask") }, scr.text)
	if _, ok := f.Proven(); ok {
		t.Fatalf("a rollout was attached before codex opened one")
	}
	tty.Write([]byte("run the marker"))
	waitFor(t, "the prompt's echo", 10*time.Second, func() bool { return strings.Contains(scr.text(), "runthemarker") }, scr.text)
	tty.Write([]byte("\r"))
	waitFor(t, "the turn's end in the rollout", 30*time.Second, func() bool {
		return strings.Contains(sink.summary(), "state_changed waiting\nactivity turn ended")
	}, func() string { return sink.summary() + "\nscreen:\n" + scr.text() })

	p, _ := f.Proven()
	if p.Path == decoy || p.ThreadID == threadB {
		t.Fatalf("the decoy was attached: %+v", p)
	}
	if p.Holder.PID == root.PID || !p.OwnSession {
		t.Logf("note: the rollout is held by pid %d (root %d), own session %v", p.Holder.PID, root.PID, p.OwnSession)
	}

	// End codex as a user would (Ctrl-C twice), else kill it.
	tty.Write([]byte{3})
	time.AfterFunc(2*time.Second, func() { tty.Write([]byte{3}) })
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	ended = true
	f.Stop()
	tr.End(agent.ProcessEnd{ChildID: "codex-proc"})
	sink.check(t)
	got := sink.summary()
	for _, want := range []string{"created created\nstate_changed starting\nstate_changed running\nactivity prompt submitted\n", "activity exec_command: echo interactive-marker\n", "terminal lost\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Contains(sink.all(), threadB) {
		t.Errorf("an event names the decoy's thread")
	}
	rep := f.Report()
	if rep.Rollout != "followed" || rep.Proof == nil || rep.Proof.Rollout != p.Path {
		t.Errorf("report %+v", rep)
	}
	// The app-server daemon, in a session of its own, outlives codex.
	daemon := false
	for _, d := range rep.Daemons {
		daemon = daemon || strings.Contains(d.Command, "app-server")
	}
	if !daemon {
		t.Logf("no app-server daemon outlived codex: %+v", rep.Daemons)
	}
	if os.Getenv("LCWRAP_RECORD") != "" {
		b, _ := os.ReadFile(p.Path)
		record(t, "rollout-interactive.jsonl", b)
	}
}
