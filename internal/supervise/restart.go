package supervise

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/notify"
	"github.com/lcwrap/lcwrap/internal/restart"
)

// RestartPolicy says when Run starts the command again
// (internal/restart).
type RestartPolicy = restart.Policy

// The restart policies. The zero value is RestartNo.
const (
	RestartNo        = restart.No
	RestartOnFailure = restart.OnFailure // until an attempt ends completed
	RestartAlways    = restart.Always    // whatever the outcome
)

// Restart is a restart policy with its limits.
type Restart = restart.Restart

// ParseRestartPolicy reads "no", "on-failure" or "always"; anything else
// is ErrRestartPolicy. "no" (every run's default) is read here: a run
// without a restart policy never calls into internal/restart.
func ParseRestartPolicy(s string) (RestartPolicy, error) {
	if s == "no" {
		return RestartNo, nil
	}
	p, err := restart.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%w %v", ErrRestartPolicy, err)
	}
	return p, nil
}

func checkRestart(r Restart) error {
	if r.Policy != RestartNo && !r.Valid() {
		return fmt.Errorf("%w %q", ErrRestartPolicy, r.Policy)
	}
	return nil
}

// launcher holds what every attempt of one Run shares.
type launcher struct {
	sock   *notify.Socket
	reaper *reaper // the one wait4 loop of the Run
}

// attempt runs one lifecycle of cfg to its terminal event.
func (l *launcher) attempt(ctx context.Context, cfg Config) (*supervisor, Result) {
	s := &supervisor{ctx: ctx, cfg: cfg, reaper: l.reaper}
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
		next.ChildID, next.Lineage.Attempt = restart.NextChild(base, first, n)
		delay := cfg.Restart.Delay(n).Round(time.Millisecond)
		info := &RestartReport{Policy: string(cfg.Restart.Policy), NextAttempt: next.Lineage.Attempt, NextChildID: next.ChildID, DelayMs: delay.Milliseconds()}
		s.rec.diagnostic(RestartDiagnostic{Restart: info, Message: fmt.Sprintf("attempt %d (child %s) starts in %s", next.Lineage.Attempt, next.ChildID, delay)})
		if sig, ok := waitBackoff(ctx, cfg.Signals, delay); !ok {
			stop := &RestartReport{Policy: string(cfg.Restart.Policy), Stopped: "cancel-request", Signal: signalName(sig), At: event.Timestamp(time.Now()), NextAttempt: next.Lineage.Attempt}
			s.rec.diagnostic(RestartDiagnostic{Restart: stop, Message: fmt.Sprintf("no further attempt: %s arrived while waiting for attempt %d", signalName(sig), next.Lineage.Attempt)})
			return res
		}
		if err := renewStreams(&next); err != nil {
			stop := &RestartReport{Policy: string(cfg.Restart.Policy), Stopped: "error", NextAttempt: next.Lineage.Attempt}
			s.rec.diagnostic(RestartDiagnostic{Restart: stop, Message: "no further attempt: " + err.Error()})
			return res
		}
		cfg = next
	}
}

// restartNeeded asks the policy whether attempt n, which ended with res,
// is followed by another. Where the policy alone would restart but
// something else stops the loop, it records a diagnostic saying what.
func (s *supervisor) restartNeeded(res Result, n int) bool {
	e := restart.Ending{
		Completed:   res.State == event.StateCompleted,
		StartFailed: res.StartErr != nil,
		Interrupted: s.cancel == nil && s.status.signaled && s.status.signal == syscall.SIGINT,
	}
	if s.cancel != nil && (s.cancel.by == bySignal || s.cancel.by == byContext) {
		e.CancelSignal = signalName(s.cancel.signal)
	}
	again, stop := s.cfg.Restart.Next(e, n)
	if stop.Reason != "" {
		info := &RestartReport{Policy: string(s.cfg.Restart.Policy), Stopped: stop.Reason, Signal: stop.Signal, MaxAttempts: stop.MaxAttempts}
		s.rec.diagnostic(RestartDiagnostic{Restart: info, Message: "no further attempt: " + stop.Why})
	}
	return again
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
