//go:build !linux

package pidfd

import (
	"context"
	"syscall"
)

// FD does not exist here.
type FD struct{}

// Open answers ErrUnsupported: there are no pidfds off Linux.
func Open(int) (*FD, error) { return nil, ErrUnsupported }

// PID returns 0.
func (*FD) PID() int { return 0 }

// Signal answers ErrUnsupported.
func (*FD) Signal(syscall.Signal) error { return ErrUnsupported }

// Exited answers ErrUnsupported.
func (*FD) Exited() (bool, error) { return false, ErrUnsupported }

// Wait answers ErrUnsupported.
func (*FD) Wait(context.Context) error { return ErrUnsupported }

// Close does nothing.
func (*FD) Close() error { return nil }
