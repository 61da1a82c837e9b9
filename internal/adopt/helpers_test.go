package adopt

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// The test binary doubles as every helper process: with
// LCWRAP_ADOPT_HELPER set, TestMain runs that helper instead of the tests.
var helpers = map[string]func(){
	// block lives until its standard input closes, then exits 0.
	"block": func() { io.Copy(io.Discard, os.Stdin) },
	// exit exits 0 at once.
	"exit": func() {},
}

func TestMain(m *testing.M) {
	if name := os.Getenv("LCWRAP_ADOPT_HELPER"); name != "" {
		helpers[name]()
		os.Exit(0)
	}
	code := m.Run()
	if left := unreaped(); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "helper processes left unreaped: %v\n", left)
		code = 1
	}
	os.Exit(code)
}

var (
	startedMu sync.Mutex
	started   []*exec.Cmd
)

// unreaped lists the pids of helpers nobody waited for.
func unreaped() []int {
	startedMu.Lock()
	defer startedMu.Unlock()
	var pids []int
	for _, c := range started {
		if c.ProcessState == nil {
			pids = append(pids, c.Process.Pid)
		}
	}
	return pids
}

// helper is a helper process the test started and is the parent of.
type helper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	pid   int
}

// startHelper starts a helper; extra args only decorate its command line.
// Cleanup closes its stdin and reaps it: no helper outlives its test.
func startHelper(t *testing.T, name string, args ...string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	// The race runtime otherwise sleeps 1s at exit.
	cmd.Env = append(os.Environ(), "LCWRAP_ADOPT_HELPER="+name, "GORACE=atexit_sleep_ms=0")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	startedMu.Lock()
	started = append(started, cmd)
	startedMu.Unlock()
	h := &helper{cmd: cmd, stdin: stdin, pid: cmd.Process.Pid}
	// Start returns once execve has closed the exec pipe, which the kernel
	// does before it sets up the new image's arguments: until then
	// /proc/PID/cmdline reads empty. Adopting in that window records an
	// unknown command line, so the helper counts as started only once its
	// arguments can be read.
	testtool.Poll(10*time.Second, func() bool {
		argv, err := event.Cmdline(h.pid)
		return err != nil || len(argv) > 0
	})
	t.Cleanup(func() {
		stdin.Close()
		if cmd.ProcessState == nil {
			cmd.Wait()
		}
	})
	return h
}

// release closes the helper's stdin: a block helper exits 0 by itself.
func (h *helper) release() { h.stdin.Close() }

// reap waits for the helper and requires the exit status 0 its own code
// chooses: it was not killed by a signal.
func (h *helper) reap(t *testing.T) {
	t.Helper()
	h.release()
	err := h.cmd.Wait()
	ws := h.cmd.ProcessState.Sys().(interface{ Signaled() bool })
	if err != nil || ws.Signaled() || h.cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("helper %d ended with %v (%v): something signalled it", h.pid, h.cmd.ProcessState, err)
	}
}

// recorder is a sink that hands every event to the test, after checking
// that its line is whole and valid.
type recorder struct {
	t      *testing.T
	events chan event.Event
	mu     sync.Mutex
	lines  []string
}

func newRecorder(t *testing.T) *recorder {
	return &recorder{t: t, events: make(chan event.Event, 1024)}
}

func (r *recorder) Name() string { return "recorder" }
func (r *recorder) Close() error { return nil }

func (r *recorder) WriteEvent(ev *event.Event, line []byte) error {
	if _, _, err := event.Parse(line[:len(line)-1]); err != nil || line[len(line)-1] != '\n' {
		r.t.Errorf("bad line %q: %v", line, err)
	}
	r.mu.Lock()
	r.lines = append(r.lines, string(line))
	r.mu.Unlock()
	r.events <- *ev
	return nil
}

// next waits (with a deadline) for the next event.
func (r *recorder) next(t *testing.T) event.Event {
	t.Helper()
	select {
	case ev := <-r.events:
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no event within 20s")
	}
	return event.Event{}
}

// none requires that no further event was written.
func (r *recorder) none(t *testing.T) {
	t.Helper()
	select {
	case ev := <-r.events:
		t.Fatalf("unexpected event %s %s: %s", ev.Kind, ev.State, ev.Details)
	default:
	}
}
