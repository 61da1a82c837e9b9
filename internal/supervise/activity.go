package supervise

import (
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/internal/lastline"
)

// What becomes activity (Config.Activity).
const (
	// ActivityNone: no activity events of lcwrap's own making.
	ActivityNone = "none"
	// ActivityOutput: the latest line of the child's output.
	ActivityOutput = "output"
)

const (
	// activityInterval is the least time between two activity events
	// (the last one before the terminal event excepted).
	activityInterval = time.Second
)

// outputActivity turns the child's latest output line into activity
// events: at most one per activityInterval, the newest line winning, and
// the line still waiting at the end is written before the terminal event
// (flush). Lines are offered by the streams' copy goroutines; everything
// else runs on the supervisor's goroutine, which an offer wakes only when
// no event is already due (a burst of output costs it two wake-ups a
// second, not one per chunk).
type outputActivity struct {
	mu    sync.Mutex
	text  string // the newest line not yet made an event
	from  string // the output it came from (details.output)
	fresh bool
	armed bool          // the timer will make the next event
	ready chan struct{} // a fresh line waits (capacity 1)

	last  time.Time // when the last event was made
	timer *time.Timer
}

func newOutputActivity() *outputActivity {
	a := &outputActivity{ready: make(chan struct{}, 1), timer: time.NewTimer(time.Hour)}
	a.timer.Stop()
	return a
}

// offer makes text, a line of the output named from, the newest line.
func (a *outputActivity) offer(text, from string) {
	a.mu.Lock()
	a.text, a.from, a.fresh = text, from, true
	armed := a.armed
	a.mu.Unlock()
	if armed {
		return
	}
	select {
	case a.ready <- struct{}{}:
	default:
	}
}

// readyC and timerC are the supervisor loop's cases (nil without output
// activity: they never fire).
func (a *outputActivity) readyC() <-chan struct{} {
	if a == nil {
		return nil
	}
	return a.ready
}

func (a *outputActivity) timerC() <-chan time.Time {
	if a == nil {
		return nil
	}
	return a.timer.C
}

// onReady: a line was offered. It becomes an event now, or when the
// interval since the last event is over.
func (a *outputActivity) onReady(rec *recorder) {
	if a.isArmed() {
		return
	}
	if wait := activityInterval - time.Since(a.last); !a.last.IsZero() && wait > 0 {
		a.arm(true)
		a.timer.Reset(wait)
		return
	}
	a.emit(rec)
}

func (a *outputActivity) onTimer(rec *recorder) {
	a.arm(false)
	a.emit(rec)
}

func (a *outputActivity) isArmed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.armed
}

func (a *outputActivity) arm(on bool) {
	a.mu.Lock()
	a.armed = on
	a.mu.Unlock()
}

// flush writes the line still waiting, whatever the interval: the last
// line before the child ended is never dropped.
func (a *outputActivity) flush(rec *recorder) {
	if a == nil {
		return
	}
	a.timer.Stop()
	a.arm(false)
	a.emit(rec)
}

func (a *outputActivity) emit(rec *recorder) {
	a.mu.Lock()
	text, from, fresh := a.text, a.from, a.fresh
	a.fresh = false
	a.mu.Unlock()
	if fresh {
		rec.activity(text, ActivityDetails{Output: from})
		a.last = time.Now()
	}
}

// watchOutput: with output activity, every Stream the child's output
// passes through feeds s.act.
func (s *supervisor) watchOutput() {
	if s.cfg.Activity != ActivityOutput {
		return
	}
	s.act = newOutputActivity()
	for _, st := range s.cfg.Streams {
		if from := s.outputName(st); from != "" {
			st.Watch(&lastline.Tap{From: from, Offer: s.act.offer})
		}
	}
}

// outputName is which of the child's output st carries (details.output
// of its activity), or "" for none.
func (s *supervisor) outputName(st *Stream) string {
	f := st.ChildFile()
	switch {
	case s.cfg.PTY != nil && f == s.cfg.Stdout:
		return "pty"
	case s.cfg.PTY != nil:
		return ""
	case f == s.cfg.Stdout && f == s.cfg.Stderr:
		return "stdout+stderr"
	case f == s.cfg.Stdout:
		return "stdout"
	case f == s.cfg.Stderr:
		return "stderr"
	}
	return ""
}
