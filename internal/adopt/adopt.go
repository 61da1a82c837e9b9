package adopt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/pidfd"
	"github.com/lcwrap/lcwrap/internal/redact"
)

var (
	// ErrVanished means the process exited while it was being adopted,
	// before its identity could be confirmed: its pid may already name
	// another process.
	ErrVanished = errors.New("it exited while being adopted, before its identity could be confirmed")
	// ErrBadPID means a text is not a process id.
	ErrBadPID = errors.New("not a process id (want a positive decimal number)")
)

// Error is why one pid could not be adopted.
type Error struct {
	PID int
	Err error
}

func (e *Error) Error() string {
	return "pid " + strconv.Itoa(e.PID) + " not adopted: " + e.Err.Error()
}

// Unwrap returns the reason.
func (e *Error) Unwrap() error { return e.Err }

// DefaultPoll is how often the process table is read when there is no
// pidfd to wait on.
const DefaultPoll = 250 * time.Millisecond

// Watch chooses how an exit is detected.
type Watch int

const (
	// WatchAuto waits on a pidfd where the kernel offers one, and polls
	// otherwise.
	WatchAuto Watch = iota
	// WatchPoll always polls the process table.
	WatchPoll
)

// ParseWatch parses "auto" or "poll".
func ParseWatch(s string) (Watch, error) {
	switch s {
	case "auto":
		return WatchAuto, nil
	case "poll":
		return WatchPoll, nil
	}
	return 0, fmt.Errorf("%q: use auto or poll", s)
}

// Options configures Open. Zero values mean the defaults.
type Options struct {
	// Table is the process table (event.System by default).
	Table event.ProcTable
	// Watch chooses pidfd or polling (WatchAuto by default).
	Watch Watch
	// Poll is the polling interval (DefaultPoll by default).
	Poll time.Duration
}

// limits is what the diagnostic after created says.
const limits = "presence only: lcwrap sees whether this process (pid and start time) exists, nothing more; " +
	"its history before adoption, agent state, intent, heartbeat, exit status, terminal cause and cancellation are unknown, " +
	"and lcwrap never signals it"

// Process is an adopted process.
type Process struct {
	id    event.Identity
	comm  string   // the kernel's name for it
	exe   string   // "" when unreadable
	argv  []string // redacted; nil when unreadable
	table event.ProcTable
	poll  time.Duration
	fd    *pidfd.FD // nil when polling
}

// Open adopts pid: it takes a handle on the process (a pidfd where
// available), then reads its identity, executable and command line, then
// confirms that the handle still names the process that was read. It never
// signals the process. Outcomes:
//
//   - a *Process, watched by pidfd or by polling (see Watching); it may
//     have exited already (a zombie), and then Follow ends at once;
//   - *Error wrapping event.ErrNoProcess: no process has that pid;
//   - *Error wrapping event.ErrPermission: its identity cannot be read;
//   - *Error wrapping ErrVanished: it exited during adoption and its pid
//     may name another process now;
//   - *Error wrapping pidfd.ErrNotProcess: the id names a thread;
//   - *Error wrapping a system error from pidfd_open or poll.
func Open(pid int, opts Options) (*Process, error) {
	p, err := open(pid, opts)
	if err != nil {
		return nil, &Error{PID: pid, Err: err}
	}
	return p, nil
}

func open(pid int, opts Options) (*Process, error) {
	if pid <= 0 {
		return nil, event.ErrNoProcess
	}
	p := &Process{table: opts.Table, poll: opts.Poll}
	if p.table == nil {
		p.table = event.System
	}
	if p.poll <= 0 {
		p.poll = DefaultPoll
	}
	if opts.Watch == WatchAuto {
		fd, err := pidfd.Open(pid)
		switch {
		case err == nil:
			p.fd = fd
		case errors.Is(err, pidfd.ErrNoProcess):
			return nil, event.ErrNoProcess
		case errors.Is(err, pidfd.ErrUnsupported), errors.Is(err, pidfd.ErrNoDescriptor):
			// No pidfd here (an old kernel, a sandbox, no descriptor
			// left): polling still sees the exit.
		default:
			return nil, err
		}
	}
	id, info, err := event.IdentityOf(p.table, pid)
	if err == nil {
		p.id, p.comm = id, info.Comm
		if argv, err := event.Cmdline(pid); err == nil && len(argv) > 0 {
			p.argv = redact.Argv(argv)
		}
		p.exe, _ = event.Exe(pid)
		err = p.confirm(info)
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// confirm checks that what was read about the pid belongs to the process
// the handle names. With a pidfd: if the process has not exited, it held
// the pid all along; if it has, only a zombie with the same start time
// still holds it. Without one: the pid must still show the start time that
// was read (a zombie included), so it cannot have changed hands between
// the two reads.
func (p *Process) confirm(read event.ProcInfo) error {
	if p.fd != nil {
		exited, err := p.fd.Exited()
		if err != nil || !exited {
			return err
		}
	}
	now, err := p.table.Stat(read.PID)
	if err != nil || now.StartTime != read.StartTime || (p.fd != nil && !now.Zombie()) {
		return ErrVanished
	}
	return nil
}

// Identity returns the adopted process's identity.
func (p *Process) Identity() event.Identity { return p.id }

// Name returns a short name for the process: the base name of its
// (redacted) command, else the kernel's name for it.
func (p *Process) Name() string {
	if len(p.argv) > 0 && p.argv[0] != "" {
		return filepath.Base(p.argv[0])
	}
	return p.comm
}

// Watching returns how the exit is detected: "pidfd" or "poll".
func (p *Process) Watching() string {
	if p.fd != nil {
		return "pidfd"
	}
	return "poll"
}

// Close releases the handle on the process (never the process itself).
func (p *Process) Close() error {
	if p.fd == nil {
		return nil
	}
	return p.fd.Close()
}

// Record starts the adopted lifecycle on e: a child with the given id
// (generated from Name when empty), lineage marked external with adoptedAt
// now, the adopted-pid-only profile; then its created event and the
// diagnostic stating the limits. Outcomes: the child, for Follow; or an
// error from emit when an event could not be built (nothing more is
// written). Sink failures are the emitter's to report.
func (p *Process) Record(e *emit.Emitter, childID string, lineage event.Lineage) (*emit.Child, error) {
	if childID == "" {
		childID = emit.NewChildID(p.Name())
	}
	lineage.External = true
	lineage.AdoptedAt = event.Timestamp(e.Now())
	c := e.Child(childID, lineage, event.AdoptedPIDOnly())
	if _, err := c.Emit(emit.Spec{Kind: event.KindCreated, State: event.StateCreated, Details: p.details()}); err != nil {
		return nil, err
	}
	if _, err := c.Emit(emit.Spec{Kind: event.KindDiagnostic, Details: LimitsDiagnostic{Limits: limits}}); err != nil {
		return nil, err
	}
	return c, nil
}

func (p *Process) details() event.AdoptedCreated {
	d := event.AdoptedCreated{
		PID:         p.id.PID,
		StartTime:   p.id.StartTime,
		StartClock:  string(p.id.Clock),
		BootID:      p.id.BootID,
		Host:        p.id.Host,
		Executable:  "unknown",
		Command:     event.Command(p.argv), // nil: "unknown"
		Observation: "process-presence",
	}
	if p.exe != "" {
		d.Executable = p.exe
	}
	return d
}

// Follow waits until the process is gone or observation stops, and writes
// the end of the lifecycle to c (from Record). It never signals the
// process. Outcomes:
//
//   - the process is gone (exited, a zombie, or its pid now names another
//     process): a terminal event with state lost; the verdict, whose
//     Reason says why, and a nil error;
//   - ctx ended first, or the wait failed: a diagnostic "observation
//     ended; state unknown" naming the reason; no terminal event; the
//     error is context.Cause(ctx) or the wait's error;
//   - an event could not be built: that error, joined to the above.
func (p *Process) Follow(ctx context.Context, c *emit.Child) (event.Verdict, error) {
	v, err := p.wait(ctx)
	if err != nil {
		_, eerr := c.Emit(emit.Spec{Kind: event.KindDiagnostic, Details: ObservationEnded{
			Observation:  "ended",
			ProcessState: "unknown",
			Reason:       err.Error(),
		}})
		return v, errors.Join(err, eerr)
	}
	_, err = c.Emit(emit.Spec{Kind: event.KindTerminal, State: event.StateLost, Details: event.Terminal{
		Claim:       event.ClaimExitStatusOnly,
		Observation: "process-exited",
		ExitStatus:  "unknown",
		Check:       v.Reason,
	}})
	return v, err
}

// wait returns the verdict once the process is gone, or context.Cause(ctx).
func (p *Process) wait(ctx context.Context) (event.Verdict, error) {
	if p.fd != nil {
		if err := p.fd.Wait(ctx); err != nil {
			return event.Verdict{}, err
		}
		// The kernel says it exited; the table says how it looks now.
		if v := event.CheckIdentity(p.table, p.id); v.Status == event.Gone {
			return v, nil
		}
		return event.Verdict{Status: event.Gone, Reason: "the kernel reported the exit through a pidfd"}, nil
	}
	t := time.NewTicker(p.poll)
	defer t.Stop()
	for {
		if v := event.CheckIdentity(p.table, p.id); v.Status == event.Gone {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return event.Verdict{}, context.Cause(ctx)
		case <-t.C:
		}
	}
}

// ParsePID parses a process id: a positive decimal number that fits a
// pid_t. Outcomes: the pid, or an error wrapping ErrBadPID that quotes
// the text.
func ParsePID(s string) (int, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n <= 0 || s[0] == '+' {
		return 0, fmt.Errorf("%s is %w", quote(s), ErrBadPID)
	}
	return int(n), nil
}

// ReadPIDFile reads a pid file: one process id, with optional whitespace
// around it. Outcomes: the pid; the error from opening or reading the
// file; or an error wrapping ErrBadPID that quotes what the file holds.
func ReadPIDFile(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return 0, fmt.Errorf("%s is empty: %w", path, ErrBadPID)
	}
	pid, err := ParsePID(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return pid, nil
}

// quote shows foreign text in an error: redacted, cut, quoted.
func quote(s string) string {
	return strconv.Quote(event.CutRunes(redact.Text(s), 32))
}
