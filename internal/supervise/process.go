package supervise

import (
	"syscall"

	"github.com/lcwrap/lcwrap/internal/pidfd"
)

// process is the started main child. Signals go through its pidfd, which
// keeps naming this process after it is reaped (they fail then), so one
// can never reach a process that reused the pid. Without pidfds (another
// system, an old kernel) they go by pid, which is safe until the child is
// reaped, and only the reaper's result, read on Run's goroutine, tells
// that.
type process struct {
	pid int
	fd  *pidfd.FD // nil without pidfd support
}

// newProcess takes a handle on a child just started (it cannot have been
// reaped yet).
func newProcess(pid int) *process {
	fd, err := pidfd.Open(pid)
	if err != nil {
		fd = nil
	}
	return &process{pid: pid, fd: fd}
}

func (p *process) signal(sig syscall.Signal) error {
	if p.fd == nil {
		return syscall.Kill(p.pid, sig)
	}
	return p.fd.Signal(sig)
}

func (p *process) release() {
	if p.fd != nil {
		p.fd.Close()
	}
}
