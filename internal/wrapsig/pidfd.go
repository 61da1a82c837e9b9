package wrapsig

import (
	"errors"
	"syscall"

	"github.com/lcwrap/lcwrap/internal/pidfd"
)

// Pidfd opens pidfds (internal/pidfd) and signals through them. Off
// Linux, or without pidfd support, Open refuses with ErrUnsupported.
var Pidfd Opener = pidfdOpener{}

type pidfdOpener struct{}

func (pidfdOpener) Open(pid int) (Handle, error) {
	fd, err := pidfd.Open(pid)
	switch {
	case err == nil:
		return handle{fd}, nil
	case errors.Is(err, pidfd.ErrNoProcess), errors.Is(err, pidfd.ErrNotProcess):
		// No such process, or the pid names a thread now.
		return nil, ErrGone
	case errors.Is(err, pidfd.ErrUnsupported):
		return nil, ErrUnsupported
	}
	return nil, err
}

type handle struct{ fd *pidfd.FD }

func (h handle) Signal(sig syscall.Signal) error {
	err := h.fd.Signal(sig)
	if errors.Is(err, pidfd.ErrNoProcess) {
		return ErrGone
	}
	return err
}

func (h handle) Close() error { return h.fd.Close() }
