// Package pidfd holds a handle on one process: a pidfd (pidfd_open(2))
// that keeps naming the process it was opened for, after it exits and
// after its pid is reused. Through it lcwrap signals a process
// (pidfd_send_signal(2)) and waits for its exit (the pidfd turns readable)
// without ever reaching a process that reused the pid. It is the one place
// lcwrap opens a pidfd on a process it did not start: adopt waits on one,
// and wrapsig delivers lcwrap cancel's signal through one. (supervise
// gets its child's pidfd from the clone that starts it.)
//
// # What it promises
//
// Open returns a non-blocking handle registered with Go's poller, so Wait
// parks the goroutine without a thread or a busy loop and ends when the
// context does. Every failure of the system calls is mapped to a sentinel
// (ErrNoProcess, ErrNotProcess, ErrUnsupported, ErrNoDescriptor,
// ErrPermission) or returned as an *os.SyscallError.
//
// # What it refuses to claim
//
// A handle says which process it names, not who that process is: callers
// check its identity (internal/procid) after opening it. An exit seen
// through the handle says the process ended, not how: its status belongs
// to whoever reaps it. Off Linux, and where the kernel has no pidfds, Open
// answers ErrUnsupported and nothing falls back to a pid here. See
// docs/design.md.
package pidfd
