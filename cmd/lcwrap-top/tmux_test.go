package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
	"github.com/lcwrap/lcwrap/internal/view/viewtest"
)

// binaries returns the directory of lcwrap with lcwrap-top built beside it,
// where `lcwrap top` looks first.
func binaries(t *testing.T) string {
	t.Helper()
	return filepath.Dir(testtool.Companion(t, "lcwrap-top"))
}

func TestMain(m *testing.M) {
	code := m.Run()
	testtool.Cleanup()
	os.Exit(code)
}

// pane is one tmux server of its own (a private -L socket) with one pane.
type pane struct {
	t      *testing.T
	socket string
}

var sockets int

func newPane(t *testing.T, width, height int, env []string, script string) *pane {
	t.Helper()
	testtool.Need(t, "tmux", "apt-get install tmux")
	sockets++
	p := &pane{t: t, socket: fmt.Sprintf("lcwrap-top-test-%d-%d", os.Getpid(), sockets)}
	args := []string{"-L", p.socket, "-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height)}
	// tmux keeps its own PATH whatever -e says: the script sets the
	// environment itself.
	var exports strings.Builder
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&exports, "export %s='%s'; ", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	args = append(args, "sh", "-c", exports.String()+script)
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	return p
}

func (p *pane) capture() string {
	out, err := exec.Command("tmux", "-L", p.socket, "capture-pane", "-p").Output()
	if err != nil {
		p.t.Fatalf("capture-pane: %v", err)
	}
	return string(out)
}

// waitFor polls the pane until it shows every string, failing at the
// deadline with the last capture.
func (p *pane) waitFor(what ...string) string {
	p.t.Helper()
	var s string
	if !testtool.Poll(20*time.Second, func() bool {
		s = p.capture()
		ok := true
		for _, w := range what {
			ok = ok && strings.Contains(s, w)
		}
		return ok
	}) {
		p.t.Fatalf("the pane never showed %q:\n%s", what, s)
	}
	return s
}

func (p *pane) keys(keys ...string) {
	p.t.Helper()
	for _, k := range keys {
		// One key at a time: an escape followed at once by another key
		// reads as alt+key.
		if out, err := exec.Command("tmux", "-L", p.socket, "send-keys", k).CombinedOutput(); err != nil {
			p.t.Fatalf("send-keys %s: %v\n%s", k, err, out)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// session starts top in a pane through `lcwrap top` against a journal
// holding the standard scene, recording stty -g before and after.
func session(t *testing.T, width, height int, extraEnv ...string) (p *pane, dir, journal string) {
	bin := binaries(t)
	dir = t.TempDir()
	journal = filepath.Join(dir, "journal.jsonl")
	s := viewtest.Standard(time.Now().Add(-time.Minute))
	if err := viewtest.Append(journal, s.Out); err != nil {
		t.Fatal(err)
	}
	env := append([]string{"PATH=" + bin + ":" + os.Getenv("PATH"), "LCWRAP_JOURNAL=" + journal, "TERM=xterm-256color"}, extraEnv...)
	script := fmt.Sprintf(`cd %q; stty -g > before; echo $$ > pid; lcwrap top 2>stderr; echo "exit $?" > status; stty -g > after; echo TOP-ENDED; sleep 600`, dir)
	p = newPane(t, width, height, env, script)
	return p, dir, journal
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	var b []byte
	if !testtool.Poll(20*time.Second, func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil && len(b) > 0
	}) {
		t.Fatalf("%s was never written", path)
	}
	return string(b)
}

func sameTerminal(t *testing.T, dir string) {
	t.Helper()
	readFile(t, filepath.Join(dir, "after"))
	before, after := readFile(t, filepath.Join(dir, "before")), readFile(t, filepath.Join(dir, "after"))
	if before != after {
		t.Fatalf("terminal settings changed: before %q, after %q", before, after)
	}
}

func TestTopInTmux(t *testing.T) {
	p, dir, journal := session(t, 100, 30, "NO_COLOR=1")
	scr := p.waitFor("lcwrap top", "sub-tests")
	for _, want := range []string{"agent-1", "└─ session-1", "├─ sub-explore", "└─ sub-tests", "◆ waiting", "● running", "◎ observed", "?5", "3 ended hidden", "q quit"} {
		if !strings.Contains(scr, want) {
			t.Errorf("screen lacks %q:\n%s", want, scr)
		}
	}
	// Nothing is appended yet: the clock alone moves agent-1's duration.
	row := func(scr string) string {
		for _, l := range strings.Split(scr, "\n") {
			if strings.Contains(l, "agent-1") {
				return l
			}
		}
		return ""
	}
	first := row(scr)
	if !testtool.Poll(20*time.Second, func() bool { return row(p.capture()) != first }) {
		t.Fatalf("agent-1's row never changed from %q", first)
	}
	// A test that keeps appending: heartbeats of agent-1 and new children.
	stop := make(chan struct{})
	appended := make(chan error, 1)
	go func() {
		s := viewtest.New(time.Now())
		for i := 0; ; i++ {
			select {
			case <-stop:
				appended <- nil
				return
			case <-time.After(100 * time.Millisecond):
			}
			s.Out = nil
			c := viewtest.Child{ID: fmt.Sprintf("late-%d", i), Caps: viewtest.Agent.Caps, HeartbeatMs: 3600_000}
			s.At = time.Now()
			s.Created(c)
			s.States(c, event.StateStarting, event.StateRunning)
			if i%2 == 1 {
				s.States(c, event.StateWaiting)
			}
			if err := viewtest.Append(journal, s.Out); err != nil {
				appended <- err
				return
			}
		}
	}()
	defer func() {
		close(stop)
		if err := <-appended; err != nil {
			t.Error(err)
		}
	}()
	p.waitFor("late-3")
	// The filter.
	p.keys("/", "w", "a", "i", "t", "Enter")
	scr = p.waitFor(`filter "wait"`)
	for _, line := range strings.Split(scr, "\n") {
		if strings.Contains(line, "server-9") || strings.Contains(line, "fetch-2") {
			t.Fatalf("the filter shows a child that is not waiting:\n%s", scr)
		}
	}
	// The detail pane of sub-tests.
	p.keys("Escape")
	p.waitFor("server-9")
	p.keys("/", "s", "u", "b", "-", "t", "Enter", "G", "Enter")
	scr = p.waitFor("Capabilities", "agent-1 › session-1 › sub-tests")
	for _, want := range []string{"? unknown", "Events (last", "waiting", "esc back"} {
		if !strings.Contains(scr, want) {
			t.Errorf("detail pane lacks %q:\n%s", want, scr)
		}
	}
	p.keys("Escape")
	p.waitFor("q quit")
	p.keys("q")
	p.waitFor("TOP-ENDED")
	sameTerminal(t, dir)
	if st := readFile(t, filepath.Join(dir, "status")); st != "exit 0\n" {
		t.Fatalf("top ended with %q", st)
	}
	if strings.Contains(p.capture(), "lcwrap top") {
		t.Fatal("the screen was not restored (alternate screen left on)")
	}
}

// Every other way out restores the terminal too: ^C, SIGTERM, SIGHUP, a
// panic in the follower or in the model.
func TestTopRestoresTerminal(t *testing.T) {
	t.Run("ctrl-c", func(t *testing.T) {
		p, dir, _ := session(t, 80, 24)
		p.waitFor("sub-tests")
		p.keys("C-c")
		p.waitFor("TOP-ENDED")
		sameTerminal(t, dir)
	})
	t.Run("sigterm", func(t *testing.T) {
		p, dir, _ := session(t, 80, 24)
		p.waitFor("sub-tests")
		if err := syscallKill(topPid(t, dir), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		p.waitFor("TOP-ENDED")
		sameTerminal(t, dir)
	})
	t.Run("sighup", func(t *testing.T) {
		p, dir, _ := session(t, 80, 24)
		p.waitFor("sub-tests")
		if err := syscallKill(topPid(t, dir), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		p.waitFor("TOP-ENDED")
		sameTerminal(t, dir)
	})
	t.Run("panic", func(t *testing.T) {
		p, dir, _ := session(t, 80, 24, panicHook+"=follower")
		p.waitFor("TOP-ENDED")
		sameTerminal(t, dir)
		if st := readFile(t, filepath.Join(dir, "status")); st != "exit 1\n" {
			t.Fatalf("top ended with %q after a panic", st)
		}
		if e := readFile(t, filepath.Join(dir, "stderr")); !strings.Contains(e, "panic: test panic") {
			t.Fatalf("the panic was not reported:\n%s", e)
		}
	})
	t.Run("panic-in-update", func(t *testing.T) {
		p, dir, _ := session(t, 80, 24, panicHook+"=key")
		p.waitFor("sub-tests")
		p.keys("!")
		p.waitFor("TOP-ENDED")
		sameTerminal(t, dir)
		if st := readFile(t, filepath.Join(dir, "status")); st != "exit 1\n" {
			t.Fatalf("top ended with %q after a panic", st)
		}
		if e := readFile(t, filepath.Join(dir, "stderr")); !strings.Contains(e, "panic: test panic at a key") {
			t.Fatalf("the panic was not reported:\n%s", e)
		}
	})
	t.Run("narrow", func(t *testing.T) {
		p, _, _ := session(t, 40, 12)
		scr := p.waitFor("waiting")
		for _, l := range strings.Split(scr, "\n") {
			if len([]rune(l)) > 40 {
				t.Fatalf("line wider than 40: %q", l)
			}
		}
		p.keys("q")
		p.waitFor("TOP-ENDED")
	})
}

// topPid is the pid of top in a session's pane.
func topPid(t *testing.T, dir string) int {
	t.Helper()
	testtool.Need(t, "pgrep", "apt-get install procps")
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dir, "pid"))))
	if err != nil {
		t.Fatal(err)
	}
	// The shell printed its pid; top is its child (lcwrap execs
	// lcwrap-top, so the pid is top's).
	out, err := exec.Command("pgrep", "-P", strconv.Itoa(pid), "lcwrap-top").Output()
	if err != nil {
		t.Fatalf("pgrep: %v", err)
	}
	top, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return top
}

func TestTopRefusesWithoutTerminal(t *testing.T) {
	bin := binaries(t)
	for _, argv := range [][]string{{filepath.Join(bin, "lcwrap"), "top"}, {filepath.Join(bin, "lcwrap-top")}} {
		cmd := exec.Command(argv[0], argv[1:]...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Env = append(os.Environ(), "LCWRAP_JOURNAL="+filepath.Join(t.TempDir(), "j.jsonl"))
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != exitUsage {
			t.Fatalf("%v: %v, want exit %d", argv, err, exitUsage)
		}
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "status --watch") || !strings.Contains(lines[0], "status --json") || out.Len() > 0 {
			t.Fatalf("%v: stdout %q, stderr %q", argv, out.String(), errb.String())
		}
	}
}
