//go:build !linux

package pty

import (
	"errors"
	"io"
	"os"
)

// PTY is a pseudo-terminal for the child; only Linux has one here.
type PTY struct{}

// Open fails: --pty is only available on Linux.
func Open(in, out *os.File) (*PTY, error) { return nil, errors.New("only available on Linux") }

// Close does nothing: no terminal was changed.
func (p *PTY) Close() error { return nil }

// Restore does nothing.
func (p *PTY) Restore() {}

// MakeRaw does nothing.
func (p *PTY) MakeRaw() bool { return false }

// Resize does nothing.
func (p *PTY) Resize() {}

// StopInputCopy does nothing.
func (p *PTY) StopInputCopy() {}

// Prepare fails.
func (p *PTY) Prepare() ([]*os.File, error) { return nil, errors.New("only available on Linux") }

// Started does nothing.
func (p *PTY) Started() {}

// Master returns nil.
func (p *PTY) Master() *os.File { return nil }

// WritesToTerminal reports false.
func WritesToTerminal(w io.Writer) bool { return false }

// WithoutTTOU runs f.
func WithoutTTOU(f func() error) error { return f() }
