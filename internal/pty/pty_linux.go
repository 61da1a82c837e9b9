package pty

import (
	"io"
	"os"
	"runtime"
	"sync"
	"unsafe"

	cpty "github.com/creack/pty"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// PTY is a pseudo-terminal for the child (Config.PTY) and what lcwrap
// does to its own terminal while the child runs.
//
// The child gets the pty's slave as its stdin, stdout and stderr, in a
// session of its own with the slave as its controlling terminal (each
// attempt of a restarting Run gets the same pty). lcwrap copies its stdin
// to the master and the master's output to its stdout.
// When lcwrap's stdin is a terminal, that terminal is raw while the child
// runs, so every key (^C, ^Z, ^D included) reaches the child's terminal
// as a byte, and the child's terminal turns it into a signal or an end of
// file as it is configured to; Restore puts the settings back. When stdin
// is not a terminal (a pipe, a file, /dev/null), its bytes are copied as
// they are and its end becomes the terminal's end-of-file character
// (VEOF, ^D), as if typed. The child's window size is the outer
// terminal's (stdin's, else stdout's) and follows it on SIGWINCH.
type PTY struct {
	master *os.File // non-blocking, in the runtime's poller (deadlines work)
	slave  *os.File // lcwrap's copy, closed once the child has started
	name   string   // the slave's path, to open it again for another attempt
	in     *os.File // lcwrap's stdin, copied to the master (held: it owns inFD)
	inFD   int      // its descriptor (-1: none)
	inTTY  bool     // in is a terminal: raw while the child runs
	sizeFD int      // the outer terminal whose size the child's follows (-1: none)

	mu    sync.Mutex
	saved *term.State // in's settings while it is raw

	stopR, stopW *os.File // the input copy's stop pipe (one per attempt)
}

// Open opens a pseudo-terminal for the child. in is lcwrap's stdin and
// out its stdout (either may be nil). It fails when no pseudo-terminal can
// be opened; nothing has been changed then.
func Open(in, out *os.File) (*PTY, error) {
	m, slave, err := cpty.Open()
	if err != nil {
		return nil, err
	}
	// pty.Open's master is in blocking mode; a non-blocking copy of it
	// joins the runtime's poller, so that reads can be given a deadline
	// and a Close interrupts them.
	fd, err := unix.FcntlInt(m.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	m.Close()
	if err == nil {
		err = unix.SetNonblock(fd, true)
	}
	if err != nil {
		slave.Close()
		return nil, err
	}
	p := &PTY{master: os.NewFile(uintptr(fd), "/dev/ptmx"), slave: slave, name: slave.Name(), in: in, inFD: fdOf(in), sizeFD: -1}
	p.inTTY = p.inFD >= 0 && term.IsTerminal(p.inFD)
	switch outFD := fdOf(out); {
	case p.inTTY:
		p.sizeFD = p.inFD
	case outFD >= 0 && term.IsTerminal(outFD):
		p.sizeFD = outFD
	}
	return p, nil
}

// fdOf is f's descriptor (-1 for nil), taken without changing its mode:
// Fd would put it in blocking mode, for everyone who shares the file.
// It is valid while f is open (lcwrap's stdin and stdout always are).
func fdOf(f *os.File) int {
	if f == nil {
		return -1
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	rc.Control(func(d uintptr) { fd = int(d) })
	return fd
}

func isTerminal(f *os.File) bool {
	fd := fdOf(f)
	return fd >= 0 && term.IsTerminal(fd)
}

// Close puts lcwrap's terminal back as it was before Run made it raw and
// closes the pty. Run restores the terminal itself when the child ends;
// Close, called once Run has returned or deferred on its goroutine, is
// the last line of defence (a panic). Closing twice is harmless.
func (p *PTY) Close() error {
	p.Restore()
	p.StopInputCopy()
	if p.slave != nil {
		p.slave.Close()
		p.slave = nil
	}
	return p.master.Close()
}

// Restore puts lcwrap's terminal back as it was before makeRaw.
func (p *PTY) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.saved == nil {
		return
	}
	// A background lcwrap (the job was put there) restores too: SIGTTOU
	// is blocked for the call.
	WithoutTTOU(func() error { return term.Restore(p.inFD, p.saved) })
	p.saved = nil
}

// MakeRaw makes lcwrap's stdin raw, if it is a terminal and not raw yet.
// It reports whether the terminal is raw now.
func (p *PTY) MakeRaw() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inTTY && p.saved == nil {
		p.saved, _ = term.MakeRaw(p.inFD)
	}
	return p.saved != nil
}

// Resize gives the child's terminal the outer terminal's size; the
// kernel tells the child's foreground group with SIGWINCH.
func (p *PTY) Resize() {
	if p.sizeFD < 0 {
		return
	}
	ws, err := unix.IoctlGetWinsize(p.sizeFD, unix.TIOCGWINSZ)
	if err != nil {
		return
	}
	p.control(func(fd int) error { return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, ws) })
}

// control runs f on the master's descriptor (without taking it out of
// non-blocking mode, which Fd would do).
func (p *PTY) control(f func(fd int) error) error {
	rc, err := p.master.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// copyInput copies stdin to the master until stdin ends, a write to the
// master fails, or stopInputCopy (closing stopW) makes stop readable. It polls
// before each read, so that it never sits in a read of lcwrap's stdin
// that nothing could interrupt, and it leaves stdin's file flags alone
// (they are shared with the shell).
func (p *PTY) copyInput(stop *os.File) {
	defer stop.Close()
	if p.inFD < 0 {
		p.sendEOF(true)
		return
	}
	in := p.inFD
	fds := []unix.PollFd{{Fd: int32(in), Events: unix.POLLIN}, {Fd: int32(stop.Fd()), Events: unix.POLLIN}}
	buf := make([]byte, 32<<10)
	lineStart := true
	for {
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents == 0 {
			continue
		}
		n, err := unix.Read(in, buf)
		if n > 0 {
			if _, err := p.master.Write(buf[:n]); err != nil {
				return
			}
			lineStart = buf[n-1] == '\n'
		}
		switch {
		case err == unix.EINTR || err == unix.EAGAIN:
		case n > 0:
		case err == nil && !p.inTTY: // the end of a pipe or file
			p.sendEOF(lineStart)
			return
		default: // a terminal that hung up, or stdin failed
			return
		}
	}
}

// sendEOF types the child terminal's end-of-file character: once at the
// start of a line, twice after an unfinished one (the first only ends
// the line, as on a real terminal).
func (p *PTY) sendEOF(lineStart bool) {
	var eof byte
	err := p.control(func(fd int) error {
		t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err == nil {
			eof = t.Cc[unix.VEOF]
		}
		return err
	})
	if err != nil {
		return
	}
	keys := []byte{eof, eof}
	if lineStart {
		keys = keys[:1]
	}
	p.master.Write(keys)
}

// Master is the master: the child's output is read from it.
func (p *PTY) Master() *os.File { return p.master }

// Prepare readies the pty for a child and returns its stdin, stdout and
// stderr: the slave (opened again for a later attempt).
func (p *PTY) Prepare() ([]*os.File, error) {
	if p.slave == nil {
		f, err := os.OpenFile(p.name, os.O_RDWR|unix.O_NOCTTY, 0)
		if err != nil {
			return nil, err
		}
		p.slave = f
	}
	var err error
	if p.stopR, p.stopW, err = os.Pipe(); err != nil {
		return nil, err
	}
	return []*os.File{p.slave, p.slave, p.slave}, nil
}

// Started drops lcwrap's copy of the slave (once the child, and whatever
// it started, has closed its own, the master reads EIO: the end of the
// output) and starts copying lcwrap's stdin to the master.
func (p *PTY) Started() {
	p.slave.Close()
	p.slave = nil
	go p.copyInput(p.stopR)
	p.stopR = nil
}

// StopInputCopy stops copying stdin to the master. It does not wait: in
// the rare case that something else took the byte the copy was told was
// there, its read of stdin blocks until the next one, which it then
// writes to the child's terminal (or, after Close, cannot write).
func (p *PTY) StopInputCopy() {
	for _, f := range []**os.File{&p.stopR, &p.stopW} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
}

// WithoutTTOU runs f with SIGTTOU blocked on its thread: a process in the
// background may then change its terminal's settings instead of being
// stopped (a blocked SIGTTOU counts as ignored for the terminal, and
// unlike an ignored disposition it is not inherited across exec).
func WithoutTTOU(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set, old unix.Sigset_t
	addSignal(&set, unix.SIGTTOU)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old); err != nil {
		return err
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	return f()
}

// WritesToTerminal reports whether w is a terminal (where a raw mode
// needs "\r\n" for a new line).
func WritesToTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

func addSignal(set *unix.Sigset_t, sig unix.Signal) {
	bits := uint(unsafe.Sizeof(set.Val[0])) * 8
	n := uint(sig) - 1
	set.Val[n/bits] |= 1 << (n % bits)
}
