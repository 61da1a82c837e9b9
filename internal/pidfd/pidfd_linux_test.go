package pidfd

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// A handle names its process for its whole life: signals reach it while
// it lives, Wait returns once it has exited, and after it is reaped a
// signal fails rather than reach whatever gets the pid next.
func TestHandleOnAChild(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	fd, err := Open(cmd.Process.Pid)
	if errors.Is(err, ErrUnsupported) {
		t.Skip("no pidfds here")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	if fd.PID() != cmd.Process.Pid {
		t.Fatalf("PID %d", fd.PID())
	}
	if exited, err := fd.Exited(); exited || err != nil {
		t.Fatalf("Exited = %v, %v for a live child", exited, err)
	}
	if err := fd.Signal(0); err != nil {
		t.Fatalf("Signal(0): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	if err := fd.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait on a live child = %v, want the context's end", err)
	}
	cancel()
	if err := fd.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fd.Wait(ctx); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if exited, err := fd.Exited(); !exited || err != nil {
		t.Fatalf("Exited = %v, %v after the exit", exited, err)
	}
	cmd.Wait()
	if err := fd.Signal(syscall.SIGTERM); !errors.Is(err, ErrNoProcess) {
		t.Fatalf("Signal after the reap = %v, want ErrNoProcess", err)
	}
}

func TestOpenRefusals(t *testing.T) {
	if _, err := Open(0); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Open(0) = %v", err)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(cmd.Process.Pid); !errors.Is(err, ErrNoProcess) && !errors.Is(err, ErrUnsupported) {
		t.Errorf("Open(reaped pid) = %v", err) // (a recycled pid would open: vanishingly rare here)
	}
	saved := OpenFunc
	t.Cleanup(func() { OpenFunc = saved })
	for errno, want := range map[syscall.Errno]error{
		syscall.ENOSYS: ErrUnsupported, syscall.EPERM: ErrUnsupported,
		syscall.EMFILE: ErrNoDescriptor, syscall.ENFILE: ErrNoDescriptor, syscall.ENOENT: ErrNotProcess,
	} {
		OpenFunc = func(int, int) (int, error) { return -1, errno }
		if _, err := Open(os.Getpid()); !errors.Is(err, want) {
			t.Errorf("pidfd_open failing %v: %v, want %v", errno, err, want)
		}
	}
}
