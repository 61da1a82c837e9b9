package supervise

import (
	"fmt"
	"os"

	"github.com/lcwrap/lcwrap/internal/pty"
)

// PTY is a pseudo-terminal for the child (Config.PTY) and what lcwrap
// does to its own terminal while the child runs (internal/pty).
type PTY = pty.PTY

// OpenPTY opens a pseudo-terminal for the child. in is lcwrap's stdin and
// out its stdout (either may be nil). It fails (ErrPTY) when no
// pseudo-terminal can be opened; nothing has been changed then.
func OpenPTY(in, out *os.File) (*PTY, error) {
	p, err := pty.Open(in, out)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPTY, err)
	}
	return p, nil
}

// What Run does with Config.PTY: the glue between the supervisor and the
// PTY.

// ptyStdio readies the child's terminal: the child's stdin, stdout and
// stderr are its slave, the Stream that carries the child's output to
// Stdout reads the master, and the window size is the outer terminal's.
// lcwrap's own terminal goes raw before the child exists, so that every
// key typed once the child runs reaches the child's terminal.
func (s *supervisor) ptyStdio() ([]*os.File, error) {
	p := s.cfg.PTY
	stdio, err := p.Prepare()
	if err != nil {
		return nil, err
	}
	if st := streamOf(s.cfg.Streams, s.cfg.Stdout); st != nil {
		st.Follow(p.Master())
	}
	p.Resize()
	s.rawTerminal(true)
	return stdio, nil
}

// ptyEnded: the child has ended (or never started). lcwrap's terminal is
// restored, before the last events are written, and stdin is no longer
// copied.
func (s *supervisor) ptyEnded() {
	if s.cfg.PTY == nil {
		return
	}
	s.rawTerminal(false)
	s.cfg.PTY.StopInputCopy()
}

// rawTerminal makes lcwrap's terminal raw (on) or restores it, and tells
// the Streams that write to a terminal, so that lcwrap's own lines still
// start at the left margin.
func (s *supervisor) rawTerminal(on bool) {
	p := s.cfg.PTY
	if p == nil {
		return
	}
	raw := false
	if on {
		raw = p.MakeRaw()
	} else {
		p.Restore()
	}
	for _, st := range s.cfg.Streams {
		if pty.WritesToTerminal(st.Out()) {
			st.RawTerminal(raw)
		}
	}
}

// ptyLeftoverNote completes the leftovers message with a PTY: lcwrap did
// not signal the processes left behind, but the terminal they share with
// the command hangs up, as any terminal does, when its session leader
// (the command) has ended and when lcwrap closes it.
func (s *supervisor) ptyLeftoverNote() string {
	if s.cfg.PTY == nil {
		return ""
	}
	return " by lcwrap; their terminal (the pty) hangs up, which sends them SIGHUP, as the command's session has ended"
}
