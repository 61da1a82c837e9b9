package adopt

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/pidfd"
)

// awaitExit blocks until the helper has exited, without reaping it: it
// stays a zombie until reap.
func (h *helper) awaitExit(t *testing.T) {
	t.Helper()
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, h.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return
	}
}

// A zombie has exited (kill(pid, 0) would still succeed): seen as gone
// when it dies under observation and when it is one already at adoption.
func TestZombie(t *testing.T) {
	forModes(t, func(t *testing.T, opts Options, want string) {
		h := startHelper(t, "block")
		a := adoptPID(t, context.Background(), h.pid, opts, want)
		checkStart(t, a)
		h.release() // it exits; the test does not reap it yet
		if reason := checkLost(t, a); !strings.Contains(reason, "zombie") {
			t.Errorf("reason %q, want the zombie named", reason)
		}
		h.reap(t)

		z := startHelper(t, "exit")
		z.awaitExit(t)
		a = adoptPID(t, context.Background(), z.pid, opts, want)
		d := checkStart(t, a)
		if d["command"] != "unknown" {
			t.Errorf("command of a zombie %v, want unknown", d["command"])
		}
		if event.ProcBackend == "procfs" && d["executable"] != "unknown" {
			t.Errorf("executable of a zombie %v, want unknown", d["executable"])
		}
		if reason := checkLost(t, a); !strings.Contains(reason, "zombie") {
			t.Errorf("reason %q, want the zombie named", reason)
		}
		z.reap(t)
	})
}

// With a pidfd that says the process has exited, only a zombie with the
// start time that was read still holds the pid; anything else may be a
// newcomer, and adoption is refused.
func TestOpenRefusesExitedAndReused(t *testing.T) {
	if autoWatching() != "pidfd" {
		t.Skip("no pidfd here")
	}
	z := startHelper(t, "exit")
	z.awaitExit(t)
	for _, second := range []event.ProcInfo{{StartTime: 200, State: 'S'}, {StartTime: 100, State: 'S'}} {
		tbl := &scripted{answers: []event.ProcInfo{{StartTime: 100, State: 'S'}, second}}
		if _, err := Open(z.pid, Options{Table: tbl}); !errors.Is(err, ErrVanished) {
			t.Errorf("second read %+v: Open = %v, want ErrVanished", second, err)
		}
	}
	z.reap(t)
}

// Where pidfd_open fails (old kernel, seccomp, no descriptors left),
// adoption falls back to polling and still sees the exit.
func TestPidfdFallback(t *testing.T) {
	saved := pidfd.OpenFunc
	t.Cleanup(func() { pidfd.OpenFunc = saved })
	for _, errno := range []unix.Errno{unix.ENOSYS, unix.EPERM, unix.EMFILE} {
		pidfd.OpenFunc = func(int, int) (int, error) { return -1, errno }
		h := startHelper(t, "block")
		a := adoptPID(t, context.Background(), h.pid, Options{Poll: 5 * time.Millisecond}, "poll")
		checkStart(t, a)
		h.reap(t)
		checkLost(t, a)
	}
	// Other failures are errors, not a silent change of method.
	pidfd.OpenFunc = func(int, int) (int, error) { return -1, unix.EBADF }
	if _, err := Open(os.Getpid(), Options{}); !errors.Is(err, unix.EBADF) {
		t.Errorf("Open with pidfd_open failing EBADF = %v", err)
	}
}

// Linux 5.3 to 5.9 refuse PIDFD_NONBLOCK: the pidfd is opened without it
// and made non-blocking after, and waiting still works.
func TestPidfdWithoutNonblockFlag(t *testing.T) {
	if autoWatching() != "pidfd" {
		t.Skip("no pidfd here")
	}
	saved := pidfd.OpenFunc
	t.Cleanup(func() { pidfd.OpenFunc = saved })
	pidfd.OpenFunc = func(pid, flags int) (int, error) {
		if flags != 0 {
			return -1, unix.EINVAL
		}
		return saved(pid, flags)
	}
	h := startHelper(t, "block")
	a := adoptPID(t, context.Background(), h.pid, Options{}, "pidfd")
	checkStart(t, a)
	h.reap(t)
	checkLost(t, a)
}

// A thread id is not a process: pidfd_open refuses it.
func TestThreadID(t *testing.T) {
	if autoWatching() != "pidfd" {
		t.Skip("no pidfd here")
	}
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		if tid == os.Getpid() {
			continue
		}
		if _, err := Open(tid, Options{}); !errors.Is(err, pidfd.ErrNotProcess) {
			t.Fatalf("Open(thread %d) = %v, want pidfd.ErrNotProcess", tid, err)
		}
		return
	}
	t.Fatal("the test process has no second thread")
}
