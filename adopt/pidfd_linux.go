package adopt

import (
	"context"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lcwrap/lcwrap/internal/procid"
)

// pidfd is a non-blocking pidfd registered with Go's poller: it turns
// readable when the process it names exits.
type pidfd struct {
	f  *os.File
	rc syscall.RawConn
}

// pidfdOpen is the system call (a seam for tests of the fallback).
var pidfdOpen = unix.PidfdOpen

// openPidfd opens a pidfd for pid. Outcomes: the pidfd; errNoPidfd when
// the kernel offers none (ENOSYS), a sandbox forbids it (EPERM) or no
// descriptor is left (EMFILE, ENFILE) — polling still works then;
// procid.ErrNoProcess; ErrNotProcess for a thread id; another system error.
func openPidfd(pid int) (*pidfd, error) {
	fd, err := pidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if errors.Is(err, unix.EINVAL) {
		// Linux 5.3 to 5.9 know pidfds but not the flag: set it after.
		if fd, err = pidfdOpen(pid, 0); err == nil {
			if err = unix.SetNonblock(fd, true); err != nil {
				unix.Close(fd)
				return nil, os.NewSyscallError("fcntl", err)
			}
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, unix.ESRCH):
		return nil, procid.ErrNoProcess
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOENT):
		// A thread id (EINVAL on older kernels, ENOENT on newer ones).
		return nil, ErrNotProcess
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM), errors.Is(err, unix.EMFILE), errors.Is(err, unix.ENFILE):
		return nil, errNoPidfd
	default:
		return nil, os.NewSyscallError("pidfd_open", err)
	}
	// The descriptor is non-blocking, so os.NewFile registers it with the
	// poller; Fd() must never be called on it (that would make it blocking).
	f := os.NewFile(uintptr(fd), "pidfd:"+strconv.Itoa(pid))
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &pidfd{f: f, rc: rc}, nil
}

// exited reports, without blocking, whether the process has exited.
func (p *pidfd) exited() (bool, error) {
	var exited bool
	var perr error
	if err := p.rc.Control(func(fd uintptr) { exited, perr = readable(fd) }); err != nil {
		return false, err
	}
	return exited, perr
}

// wait parks the goroutine in the poller until the process exits, or
// returns context.Cause(ctx) once ctx ends. No busy loop: the callback
// runs once per readiness notification.
func (p *pidfd) wait(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { p.f.SetReadDeadline(time.Unix(0, 1)) })
	defer stop()
	var perr error
	err := p.rc.Read(func(fd uintptr) bool {
		var exited bool
		exited, perr = readable(fd)
		return exited || perr != nil
	})
	if err == nil {
		err = perr
	}
	if err != nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

func (p *pidfd) close() error { return p.f.Close() }

// readable polls fd with a zero timeout.
func readable(fd uintptr) (bool, error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return false, os.NewSyscallError("poll", err)
		}
		return n > 0 && fds[0].Revents&unix.POLLIN != 0, nil
	}
}
