package supervise

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/emit"
	"github.com/lcwrap/lcwrap/internal/notify"
	"github.com/lcwrap/lcwrap/jsonl"
)

// RestartPolicy says when Run starts the command again.
type RestartPolicy string

// The restart policies. The zero value is RestartNo.
const (
	RestartNo        RestartPolicy = ""
	RestartOnFailure RestartPolicy = "on-failure" // until an attempt ends completed
	RestartAlways    RestartPolicy = "always"     // whatever the outcome
)

// maxBackoffFactor caps the backoff at this many times Restart.Backoff.
const maxBackoffFactor = 30

// Restart is a restart policy with its limits.
type Restart struct {
	Policy RestartPolicy
	// MaxAttempts bounds the attempts, the first included; 0 means no
	// limit.
	MaxAttempts int
	// Backoff is the wait before the second attempt; each later wait
	// doubles it, up to 30 times Backoff, and each is shortened by a
	// random amount of up to half (jitter).
	Backoff time.Duration
}

// ParseRestartPolicy reads "no", "on-failure" or "always"; anything else
// is ErrRestartPolicy.
func ParseRestartPolicy(s string) (RestartPolicy, error) {
	switch s {
	case "no":
		return RestartNo, nil
	case string(RestartOnFailure), string(RestartAlways):
		return RestartPolicy(s), nil
	}
	return "", fmt.Errorf("%w %q (choose no, on-failure or always)", ErrRestartPolicy, s)
}

func (r Restart) check() error {
	if !slices.Contains([]RestartPolicy{RestartNo, RestartOnFailure, RestartAlways}, r.Policy) {
		return fmt.Errorf("%w %q", ErrRestartPolicy, r.Policy)
	}
	return nil
}

// backoff is the wait before the attempt that follows attempt n (1 is
// the first of this Run).
func (r Restart) backoff(n int) time.Duration {
	limit := time.Duration(math.MaxInt64) // for a Backoff too long to multiply
	if r.Backoff <= limit/maxBackoffFactor {
		limit = maxBackoffFactor * r.Backoff
	}
	d := r.Backoff
	for i := 1; i < n && d < limit; i++ {
		if d > limit/2 {
			d = limit
		} else {
			d *= 2
		}
	}
	return d - rand.N(d/2+1)
}

// launcher holds what every attempt of one Run shares.
type launcher struct {
	reapAll bool
	sock    *notify.Socket
	reaper  *sharedReaper // set for restarts with reapAll
}

// attempt runs one lifecycle of cfg to its terminal event.
func (l *launcher) attempt(ctx context.Context, cfg Config) (*supervisor, Result) {
	s := &supervisor{ctx: ctx, cfg: cfg, reapAll: l.reapAll, reaper: l.reaper}
	if l.sock != nil {
		s.notify = &notifier{sock: l.sock}
	}
	s.rec.child = cfg.Emitter.Child(cfg.ChildID, cfg.Lineage, cfg.profile())
	return s, s.run()
}

// restarting runs attempts under cfg.Restart and returns the last one's
// result (with the first event error of any). Each attempt is a lifecycle
// of its own: the first keeps cfg.ChildID, the next ones are
// "<ChildID>-a<attempt>", with the same root and parent and the attempt
// counted up. Between attempts, the one that ended records a diagnostic
// naming the next attempt and its delay; when no attempt follows where
// the policy would have made one, a diagnostic says why. A cancel request
// (HUP, INT or TERM lcwrap received, during an attempt or during the
// wait) ends the loop, and so does a child killed by SIGINT (a terminal's
// Ctrl-C reaches the child directly; like a shell's loop, lcwrap takes it
// as the user's stop), a command that cannot be started, and the last
// of MaxAttempts. --timeout and the ready timeout apply to each attempt
// and end only that one.
func (l *launcher) restarting(ctx context.Context, cfg Config) Result {
	if l.reapAll {
		l.reaper = &sharedReaper{}
	}
	if cfg.Lineage.RootChildID == "" {
		cfg.Lineage.RootChildID = cfg.ChildID
	}
	base, first := cfg.ChildID, cfg.Lineage.Attempt
	var eventErr error
	for n := 1; ; n++ {
		s, res := l.attempt(ctx, cfg)
		if eventErr == nil {
			eventErr = s.rec.err
		}
		res.EventErr = eventErr
		if !s.restartNeeded(res, n) {
			return res
		}
		next := cfg
		next.Lineage.Attempt = first + int64(n)
		next.ChildID = base + "-a" + strconv.FormatInt(next.Lineage.Attempt, 10)
		delay := cfg.Restart.backoff(n).Round(time.Millisecond)
		info := &jsonl.Restart{Policy: string(cfg.Restart.Policy), NextAttempt: next.Lineage.Attempt, NextChildID: next.ChildID, DelayMs: delay.Milliseconds()}
		s.rec.diagnostic(jsonl.RestartDiagnostic{Restart: info, Message: fmt.Sprintf("attempt %d (child %s) starts in %s", next.Lineage.Attempt, next.ChildID, delay)})
		if sig, ok := waitBackoff(ctx, cfg.Signals, delay); !ok {
			stop := &jsonl.Restart{Policy: string(cfg.Restart.Policy), Stopped: "cancel-request", Signal: signalName(sig), At: emit.Timestamp(time.Now()), NextAttempt: next.Lineage.Attempt}
			s.rec.diagnostic(jsonl.RestartDiagnostic{Restart: stop, Message: fmt.Sprintf("no further attempt: %s arrived while waiting for attempt %d", signalName(sig), next.Lineage.Attempt)})
			return res
		}
		if err := renewStreams(&next); err != nil {
			stop := &jsonl.Restart{Policy: string(cfg.Restart.Policy), Stopped: "error", NextAttempt: next.Lineage.Attempt}
			s.rec.diagnostic(jsonl.RestartDiagnostic{Restart: stop, Message: "no further attempt: " + err.Error()})
			return res
		}
		cfg = next
	}
}

// restartNeeded decides whether attempt n, which ended with res, is
// followed by another. Where the policy alone would restart but
// something else stops the loop, it records a diagnostic saying what.
func (s *supervisor) restartNeeded(res Result, n int) bool {
	r := s.cfg.Restart
	if r.Policy == RestartOnFailure && res.State == jsonl.StateCompleted {
		return false
	}
	stop := &jsonl.Restart{Policy: string(r.Policy)}
	var why string
	switch {
	case s.cancel != nil && (s.cancel.by == bySignal || s.cancel.by == byContext):
		stop.Stopped, stop.Signal = "cancel-request", signalName(s.cancel.signal)
		why = "a cancel request (" + signalName(s.cancel.signal) + ") ended this attempt"
	case res.StartErr != nil:
		stop.Stopped = "start-error"
		why = "the command could not be started"
	case s.cancel == nil && s.status.signaled && s.status.signal == syscall.SIGINT:
		stop.Stopped = "interrupted"
		why = "SIGINT killed the child (a terminal's Ctrl-C reaches it directly)"
	case r.MaxAttempts > 0 && n >= r.MaxAttempts:
		stop.Stopped, stop.MaxAttempts = "max-attempts", r.MaxAttempts
		why = fmt.Sprintf("this was attempt %d of at most %d", n, r.MaxAttempts)
	default:
		return true
	}
	s.rec.diagnostic(jsonl.RestartDiagnostic{Restart: stop, Message: "no further attempt: " + why})
	return false
}

// waitBackoff waits d, unless a cancel request (HUP, INT or TERM that
// lcwrap was not told to ignore) arrives first: then it returns that
// signal and false. Other signals have no child to reach and are
// dropped.
func waitBackoff(ctx context.Context, sigs *Signals, d time.Duration) (syscall.Signal, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return 0, true
		case <-ctx.Done():
			return syscall.SIGTERM, false // a cancel request, as SIGTERM would be
		case sig := <-sigs.c:
			if sig := sig.(syscall.Signal); slices.Contains(cancelSignals, sig) && !sigs.ignored[sig] {
				return sig, false
			}
		}
	}
}

// renewStreams gives each Stream of cfg a new pipe for the next attempt's
// child (an attempt drains and closes its child's end) and points
// cfg.Stdout and cfg.Stderr at it.
func renewStreams(cfg *Config) error {
	for _, st := range cfg.Streams {
		old := st.ChildFile()
		if err := st.Renew(); err != nil {
			return fmt.Errorf("cannot interpose on %s again: %w", st.Name(), err)
		}
		if cfg.Stdout == old {
			cfg.Stdout = st.ChildFile()
		}
		if cfg.Stderr == old {
			cfg.Stderr = st.ChildFile()
		}
	}
	return nil
}

// sharedReaper is the subreaper's single wait4(-1) loop for all the
// attempts of one Run. One loop per attempt would not do: an earlier
// attempt's loop runs on while orphans live and could take a later
// child's status. The loop hands the registered child's statuses over
// and discards every other child's; it ends when lcwrap has no child left
// and none is registered, and register starts it again.
type sharedReaper struct {
	mu      sync.Mutex
	running bool
	pid     int // the registered child (0: none)
	out     chan<- waitResult
	early   map[int]waitResult // statuses reaped while no child was registered
}

// register hands pid's statuses to out from now on, including one reaped
// between its start and this call.
func (r *sharedReaper) register(pid int, out chan<- waitResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pid, r.out = pid, out
	if w, ok := r.early[pid]; ok {
		r.deliver(w)
	}
	r.early = nil
	if !r.running && r.pid != 0 {
		r.running = true
		go r.loop()
	}
}

func (r *sharedReaper) loop() {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, syscall.WUNTRACED, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		r.mu.Lock()
		switch {
		case err != nil && r.pid == 0:
			r.running = false
			r.mu.Unlock()
			return
		case err != nil && syscall.Kill(r.pid, 0) == syscall.ESRCH:
			// Something else in this process reaped it.
			r.deliver(waitResult{err: err})
		case err != nil:
			// The child was registered after wait4 found no child:
			// waiting again finds it.
		case got == r.pid:
			r.deliver(waitResult{status: ws, stopped: ws.Stopped()})
		case r.pid == 0:
			if r.early == nil {
				r.early = map[int]waitResult{}
			}
			r.early[got] = waitResult{status: ws, stopped: ws.Stopped()}
		}
		r.mu.Unlock()
	}
}

// deliver passes one status of the registered child on; its end
// unregisters it. r.mu is held.
func (r *sharedReaper) deliver(w waitResult) {
	r.out <- w
	if !w.stopped {
		r.pid, r.out = 0, nil
	}
}
