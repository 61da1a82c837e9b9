package supervise

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/notify"
	"github.com/lcwrap/lcwrap/internal/redact"
)

// Defaults of the command line.
const (
	DefaultHeartbeat = 10 * time.Second
	DefaultKillAfter = 10 * time.Second
)

// Environment variables lcwrap sets for the child: an lcwrap started
// inside it takes them as its parent and root (journal.EnvPath is set by
// the caller, which knows the journal).
const (
	EnvChildID     = "LCWRAP_CHILD_ID"
	EnvRootChildID = "LCWRAP_ROOT_CHILD_ID"
)

// maxPids bounds the pids listed in a leftovers report (count is exact).
const maxPids = 64

// terminalOf finds lcwrap's controlling terminal (a seam for tests).
var terminalOf = openTerminal

// groupGoneWait bounds the wait for a group to vanish after SIGKILL.
const groupGoneWait = 2 * time.Second

var (
	// ErrNoCommand means Config.Argv is empty.
	ErrNoCommand = errors.New("supervise: no command to run")
	// ErrNoEmitter means Config.Emitter is nil.
	ErrNoEmitter = errors.New("supervise: no emitter for the lifecycle events")
	// ErrNoSignals means Config.Signals is nil (call Subscribe).
	ErrNoSignals = errors.New("supervise: no signal subscription")
	// ErrNegative means a duration in Config is negative.
	ErrNegative = errors.New("supervise: durations must not be negative")
	// ErrSubreaper means Config.Subreaper could not be honoured.
	ErrSubreaper = errors.New("supervise: cannot become a child subreaper")
	// ErrNeedsNotify means ReadyNotify, ReadyTimeout or Watchdog was set
	// without Notify, or ReadyTimeout without ReadyNotify.
	ErrNeedsNotify = errors.New("supervise: the readiness and watchdog settings need the notify socket")
	// ErrNotify means the notify socket could not be made.
	ErrNotify = errors.New("supervise: cannot create the notify socket")
	// ErrRestartPolicy means Config.Restart names no known policy.
	ErrRestartPolicy = errors.New("supervise: unknown restart policy")
	// ErrPTY means no pseudo-terminal could be opened (OpenPTY).
	ErrPTY = errors.New("supervise: cannot open a pseudo-terminal")
	// ErrActivity means Config.Activity names no known source.
	ErrActivity = errors.New("supervise: unknown activity source")
	// ErrInterpose means a pipe for the child's output could not be made.
	ErrInterpose = errors.New("supervise: cannot interpose on the child's output")
)

// Config says what to run and how to watch it.
type Config struct {
	// Argv is the command and its arguments; Argv[0] is looked up in PATH
	// unless it holds a slash.
	Argv []string
	// ExtraEnv is added to lcwrap's environment for the child (KEY=VALUE,
	// replacing the same keys; a bare KEY removes it). Run adds
	// EnvChildID and EnvRootChildID.
	ExtraEnv []string
	// Stdin, Stdout and Stderr are the child's (nil: closed).
	Stdin, Stdout, Stderr *os.File
	// ExtraFiles become the child's descriptors 3, 4, ...
	ExtraFiles []*os.File
	// Streams are the interposers whose ChildFile is Stdout or Stderr: Run
	// closes its copy of their pipes once the child has started and drains
	// them (drainWait at most) before the terminal event.
	Streams []*Stream

	// Emitter writes the events; ChildID and Lineage identify the
	// lifecycle (Lineage.RootChildID defaults to ChildID).
	Emitter *emit.Emitter
	ChildID string
	Lineage event.Lineage
	// Signals is the subscription from Subscribe.
	Signals *Signals

	// Heartbeat is the interval of heartbeat events; 0 means none, and the
	// heartbeat capability is then unknown.
	Heartbeat time.Duration
	// Timeout, when positive, cancels the child (SIGTERM to its group)
	// after that long; lcwrap's exit code is then 124.
	Timeout time.Duration
	// KillAfter is how long after a cancel request (or, with
	// KillLeftovers, after the main child ended) SIGKILL follows.
	KillAfter time.Duration
	// SuccessCodes are the exit codes reported as completed (default 0).
	SuccessCodes []int
	// KillLeftovers terminates what is left of the child's process group
	// when the main child ends without a cancel request.
	KillLeftovers bool
	// Subreaper makes lcwrap reap orphaned descendants (always on as PID 1).
	Subreaper bool

	// PTY, when set (OpenPTY), is the child's terminal: its stdin, stdout
	// and stderr are the pty, in a session of its own. Stdin and Stderr
	// are then not the child's: the PTY copies lcwrap's stdin to it, and
	// its output goes to Stdout (through a Stream; Run makes one if
	// Stdout is not one already). No foreground hand-over: the child's
	// terminal is its own. Run leaves the PTY open (the caller closes it).
	PTY *PTY
	// Activity says what becomes activity events: ActivityNone (or "")
	// or ActivityOutput, the latest line of the child's output (Run
	// interposes on Stdout and Stderr, or reads the PTY, to see it).
	Activity string

	// Notify gives the child a NOTIFY_SOCKET and records what it says
	// there (sd_notify; see notify.go).
	Notify bool
	// ReadyNotify keeps the child starting until it sends READY=1.
	ReadyNotify bool
	// ReadyTimeout, when positive, cancels a child that has not sent
	// READY=1 after that long (SIGTERM to its group); the exit code is
	// then 124.
	ReadyTimeout time.Duration
	// Watchdog, when positive, is the child's WATCHDOG_USEC: its
	// WATCHDOG=1 pings are the heartbeats, at that declared interval, and
	// lcwrap writes none of its own (Heartbeat is not used).
	Watchdog time.Duration
	// Restart says whether and how the command is started again when it
	// has ended (see restart.go).
	Restart Restart

	// OnStarted, when set, is called once per attempt with the started
	// child's identity, right after its starting event (on Run's
	// goroutine: it must return promptly).
	OnStarted func(child event.Identity)
	// BeforeTerminal, when set, is called once per attempt after the
	// child ended and its output was drained, just before the terminal
	// event: it may add members of its own to the details (their Extra).
	// It must return promptly and must not change the members lcwrap set.
	BeforeTerminal func(details *event.Terminal)
	// CreatedExtra are members the created event's details carry besides
	// lcwrap's (event.Created's Extra): the agent member of an agent
	// integration, what it added to the command line. RecordedArgv is
	// then the command as given, recorded in place of Argv.
	CreatedExtra event.Members
	RecordedArgv []string

	interposed *decision // set by Interposed.Apply
}

// Result is how the run ended.
type Result struct {
	// State is the terminal state recorded.
	State event.State
	// ExitCode is lcwrap's own exit code (docs/run.md, "Exit codes").
	ExitCode int
	// StartErr says why the command could not be started (ExitCode 126 or
	// 127); nil when it ran.
	StartErr error
	// EventErr is the first event that could not be made: a bug, which
	// did not affect the child.
	EventErr error
}

// Run starts cfg.Argv and supervises it until it has ended and its
// leftovers are dealt with. Its outcomes:
//
//   - an error (ErrNoCommand, ErrNoEmitter, ErrNoSignals, ErrNegative,
//     ErrSubreaper, ErrActivity, ErrInterpose, ErrNeedsNotify,
//     ErrRestartPolicy, ErrNotify) when cfg is unusable: nothing was
//     started and no event was written;
//   - a Result with StartErr and ExitCode 127 (not found) or 126 (not
//     executable): created → failed, no process started;
//   - otherwise a Result for a child that ran: created → starting →
//     running → completed, failed or cancelled (with ReadyNotify it
//     stays starting until READY=1; LCWRAP_STATE may move it between
//     running and waiting);
//   - with a Restart policy, the Result of the last attempt, each
//     attempt being one of the two above.
//
// Cancelling ctx is a cancel request, like a SIGTERM lcwrap received: the
// child's group gets SIGTERM, SIGKILL follows after KillAfter, and the
// terminal event records cancel.by "context"; with a Restart policy no
// further attempt starts. Run still returns only once the child has ended.
func Run(ctx context.Context, cfg Config) (Result, error) {
	switch {
	case len(cfg.Argv) == 0 || cfg.Argv[0] == "":
		return Result{}, ErrNoCommand
	case cfg.Emitter == nil:
		return Result{}, ErrNoEmitter
	case cfg.Signals == nil:
		return Result{}, ErrNoSignals
	case cfg.Heartbeat < 0 || cfg.Timeout < 0 || cfg.KillAfter < 0 || cfg.ReadyTimeout < 0 || cfg.Watchdog < 0 || cfg.Restart.Backoff < 0 || cfg.Restart.MaxAttempts < 0:
		return Result{}, ErrNegative
	}
	if err := cfg.checkNotify(); err != nil {
		return Result{}, err
	}
	if err := checkRestart(cfg.Restart); err != nil {
		return Result{}, err
	}
	if !slices.Contains([]string{"", ActivityNone, ActivityOutput}, cfg.Activity) {
		return Result{}, fmt.Errorf("%w %q", ErrActivity, cfg.Activity)
	}
	if cfg.SuccessCodes == nil {
		cfg.SuccessCodes = []int{0}
	}
	reapAll := cfg.Subreaper || os.Getpid() == 1
	if cfg.Subreaper && os.Getpid() != 1 {
		if err := becomeSubreaper(); err != nil {
			return Result{}, fmt.Errorf("%w: %v", ErrSubreaper, err)
		}
	}
	l := &launcher{reaper: &reaper{all: reapAll}}
	if cfg.Notify {
		sock, err := notify.Open()
		if err != nil {
			return Result{}, fmt.Errorf("%w: %v", ErrNotify, err)
		}
		defer sock.Close()
		l.sock = sock
		cfg.ExtraEnv = append(slices.Clone(cfg.ExtraEnv), notify.Env(sock.Path(), cfg.Watchdog)...)
	}
	own, err := interposeFor(&cfg) // for the PTY's output and output activity
	if err != nil {
		return Result{}, err
	}
	defer closeStreams(own)
	if cfg.Restart.Policy != RestartNo {
		return l.restarting(ctx, cfg), nil
	}
	s, res := l.attempt(ctx, cfg)
	res.EventErr = s.rec.err
	return res, nil
}

// supervisor is one run. Everything below runs on Run's goroutine, except
// the reaper, which only sends on waits.
type supervisor struct {
	ctx    context.Context // its end is a cancel request
	cfg    Config
	rec    recorder
	reaper *reaper   // the one reaper every attempt shares
	notify *notifier // the sd_notify side of this attempt (Notify)

	act *outputActivity // output activity (Activity: ActivityOutput)

	proc  *process
	pid   int // also the child's process group
	tty   *terminal
	gave  bool // the child's group was made the terminal's foreground
	waits chan waitResult

	exited    bool
	status    exitStatus
	cancel    *cancelRequest
	killTimer *time.Timer
}

func (s *supervisor) run() Result {
	// created is written while Subscribe finishes in the background; the
	// journal sink queues it, so the journal's lock never delays the start.
	// With no sink at all (--no-journal, no --emit) the events are not
	// built: their details would only cost the start.
	silent := s.rec.child.Silent()
	var created event.Created
	if !silent {
		self, _ := event.SelfIdentity()
		recorded := s.cfg.Argv
		if s.cfg.RecordedArgv != nil {
			recorded = s.cfg.RecordedArgv
		}
		created = event.Created{
			Command:             redact.Argv(recorded),
			HeartbeatIntervalMs: s.cfg.heartbeatInterval().Milliseconds(),
			Wrapper:             &self,
			Profile:             s.cfg.profile().Name,
			Extra:               s.cfg.CreatedExtra,
		}
	}
	s.rec.to(event.StateCreated, created)
	if err := s.start(); err != nil {
		s.ptyEnded()
		for _, st := range s.cfg.Streams {
			st.Drain(0)
		}
		code := startErrorCode(err)
		s.rec.to(event.StateFailed, event.Terminal{
			Claim: event.ClaimExitStatusOnly,
			Exit:  event.ExitCode(code),
			Error: err.Error(),
		})
		return Result{State: event.StateFailed, ExitCode: code, StartErr: err}
	}
	defer s.proc.release()
	if s.tty != nil {
		defer s.tty.close()
	}
	defer s.ptyEnded() // also when something panics
	var id event.Identity
	if !silent || s.notify != nil || s.cfg.OnStarted != nil {
		id, _, _ = event.IdentityOf(event.System, s.pid)
	}
	child := &event.Identity{PID: s.pid, StartTime: id.StartTime, Clock: id.Clock}
	s.rec.to(event.StateStarting, event.StateChanged{Child: child})
	if s.cfg.OnStarted != nil {
		started := id
		started.PID = s.pid
		s.cfg.OnStarted(started)
	}
	if !s.cfg.ReadyNotify {
		s.rec.to(event.StateRunning, event.StateChanged{Child: child})
	}
	s.listen(child)
	s.waits = make(chan waitResult, 1)
	s.reaper.register(s.pid, s.waits)

	s.supervise()
	s.endNotify()
	s.restoreForeground()
	s.ptyEnded()
	leftovers := s.leftovers()
	for _, st := range s.cfg.Streams {
		st.Drain(drainWait)
	}
	s.act.flush(&s.rec) // the last line before the end is never dropped

	state, code := outcome(s.status, s.cancel, s.cfg.SuccessCodes)
	details := event.Terminal{Claim: event.ClaimExitStatusOnly, Exit: s.status.details()}
	state = s.readiness(state, &details)
	if s.cancel != nil {
		details.Cancel = s.cancel.details()
	}
	if leftovers != nil {
		s.rec.diagnostic(LeftoversDiagnostic{Leftovers: leftovers, Message: leftoverMessage(leftovers) + s.ptyLeftoverNote()})
		details.Leftovers = leftovers
	}
	if s.cfg.BeforeTerminal != nil {
		s.cfg.BeforeTerminal(&details)
	}
	s.rec.to(state, details)
	return Result{State: state, ExitCode: code}
}

// start looks the command up and starts it in its own process group (the
// terminal's foreground group when lcwrap holds the foreground).
func (s *supervisor) start() error {
	path, err := exec.LookPath(s.cfg.Argv[0])
	if err != nil && !errors.Is(err, exec.ErrDot) {
		return err
	}
	stdio := []*os.File{s.cfg.Stdin, s.cfg.Stdout, s.cfg.Stderr}
	sys := &syscall.SysProcAttr{Setpgid: true}
	if s.cfg.PTY != nil {
		if stdio, err = s.ptyStdio(); err != nil {
			return err
		}
		sys = &syscall.SysProcAttr{Setsid: true, Setctty: true} // Ctty 0: the pty on its stdin
	}
	s.watchOutput()
	files := append(stdio, s.cfg.ExtraFiles...)
	attr := &syscall.ProcAttr{Env: s.env(), Sys: sys}
	for _, f := range files {
		fd := ^uintptr(0) // closed in the child
		if f != nil {
			fd = f.Fd() // also puts it in blocking mode, as a child expects
		}
		attr.Files = append(attr.Files, fd)
	}
	defer runtime.KeepAlive(files)
	s.cfg.Signals.wait() // every handler is in place before the child exists
	s.tty = terminalOf()
	if s.tty != nil && s.cfg.PTY == nil && s.tty.foreground() == s.tty.own {
		attr.Sys = &syscall.SysProcAttr{Setpgid: true, Foreground: true, Ctty: s.tty.fd}
		s.proc, err = startProcess(path, s.cfg.Argv, attr)
		if err == nil {
			s.gave = true
		} else {
			// The terminal may have refused: start it without the
			// foreground rather than not at all.
			attr.Sys = &syscall.SysProcAttr{Setpgid: true}
			s.proc, err = startProcess(path, s.cfg.Argv, attr)
		}
	} else {
		s.proc, err = startProcess(path, s.cfg.Argv, attr)
	}
	for _, st := range s.cfg.Streams {
		st.CloseChildEnd()
	}
	if err != nil {
		if s.tty != nil {
			s.tty.close()
			s.tty = nil
		}
		return err
	}
	s.pid = s.proc.pid
	if s.cfg.PTY != nil {
		s.cfg.PTY.Started() // lcwrap's stdin is copied to it from now on
	}
	return nil
}

// startErrorCode is 127 for a command (or interpreter) that does not exist,
// 126 for one that cannot be executed.
func startErrorCode(err error) int {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return ExitNotFound
	}
	return ExitNotExecutable
}

// env is lcwrap's environment with ExtraEnv and the lineage variables.
func (s *supervisor) env() []string {
	root := s.cfg.Lineage.RootChildID
	if root == "" {
		root = s.cfg.ChildID
	}
	extra := append(slices.Clone(s.cfg.ExtraEnv), EnvChildID+"="+s.cfg.ChildID, EnvRootChildID+"="+root)
	keys := map[string]bool{}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !keys[k] {
			env = append(env, kv)
		}
	}
	for _, kv := range extra {
		if strings.Contains(kv, "=") { // a bare KEY removes it (see ExtraEnv)
			env = append(env, kv)
		}
	}
	return env
}

// supervise runs until the main child has ended: it forwards signals,
// writes heartbeats, applies the timeout and the kill deadline, and
// follows job control.
func (s *supervisor) supervise() {
	var heartbeat <-chan time.Time
	if s.cfg.Heartbeat > 0 && s.cfg.Watchdog == 0 {
		t := time.NewTicker(s.cfg.Heartbeat)
		defer t.Stop()
		heartbeat = t.C
	}
	var timeout <-chan time.Time
	if s.cfg.Timeout > 0 {
		t := time.NewTimer(s.cfg.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	defer func() {
		if s.killTimer != nil {
			s.killTimer.Stop()
		}
	}()
	cancelled := s.ctx.Done()
	for !s.exited {
		select {
		case <-cancelled:
			cancelled = nil
			if s.requestCancel(syscall.SIGTERM, byContext) {
				s.signalJob(syscall.SIGTERM)
			}
		case sig := <-s.cfg.Signals.c:
			s.onSignal(sig.(syscall.Signal))
		case w := <-s.waits:
			if w.stopped {
				s.onStop()
				continue
			}
			s.exited = true
			s.status = decodeStatus(w.status)
			s.status.unknown = w.err
		case <-heartbeat:
			s.rec.heartbeat()
		case m, ok := <-s.notifyC():
			s.onNotify(m, ok)
		case <-s.readyTimeoutC():
			s.onReadyTimeout()
		case <-s.statusC():
			s.flushStatus()
		case <-s.act.readyC():
			s.act.onReady(&s.rec)
		case <-s.act.timerC():
			s.act.onTimer(&s.rec)
		case <-timeout:
			timeout = nil
			if s.requestCancel(syscall.SIGTERM, byTimeout) {
				s.signalJob(syscall.SIGTERM)
			}
		case <-s.killC():
			s.killJob()
		}
	}
}

// onSignal forwards one received signal, exactly once.
func (s *supervisor) onSignal(sig syscall.Signal) {
	switch {
	case s.cfg.Signals.ignored[sig]:
	case slices.Contains(cancelSignals, sig):
		s.requestCancel(sig, bySignal)
		s.signalJob(sig)
	case slices.Contains(mainSignals, sig):
		s.proc.signal(sig)
	case sig == syscall.SIGCONT:
		s.onContinue()
	case sig == syscall.SIGWINCH && s.cfg.PTY != nil:
		s.cfg.PTY.Resize()
	}
}

// requestCancel records the first cancel request and starts the kill
// deadline. It reports whether this was the first.
func (s *supervisor) requestCancel(sig syscall.Signal, by string) bool {
	if s.cancel != nil {
		return false
	}
	s.cancel = &cancelRequest{signal: sig, by: by, at: time.Now()}
	s.killTimer = time.NewTimer(s.cfg.KillAfter)
	return true
}

func (s *supervisor) killC() <-chan time.Time {
	if s.killTimer == nil {
		return nil
	}
	return s.killTimer.C
}

// signalJob sends sig to the child's process group, and to the main child
// (through its pidfd) if it has left the group. The group id names this
// job while any member lives; only in the instant after the reaper took
// the main child's status, before this goroutine sees it, could an empty
// group's id be reused, which takes a wrap-around of the pid space.
func (s *supervisor) signalJob(sig syscall.Signal) {
	syscall.Kill(-s.pid, sig)
	if info, err := event.System.Stat(s.pid); err == nil && info.PGID != s.pid {
		s.proc.signal(sig)
	}
}

// killJob is the kill deadline: SIGKILL for the main child and its group.
func (s *supervisor) killJob() {
	s.killTimer = nil
	s.proc.signal(syscall.SIGKILL)
	syscall.Kill(-s.pid, syscall.SIGKILL)
}

// onStop follows job control: when the child was stopped and lcwrap has a
// terminal, lcwrap takes the foreground back and stops itself, so that the
// shell sees the job stopped. Without a terminal nobody would resume
// lcwrap, so it keeps watching.
func (s *supervisor) onStop() {
	if s.tty == nil {
		return
	}
	if s.tty.foreground() == s.pid {
		s.tty.setForeground(s.tty.own)
	}
	s.rawTerminal(false) // with a PTY: the shell gets its terminal back as it was
	syscall.Kill(os.Getpid(), syscall.SIGSTOP)
}

// onContinue resumes the child: with the foreground if lcwrap has it (with
// a PTY, whose terminal is the child's own, lcwrap's terminal goes raw
// again instead).
func (s *supervisor) onContinue() {
	switch {
	case s.tty == nil || s.tty.foreground() != s.tty.own:
	case s.cfg.PTY != nil:
		s.rawTerminal(true)
	default:
		s.tty.setForeground(s.pid)
	}
	syscall.Kill(-s.pid, syscall.SIGCONT)
}

// restoreForeground gives the terminal back to lcwrap's group if the
// child's group still holds it.
func (s *supervisor) restoreForeground() {
	if s.gave && s.tty.foreground() == s.pid {
		s.tty.setForeground(s.tty.own)
	}
}

// leftovers deals with processes of the child's group that outlived it:
// after a cancel request, or with KillLeftovers, they get SIGTERM and then
// SIGKILL at the kill deadline; otherwise they are only reported. It
// returns the report, or nil when nothing was left.
func (s *supervisor) leftovers() *event.Leftovers {
	if syscall.Kill(-s.pid, 0) == syscall.ESRCH {
		return nil // the group is empty: no need to scan the process table
	}
	pids, _ := event.GroupMembers(s.pid)
	if len(pids) == 0 {
		return nil
	}
	report := &event.Leftovers{Count: len(pids), Pids: pids[:min(len(pids), maxPids)], Action: "reported"}
	if s.cancel == nil && !s.cfg.KillLeftovers {
		return report
	}
	report.Action = "terminated"
	syscall.Kill(-s.pid, syscall.SIGTERM)
	deadline := time.Now().Add(s.cfg.KillAfter)
	if s.cancel != nil {
		deadline = s.cancel.at.Add(s.cfg.KillAfter)
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	if !s.awaitGroupGone(t.C) {
		syscall.Kill(-s.pid, syscall.SIGKILL)
		s.awaitGroupGone(time.After(groupGoneWait))
	}
	return report
}

// awaitGroupGone polls (5 ms, backing off to 100 ms) until the child's
// group has no live member or deadline fires. Cancel signals received
// meanwhile still reach the group. It reports whether the group is gone.
func (s *supervisor) awaitGroupGone(deadline <-chan time.Time) bool {
	wait := 5 * time.Millisecond
	for {
		if pids, _ := event.GroupMembers(s.pid); len(pids) == 0 {
			return true
		}
		select {
		case sig := <-s.cfg.Signals.c:
			if sig := sig.(syscall.Signal); slices.Contains(cancelSignals, sig) && !s.cfg.Signals.ignored[sig] {
				syscall.Kill(-s.pid, sig)
			}
		case <-deadline:
			return false
		case <-time.After(wait):
			wait = min(2*wait, 100*time.Millisecond)
		}
	}
}

func leftoverMessage(report *event.Leftovers) string {
	n := report.Count
	what := fmt.Sprintf("%d processes of the child's process group outlived it and were", n)
	if n == 1 {
		what = "1 process of the child's process group outlived it and was"
	}
	if report.Action == "terminated" {
		return what + " terminated"
	}
	return what + " left running"
}
