package supervise

// process is the started main child. On Linux, signals go through its
// pidfd, made by the clone that started it (syscall.SysProcAttr.PidFD, so
// there is no moment when the pid is known and the handle is not), which
// keeps naming this process after it is reaped (they fail then), so one
// can never reach a process that reused the pid. Without pidfds (another
// system, a kernel before 5.2, a sandbox that refuses them) they go by
// pid, which is safe until the child is reaped, and only the reaper's
// result, read on Run's goroutine, tells that. signal and release are in
// proc_linux.go and proc_other.go.
type process struct {
	pid int
	fd  int // the pidfd; -1 without one
}
