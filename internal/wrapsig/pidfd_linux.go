package wrapsig

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Pidfd opens pidfds (pidfd_open(2)) and signals through them
// (pidfd_send_signal(2)).
var Pidfd Opener = pidfdOpener{}

type pidfdOpener struct{}

func (pidfdOpener) Open(pid int) (Handle, error) {
	if pid <= 0 {
		return nil, ErrGone
	}
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case err == nil:
		return pidfd(fd), nil
	case errors.Is(err, unix.ESRCH):
		return nil, ErrGone
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOENT):
		// The pid names a thread now, not a process.
		return nil, ErrGone
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
		// No pidfds before Linux 5.3, or a sandbox forbids them.
		return nil, ErrUnsupported
	}
	return nil, os.NewSyscallError("pidfd_open", err)
}

type pidfd int

func (p pidfd) Signal(sig syscall.Signal) error {
	err := unix.PidfdSendSignal(int(p), sig, nil, 0)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ESRCH):
		return ErrGone
	case errors.Is(err, unix.EPERM):
		return ErrPermission
	}
	return os.NewSyscallError("pidfd_send_signal", err)
}

func (p pidfd) Close() error { return unix.Close(int(p)) }
