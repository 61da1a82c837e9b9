package supervise

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/lcwrap/lcwrap/internal/pty"
)

// inheritedIgnored returns the signals whose disposition is SIG_IGN right
// now (from /proc/self/status). Called before Subscribe installs handlers,
// these are the ones lcwrap inherited as ignored and the Go runtime left
// alone: HUP, INT, the job-control signals and 32–34.
func inheritedIgnored() map[syscall.Signal]bool {
	out := map[syscall.Signal]bool{}
	fd, err := unix.Open("/proc/self/status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return out
	}
	defer unix.Close(fd)
	var buf [4096]byte
	n, _ := unix.Read(fd, buf[:])
	_, rest, ok := bytes.Cut(buf[:max(n, 0)], []byte("\nSigIgn:"))
	if !ok {
		return out
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	mask, err := strconv.ParseUint(string(bytes.TrimSpace(line)), 16, 64)
	if err != nil {
		return out
	}
	for n := 1; n <= 64; n++ {
		if mask&(1<<(n-1)) != 0 {
			out[syscall.Signal(n)] = true
		}
	}
	return out
}

// becomeSubreaper makes orphaned descendants lcwrap's children, so that it
// can reap them.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// startProcess starts the child with an empty signal mask. Go's fork gives
// the child the mask of the thread that forks (the runtime saves the live
// mask before forking and restores it in the child), and every Go thread
// has the mask lcwrap inherited, less the signals the runtime needs. When
// that is not empty, emptying it on a locked thread for the duration of
// the fork is enough: no trampoline. (Locking costs a thread hand-off, so
// it is done only then.)
//
// It uses syscall.ForkExec rather than os.StartProcess, which forks an
// extra process once to probe for pidfd support: the clone that starts
// the child makes its pidfd (SysProcAttr.PidFD; -1 where the kernel has
// none). Where the clone refuses the request for one (a sandbox, another
// Linux implementation), the child is started again without it: a failed
// start ran nothing.
func startProcess(path string, argv []string, attr *syscall.ProcAttr) (*process, error) {
	var empty, old unix.Sigset_t
	if unix.PthreadSigmask(unix.SIG_BLOCK, nil, &old) == nil && old != empty {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := unix.PthreadSigmask(unix.SIG_SETMASK, &empty, &old); err == nil {
			defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
		}
	}
	fd := -1
	withFD := *attr
	var sys syscall.SysProcAttr
	if attr.Sys != nil {
		sys = *attr.Sys
	}
	sys.PidFD = &fd
	withFD.Sys = &sys
	pid, err := syscall.ForkExec(path, argv, &withFD)
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EPERM) {
		fd = -1
		pid, err = syscall.ForkExec(path, argv, attr)
	}
	if err != nil {
		return nil, &os.PathError{Op: "fork/exec", Path: path, Err: err}
	}
	return &process{pid: pid, fd: fd}, nil
}

// signal sends sig to the child through its pidfd (by pid without one).
func (p *process) signal(sig syscall.Signal) error {
	if p.fd >= 0 {
		err := unix.PidfdSendSignal(p.fd, sig, nil, 0)
		if !errors.Is(err, unix.ENOSYS) {
			return err
		}
		// A sandbox that gave the handle but refuses the call: by pid
		// from now on, as without a handle.
		p.release()
	}
	return syscall.Kill(p.pid, sig)
}

// release closes the pidfd.
func (p *process) release() {
	if p.fd >= 0 {
		unix.Close(p.fd)
		p.fd = -1
	}
}

// terminal is lcwrap's controlling terminal.
type terminal struct {
	fd  int
	own int // lcwrap's process group
}

// openTerminal returns the controlling terminal, or nil when lcwrap has
// none (no job control then).
func openTerminal() *terminal {
	fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return &terminal{fd: fd, own: unix.Getpgrp()}
}

// foreground returns the terminal's foreground process group (-1 when it
// cannot be read).
func (t *terminal) foreground() int {
	pg, err := unix.IoctlGetInt(t.fd, unix.TIOCGPGRP)
	if err != nil {
		return -1
	}
	return pg
}

// setForeground makes pgrp the foreground group. lcwrap may be in the
// background when it does so, which would stop it with SIGTTOU: the signal
// is blocked for the call (see pty.WithoutTTOU).
func (t *terminal) setForeground(pgrp int) error {
	return pty.WithoutTTOU(func() error { return unix.IoctlSetPointerInt(t.fd, unix.TIOCSPGRP, pgrp) })
}

func (t *terminal) close() { unix.Close(t.fd) }
