package wrapsig

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/lcwrap/lcwrap/internal/event"
)

var (
	// ErrUnsupported means the system offers no pidfd to signal through.
	ErrUnsupported = errors.New("no pidfd on this system, and a signal by pid alone could hit a recycled pid")
	// ErrGone means the process is not the one recorded: no such pid, a
	// different start time, an exited (zombie) process, a reboot.
	ErrGone = errors.New("the process is gone")
	// ErrUnverified means the identity cannot be checked from here (the
	// process table says unknown).
	ErrUnverified = errors.New("the process cannot be verified")
)

// Opener opens handles through which signals reach exactly one process.
// Pidfd is the real one.
type Opener interface {
	// Open returns a handle on the process that has pid now. Outcomes:
	// the Handle; an error wrapping ErrGone (no such process),
	// ErrUnsupported, or another system error.
	Open(pid int) (Handle, error)
}

// Handle names one process for as long as it is open.
type Handle interface {
	// Signal sends sig (0 only checks permission). Outcomes: nil; an
	// error wrapping ErrGone (the process has exited) or pidfd.ErrPermission;
	// another system error.
	Signal(sig syscall.Signal) error
	Close() error
}

// Target is a handle on a process whose identity was verified after the
// handle was opened.
type Target struct {
	h  Handle
	ID event.Identity
}

// Open opens a handle on id.PID with o, then checks id in t, then probes
// with signal 0 that the caller may signal it.
//
// Outcomes: the Target and nil; errors wrapping ErrGone (the pid is free,
// or names another process, or an exited one), ErrUnverified (the table
// cannot tell), pidfd.ErrPermission, ErrUnsupported, or a system error. On any
// error the handle is closed and no signal was sent.
func Open(o Opener, t event.ProcTable, id event.Identity) (*Target, error) {
	h, err := o.Open(id.PID)
	if err != nil {
		return nil, fmt.Errorf("pid %d: %w", id.PID, err)
	}
	fail := func(err error) (*Target, error) {
		h.Close()
		return nil, fmt.Errorf("pid %d: %w", id.PID, err)
	}
	switch v := event.CheckIdentity(t, id); v.Status {
	case event.Gone:
		return fail(fmt.Errorf("%w: %s", ErrGone, v.Reason))
	case event.ProcUnknown:
		return fail(fmt.Errorf("%w: %s", ErrUnverified, v.Reason))
	}
	if err := h.Signal(0); err != nil {
		return fail(err)
	}
	return &Target{h: h, ID: id}, nil
}

// Signal sends sig through the handle. Outcomes: those of Handle.Signal.
func (t *Target) Signal(sig syscall.Signal) error {
	if err := t.h.Signal(sig); err != nil {
		return fmt.Errorf("pid %d: %w", t.ID.PID, err)
	}
	return nil
}

// Close releases the handle.
func (t *Target) Close() error { return t.h.Close() }
