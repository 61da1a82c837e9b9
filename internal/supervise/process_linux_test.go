//go:build linux

package supervise

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
)

// A signal for the child lcwrap started reaches that child only: once it
// is reaped, its pid may name another process (here one started in its
// place and given its pid, as a wrap-around of the pid space would), and
// the signal reaches nothing. The pid itself would reach the other one:
// that is what the handle is for.
func TestSignalReachesOnlyTheStartedChild(t *testing.T) {
	p, err := startProcess("/bin/true", []string{"true"}, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{Setpgid: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.release()
	if p.fd < 0 {
		t.Skip("this kernel gives no pidfd from clone (Linux 5.2 or later does): signals go by pid")
	}
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(p.pid, &ws, 0, nil); !errors.Is(err, syscall.EINTR) {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	p.pid = other.Process.Pid // the started child's pid, reused
	if err := syscall.Kill(p.pid, 0); err != nil {
		t.Fatalf("the control: the pid does not reach the other process: %v", err)
	}
	if err := p.signal(syscall.SIGKILL); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("a signal for a reaped child: %v, want ESRCH", err)
	}
	if err := syscall.Kill(other.Process.Pid, 0); err != nil {
		t.Fatalf("the other process was hit: %v", err)
	}
	var st syscall.WaitStatus
	if got, _ := syscall.Wait4(other.Process.Pid, &st, syscall.WNOHANG, nil); got != 0 {
		t.Fatalf("the other process ended: %v", st)
	}
}

// Before it is reaped, the child gets the signal through the handle.
func TestSignalReachesTheLiveChild(t *testing.T) {
	p, err := startProcess("/bin/sleep", []string{"sleep", "60"}, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{Setpgid: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.release()
	if err := p.signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(p.pid, &ws, 0, nil); !errors.Is(err, syscall.EINTR) {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("status %v", ws)
	}
}
