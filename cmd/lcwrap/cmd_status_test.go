package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// lcwrapCmd prepares the lcwrap binary (installed in $PATH by TestMain)
// with its own journal.
func lcwrapCmd(t *testing.T, journal string, args ...string) *exec.Cmd {
	t.Helper()
	bin, err := exec.LookPath("lcwrap")
	if err != nil {
		t.Fatalf("lcwrap is not in $PATH (TestMain installs it): %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "LCWRAP_JOURNAL="+journal, "NO_COLOR=")
	return cmd
}

// lcwrapRun runs lcwrap to its end and returns its output.
func lcwrapRun(t *testing.T, journal string, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := lcwrapCmd(t, journal, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("lcwrap %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String()
}

// waitFor is testtool.Eventually (kept by name for this package's tests).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testtool.Eventually(t, what, cond)
}

func journalEvents(t *testing.T, path string) []event.Event {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []event.Event
	d := event.NewDecoder(f, event.DecoderOptions{})
	for {
		rec, err := d.Next()
		if err != nil {
			return out
		}
		out = append(out, rec.Event)
	}
}

func hasEvent(events []event.Event, kind event.Kind, state event.State) (event.Event, bool) {
	for _, e := range events {
		if e.Kind == kind && e.State == state {
			return e, true
		}
	}
	return event.Event{}, false
}

// End to end: `lcwrap -- sleep` whose wrapper stops (SIGSTOP) goes stale
// but is never marked lost while the wrapper lives; once the wrapper is
// SIGKILLed, `status --reconcile` appends lost, saying the sleep itself is
// still present.
func TestStatusReconcileKilledWrapper(t *testing.T) {
	j := filepath.Join(t.TempDir(), "journal.jsonl")
	wrapper := lcwrapCmd(t, j, "--heartbeat", "100ms", "--child-id", "e2e", "--", "sleep", "30")
	if err := wrapper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		wrapper.Process.Kill()
		wrapper.Wait()
	})
	var childPID int
	waitFor(t, "the child to run", func() bool {
		e, ok := hasEvent(journalEvents(t, j), event.KindStateChanged, event.StateRunning)
		if ok {
			var d struct{ Child event.Identity }
			json.Unmarshal(e.Details, &d)
			childPID = d.Child.PID
		}
		return ok
	})
	t.Cleanup(func() { killOwnChild(t, childPID) })

	// Heartbeats stop, the wrapper lives: stale, never lost.
	if err := wrapper.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the child to go stale", func() bool {
		out, _ := lcwrapRun(t, j, "status", "--json")
		return strings.Contains(out, `"stale": true`)
	})
	out, errOut := lcwrapRun(t, j, "status", "--reconcile")
	if !strings.Contains(errOut, "e2e is stale, but its wrapper (pid ") || !strings.Contains(errOut, "is alive: not lost") {
		t.Fatalf("live wrapper: stderr %q", errOut)
	}
	if !strings.Contains(out, "e2e ") || !strings.Contains(out, " running ") || !strings.Contains(out, "stale") {
		t.Fatalf("live wrapper: table %q", out)
	}
	if _, ok := hasEvent(journalEvents(t, j), event.KindTerminal, event.StateLost); ok {
		t.Fatal("a live wrapper's child was marked lost")
	}

	// The wrapper is killed: its child is lost, and its sleep is still there.
	wrapper.Process.Kill()
	wrapper.Wait()
	// Had SIGSTOP caught the wrapper holding the journal lock, the lock is
	// now a dead owner's: let it be reclaimed without waiting 30s.
	_, errOut = lcwrapRun(t, j, "status", "--reconcile", "--lock-stale-after", "10ms")
	if !strings.Contains(errOut, "e2e is lost: its wrapper") || !strings.Contains(errOut, "'lcwrap adopt ") {
		t.Fatalf("killed wrapper: stderr %q", errOut)
	}
	lost, ok := hasEvent(journalEvents(t, j), event.KindTerminal, event.StateLost)
	if !ok || lost.Source != "lcwrap-reconcile" || lost.ChildID != "e2e" {
		t.Fatalf("no lost event from the reconciler: %+v", lost)
	}
	var d struct {
		ChildProcess struct {
			Identity event.Identity
			Status   string
		}
	}
	if err := json.Unmarshal(lost.Details, &d); err != nil || d.ChildProcess.Status != "alive" || d.ChildProcess.Identity.PID != childPID {
		t.Fatalf("childProcess in %s", lost.Details)
	}
	out, _ = lcwrapRun(t, j, "status", "--all")
	if !strings.Contains(out, " lost ") || !strings.Contains(out, "still present") {
		t.Fatalf("after reconcile: %q", out)
	}
}

// killOwnChild ends the sleep this test started through lcwrap, after
// checking that the pid still belongs to a sleep whose parent is gone.
func killOwnChild(t *testing.T, pid int) {
	if pid <= 0 {
		return
	}
	p, err := os.FindProcess(pid) // a pidfd: a later signal cannot hit a reused pid
	if err != nil {
		return
	}
	if info, err := event.System.Stat(pid); err == nil && info.Comm == "sleep" {
		p.Kill()
	}
	p.Release()
}

// writeFixture writes a journal with one running child (old heartbeat,
// so stale) and one ended child.
func writeFixture(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("testdata/script/status_reconcile.txtar")
	if err != nil {
		t.Fatal(err)
	}
	_, journal, ok := strings.Cut(string(src), "-- journal.jsonl --\n")
	if !ok {
		t.Fatal("no journal in status_reconcile.txtar")
	}
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	if err := os.WriteFile(path, []byte(journal), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Colours only on a terminal, and never with NO_COLOR set.
func TestStatusColoursOnlyOnTerminal(t *testing.T) {
	j := writeFixture(t)
	run := func(noColor bool) string {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Skipf("no pty here: %v", err)
		}
		defer ptmx.Close()
		cmd := lcwrapCmd(t, j, "status", "--all")
		if !noColor {
			cmd.Env = slicesWithout(cmd.Env, "NO_COLOR")
		} else {
			cmd.Env = append(cmd.Env, "NO_COLOR=1")
		}
		cmd.Stdout = tty
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tty.Close()
		var buf bytes.Buffer
		io.Copy(&buf, ptmx) // ends with EIO once the child side closes
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	if out := run(false); !strings.Contains(out, "\x1b[32m● running\x1b[0m") || !strings.Contains(out, "\x1b[31m✕ failed\x1b[0m") {
		t.Fatalf("no colours on a terminal: %q", out)
	}
	if out := run(true); strings.Contains(out, "\x1b[") || !strings.Contains(out, "running") {
		t.Fatalf("colours despite NO_COLOR: %q", out)
	}
	out, _ := lcwrapRun(t, j, "status", "--all")
	if strings.Contains(out, "\x1b[") {
		t.Fatalf("colours on a pipe: %q", out)
	}
}

func slicesWithout(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// watchStatus starts `lcwrap status --watch` with args and returns a
// function that waits for an output line containing want.
func watchStatus(t *testing.T, j string, stderr io.Writer, args ...string) (*exec.Cmd, func(want string) string, chan string) {
	t.Helper()
	cmd := lcwrapCmd(t, j, append([]string{"status", "--watch"}, args...)...)
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	wait := func(want string) string {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("output ended before a line with %q", want)
				}
				if strings.Contains(l, want) {
					return l
				}
			case <-deadline:
				t.Fatalf("no line with %q", want)
			}
		}
	}
	return cmd, wait, lines
}

// interrupt sends ^C and requires exit 0.
func interrupt(t *testing.T, cmd *exec.Cmd, lines chan string) {
	t.Helper()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("watch interrupted: %v, want exit 0", err)
	}
}

// --watch redraws as the journal grows and ends with exit 0 on ^C.
func TestStatusWatch(t *testing.T) {
	j := writeFixture(t)
	cmd, wait, lines := watchStatus(t, j, nil)
	wait("remote-8 ")
	wait("2 ended not shown")
	lcwrapRun(t, j, "--child-id", "appended-later", "--", "true")
	wait("3 ended not shown") // a later frame counts the run that just ended
	interrupt(t, cmd, lines)
}

// A journal that turns blocked while watched: the warning comes once, and
// the picture of its valid prefix stays.
func TestStatusWatchBlocked(t *testing.T) {
	j := writeFixture(t)
	var stderr bytes.Buffer
	cmd, wait, lines := watchStatus(t, j, &stderr, "--json")
	wait(`"childId":"remote-8"`)
	f, err := os.OpenFile(j, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("not an event\n")
	f.Close()
	l := wait(`"blocked":{"line":19,`)
	if !strings.Contains(l, `"childId":"remote-8"`) {
		t.Fatalf("the valid prefix is gone from %s", l)
	}
	wait(`"blocked":{"line":19,`) // another frame: no second warning
	interrupt(t, cmd, lines)
	if n := strings.Count(stderr.String(), "append-blocked at line 19"); n != 1 {
		t.Fatalf("%d warnings: %q", n, stderr.String())
	}
}
