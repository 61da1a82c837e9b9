//go:build !linux

package supervise

import (
	"fmt"
	"io"
	"os"
)

// PTY is a pseudo-terminal for the child; only Linux has one here.
type PTY struct{}

// OpenPTY fails with ErrPTY: --pty is only available on Linux.
func OpenPTY(in, out *os.File) (*PTY, error) {
	return nil, fmt.Errorf("%w: only available on Linux", ErrPTY)
}

// Close does nothing: no terminal was changed.
func (p *PTY) Close() error { return nil }

func (p *PTY) restore()                     {}
func (p *PTY) makeRaw() bool                { return false }
func (p *PTY) resize()                      {}
func (p *PTY) startInput() error            { return nil }
func (p *PTY) stopInputCopy()               {}
func (p *PTY) slaveFile() (*os.File, error) { return nil, ErrPTY }
func (p *PTY) prepare() ([]*os.File, error) { return nil, ErrPTY }
func (p *PTY) started()                     {}
func (p *PTY) masterFile() *os.File         { return nil }
func writesToTerminal(w io.Writer) bool     { return false }
