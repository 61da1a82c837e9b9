package pidfd

import (
	"context"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// FD is an open pidfd.
type FD struct {
	pid int
	f   *os.File
	rc  syscall.RawConn
}

// OpenFunc is the system call Open makes (a seam for tests of what
// callers do without a pidfd).
var OpenFunc = unix.PidfdOpen

// Open opens a pidfd for pid. Outcomes: the FD; ErrNoProcess; ErrNotProcess
// for a thread id; ErrUnsupported (ENOSYS, EPERM); ErrNoDescriptor
// (EMFILE, ENFILE); another *os.SyscallError.
func Open(pid int) (*FD, error) {
	if pid <= 0 {
		return nil, ErrNoProcess
	}
	fd, err := OpenFunc(pid, unix.PIDFD_NONBLOCK)
	if errors.Is(err, unix.EINVAL) {
		// Linux 5.3 to 5.9 know pidfds but not the flag: set it after.
		if fd, err = OpenFunc(pid, 0); err == nil {
			if err = unix.SetNonblock(fd, true); err != nil {
				unix.Close(fd)
				return nil, os.NewSyscallError("fcntl", err)
			}
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, unix.ESRCH):
		return nil, ErrNoProcess
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOENT):
		// A thread id (EINVAL on older kernels, ENOENT on newer ones).
		return nil, ErrNotProcess
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
		return nil, ErrUnsupported
	case errors.Is(err, unix.EMFILE), errors.Is(err, unix.ENFILE):
		return nil, ErrNoDescriptor
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
	return &FD{pid: pid, f: f, rc: rc}, nil
}

// PID returns the pid the handle was opened for.
func (p *FD) PID() int { return p.pid }

// Signal sends sig to the process (0 only checks permission). Outcomes:
// nil; ErrNoProcess (it has exited); ErrPermission; another
// *os.SyscallError.
func (p *FD) Signal(sig syscall.Signal) error {
	var err error
	if cerr := p.rc.Control(func(fd uintptr) { err = unix.PidfdSendSignal(int(fd), sig, nil, 0) }); cerr != nil {
		return cerr
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ESRCH):
		return ErrNoProcess
	case errors.Is(err, unix.EPERM):
		return ErrPermission
	}
	return os.NewSyscallError("pidfd_send_signal", err)
}

// Exited reports, without blocking, whether the process has exited.
func (p *FD) Exited() (bool, error) {
	var exited bool
	var perr error
	if err := p.rc.Control(func(fd uintptr) { exited, perr = readable(fd) }); err != nil {
		return false, err
	}
	return exited, perr
}

// Wait parks the goroutine in the poller until the process exits, or
// returns context.Cause(ctx) once ctx ends. No busy loop: the callback
// runs once per readiness notification.
func (p *FD) Wait(ctx context.Context) error {
	p.f.SetReadDeadline(time.Time{}) // an earlier Wait's end may have set one
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

// Close releases the handle (never the process).
func (p *FD) Close() error { return p.f.Close() }

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
