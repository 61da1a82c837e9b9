package wrapsig

import (
	"errors"
	"os/exec"
	"sync"
	"syscall"
	"testing"

	"github.com/lcwrap/lcwrap/internal/event"
)

// startSleep starts a process of our own and returns it with its identity.
func startSleep(t *testing.T) (*exec.Cmd, event.Identity) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill() // os.Process signals through its own pidfd
		cmd.Wait()
	})
	id, _, err := event.IdentityOf(event.System, cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, id
}

// recorder is an Opener over the real pidfds that records every signal
// sent through its handles, and runs onOpen right after a handle is
// opened (to simulate what may happen in between).
type recorder struct {
	onOpen func()
	mu     sync.Mutex
	sent   []syscall.Signal
}

func (r *recorder) Open(pid int) (Handle, error) {
	h, err := Pidfd.Open(pid)
	if err != nil {
		return nil, err
	}
	if r.onOpen != nil {
		r.onOpen()
	}
	return &recHandle{h, r}, nil
}

func (r *recorder) signals() []syscall.Signal {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]syscall.Signal(nil), r.sent...)
}

type recHandle struct {
	Handle
	r *recorder
}

func (h *recHandle) Signal(sig syscall.Signal) error {
	h.r.mu.Lock()
	h.r.sent = append(h.r.sent, sig)
	h.r.mu.Unlock()
	return h.Handle.Signal(sig)
}

// stillRunning fails unless cmd's process is alive and the same one.
func stillRunning(t *testing.T, cmd *exec.Cmd, id event.Identity) {
	t.Helper()
	if v := event.CheckIdentity(event.System, id); v.Status != event.Alive {
		t.Fatalf("the process at pid %d was affected: %s", id.PID, v.Reason)
	}
	if cmd.ProcessState != nil {
		t.Fatalf("the process exited: %v", cmd.ProcessState)
	}
}

// A verified process gets the signal.
func TestSignalVerified(t *testing.T) {
	cmd, id := startSleep(t)
	rec := &recorder{}
	tg, err := Open(rec, event.System, id)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if err := tg.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("the process ended with %v, want SIGTERM", cmd.ProcessState)
	}
	if got := rec.signals(); len(got) != 2 || got[0] != 0 || got[1] != syscall.SIGTERM {
		t.Fatalf("signals sent: %v, want the probe then SIGTERM", got)
	}
}

// The pid was recycled between the caller's check and the opening of the
// handle (simulated through the table seam: same pid, another start
// time): nothing is sent, and the real process at that pid is untouched.
func TestRecycledAfterCheckNeverSignalled(t *testing.T) {
	cmd, id := startSleep(t)
	table := &event.FakeProcTable{Fallback: event.System}
	if v := event.CheckIdentity(table, id); v.Status != event.Alive {
		t.Fatalf("before the recycle: %+v", v)
	}
	rec := &recorder{onOpen: func() {
		table.Set(id.PID, event.ProcInfo{StartTime: id.StartTime + 1, State: 'S'})
	}}
	_, err := Open(rec, table, id)
	if !errors.Is(err, ErrGone) {
		t.Fatalf("Open = %v, want ErrGone", err)
	}
	if got := rec.signals(); len(got) != 0 {
		t.Fatalf("signals sent to a recycled pid: %v", got)
	}
	stillRunning(t, cmd, id)
}

// A recorded identity that no longer matches (another start time), or
// that cannot be checked from here (another host), is never signalled.
func TestMismatchNeverSignalled(t *testing.T) {
	cmd, id := startSleep(t)
	reused := id
	reused.StartTime++
	far := id
	far.Host = "elsewhere.example"
	for _, c := range []struct {
		id   event.Identity
		want error
	}{{reused, ErrGone}, {far, ErrUnverified}} {
		rec := &recorder{}
		if _, err := Open(rec, event.System, c.id); !errors.Is(err, c.want) {
			t.Fatalf("Open(%+v) = %v, want %v", c.id, err, c.want)
		}
		if got := rec.signals(); len(got) != 0 {
			t.Fatalf("signals sent: %v", got)
		}
	}
	stillRunning(t, cmd, id)
}

// Once the process has died, a signal through its handle fails: it can
// never reach a process that gets the pid later.
func TestGoneAfterOpen(t *testing.T) {
	cmd, id := startSleep(t)
	tg, err := Open(Pidfd, event.System, id)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	cmd.Process.Kill()
	cmd.Wait()
	if err := tg.Signal(syscall.SIGTERM); !errors.Is(err, ErrGone) {
		t.Fatalf("Signal after death = %v, want ErrGone", err)
	}
	if _, err := Open(Pidfd, event.System, id); !errors.Is(err, ErrGone) {
		t.Fatalf("Open of a reaped pid = %v, want ErrGone", err)
	}
}
