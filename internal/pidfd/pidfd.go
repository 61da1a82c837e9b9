package pidfd

import "errors"

var (
	// ErrNoProcess means no process has the pid (ESRCH), or, for a signal,
	// the process has exited.
	ErrNoProcess = errors.New("no such process")
	// ErrNotProcess means the pid names a thread, not a process.
	ErrNotProcess = errors.New("it is not a process id (a thread id?)")
	// ErrUnsupported means the system offers no pidfds: another OS, Linux
	// before 5.3, or a sandbox that forbids them.
	ErrUnsupported = errors.New("no pidfd on this system")
	// ErrNoDescriptor means no file descriptor was left to open one.
	ErrNoDescriptor = errors.New("no file descriptor left for a pidfd")
	// ErrPermission means the kernel does not let the caller signal the
	// process.
	ErrPermission = errors.New("not permitted to signal the process")
)
