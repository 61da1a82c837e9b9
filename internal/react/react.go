package react

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent/claudecode"
	"github.com/lcwrap/lcwrap/internal/supervise"
	"github.com/lcwrap/lcwrap/internal/watch"
)

// Defaults of Options.
const (
	DefaultJobs      = 4
	DefaultTimeout   = time.Minute
	DefaultQueue     = 1000
	DefaultKillAfter = 2 * time.Second
)

// The variables a command is given (besides the watcher's environment).
const (
	EnvChildID    = "LCWRAP_WATCH_CHILD_ID"
	EnvState      = "LCWRAP_WATCH_STATE"
	EnvPrevious   = "LCWRAP_WATCH_PREVIOUS_STATE"
	EnvActivity   = "LCWRAP_WATCH_ACTIVITY"
	EnvSource     = "LCWRAP_WATCH_SOURCE"
	EnvHost       = "LCWRAP_WATCH_HOST"
	EnvEventID    = "LCWRAP_WATCH_EVENT_ID"
	EnvObservedAt = "LCWRAP_WATCH_OBSERVED_AT"
	EnvWaitingFor = "LCWRAP_WATCH_WAITING_FOR"
	EnvExitCode   = "LCWRAP_WATCH_EXIT_CODE"
	EnvCoalesced  = "LCWRAP_WATCH_COALESCED"
)

// Stripped are the variables of the watcher's environment a command does
// not get: an lcwrap run inside it would take the first two as its parent
// and root, and relay an agent's hooks to the last two.
var Stripped = []string{supervise.EnvChildID, supervise.EnvRootChildID, claudecode.EnvHookURL, claudecode.EnvHookToken}

// Env returns base without the Stripped variables and without any
// LCWRAP_WATCH_ variable (an outer watcher's).
func Env(base []string) []string {
	out := make([]string, 0, len(base))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "LCWRAP_WATCH_") || containsName(Stripped, name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func containsName(names []string, n string) bool {
	for _, s := range names {
		if s == n {
			return true
		}
	}
	return false
}

// maxEnvValue caps one variable's value (an activity line can be long).
const maxEnvValue = 4096

// Options configure a Runner.
type Options struct {
	Command   string        // run through sh -c
	Jobs      int           // commands at once (DefaultJobs when 0)
	Timeout   time.Duration // each command's (DefaultTimeout when 0; <0: none)
	KillAfter time.Duration // SIGTERM to SIGKILL (DefaultKillAfter when 0)
	// Coalesce holds a child's transition this long: a later one of the
	// same child in that time replaces it (and so does one while it
	// waits in the queue). 0: every transition runs.
	Coalesce time.Duration
	Queue    int      // transitions waiting for a slot at most (DefaultQueue when 0)
	Env      []string // the base environment (pass it through Env)
	Stdout   io.Writer
	Stderr   io.Writer
	// Say is told what a person should know: a command that failed or
	// timed out, transitions dropped or coalesced.
	Say func(string)
}

// job is one transition to run a command for.
type job struct {
	n         int64
	t         *watch.Transition
	coalesced int
	held      *time.Timer
}

// pending is a transition not handled yet, in submission order.
type pending struct {
	n      int64
	resume watch.Position
	stale  string // its stale id, for a stale transition
}

// Runner runs the command for each transition submitted (Submit).
type Runner struct {
	o      Options
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	n        int64
	out      []pending // not handled yet, oldest first
	held     map[watch.Key]*job
	queue    []*job
	running  int
	read     watch.Position
	stale    []string // stale ids handled, oldest first
	closing  bool
	wg       sync.WaitGroup
	changed  chan struct{}
	counts   Counts
	dropped  int       // dropped since the last time drops were said
	dropSaid time.Time // when drops were last said
}

// sayEvery is how often drops are said at most: the first one at once,
// then how many since, every sayEvery (and the total when the watcher
// ends).
const sayEvery = 5 * time.Second

// Counts is what a Runner did.
type Counts struct {
	Submitted, Ran, Failed, TimedOut, Dropped, Coalesced int64
}

// New returns a runner.
func New(o Options) *Runner {
	if o.Jobs <= 0 {
		o.Jobs = DefaultJobs
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.KillAfter <= 0 {
		o.KillAfter = DefaultKillAfter
	}
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Say == nil {
		o.Say = func(string) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Runner{o: o, ctx: ctx, cancel: cancel, held: map[watch.Key]*job{}, changed: make(chan struct{}, 1)}
}

// Changed is signalled (coalesced) when the confirmed position may have
// moved.
func (r *Runner) Changed() <-chan struct{} { return r.changed }

func (r *Runner) signal() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// Counts returns what the runner did so far.
func (r *Runner) Counts() Counts {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts
}

// Read tells the runner the follower has read up to p: once every
// transition submitted is handled, p is confirmed.
func (r *Runner) Read(p watch.Position) {
	r.mu.Lock()
	r.read = p
	r.mu.Unlock()
	r.signal()
}

// Confirmed returns the position up to which every transition was
// handled, and the stale ids handled (at most watch.MaxStaleIDs, newest
// last).
func (r *Runner) Confirmed() (watch.Position, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.read
	if len(r.out) > 0 {
		p = r.out[0].resume
	}
	return p, append([]string(nil), r.stale...)
}

// Submit hands the runner one transition (it is copied); it never blocks.
func (r *Runner) Submit(t *watch.Transition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return
	}
	r.n++
	r.counts.Submitted++
	j := &job{n: r.n, t: t.Clone()}
	p := pending{n: j.n, resume: t.Resume}
	if t.State == watch.StateStale {
		p.stale = t.EventID
	}
	r.out = append(r.out, p)
	if r.o.Coalesce > 0 && len(r.held) < r.o.Queue {
		if h := r.held[t.Key]; h != nil {
			r.replace(h, j)
			return
		}
		r.held[t.Key] = j
		k := t.Key
		j.held = time.AfterFunc(r.o.Coalesce, func() { r.release(k) })
		return
	}
	r.enqueue(j)
}

// replace puts j's transition in h's place: h's is handled (coalesced).
func (r *Runner) replace(h, j *job) {
	r.finish(h.n)
	r.counts.Coalesced++
	h.n, h.t, h.coalesced = j.n, j.t, h.coalesced+1
}

// release queues the transition held for k.
func (r *Runner) release(k watch.Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j := r.held[k]
	if j == nil {
		return
	}
	delete(r.held, k)
	if r.closing {
		return
	}
	r.enqueue(j)
}

func (r *Runner) enqueue(j *job) {
	if r.o.Coalesce > 0 {
		for _, q := range r.queue {
			if q.t.Key == j.t.Key {
				c := j.coalesced
				r.replace(q, j)
				q.coalesced += c
				return
			}
		}
	}
	if len(r.queue) >= r.o.Queue {
		old := r.queue[0]
		r.queue = r.queue[1:]
		r.counts.Dropped++
		r.finish(old.n)
		r.dropped++
		if now := time.Now(); r.dropSaid.IsZero() || now.Sub(r.dropSaid) >= sayEvery {
			what := fmt.Sprintf("the transition of %s to %s (event %s)", old.t.Key, old.t.State, old.t.EventID)
			if r.dropped > 1 {
				what = fmt.Sprintf("%d transitions since %s, the last of %s to %s (event %s)", r.dropped, r.dropSaid.Format(time.TimeOnly), old.t.Key, old.t.State, old.t.EventID)
			}
			r.o.Say(fmt.Sprintf("dropped %s: %d waiting already (--queue); the commands run slower than transitions come", what, r.o.Queue))
			r.dropSaid, r.dropped = now, 0
		}
	}
	r.queue = append(r.queue, j)
	r.dispatch()
}

// dispatch starts commands while there is room.
func (r *Runner) dispatch() {
	for !r.closing && r.running < r.o.Jobs && len(r.queue) > 0 {
		j := r.queue[0]
		r.queue[0] = nil
		r.queue = r.queue[1:]
		r.running++
		r.wg.Add(1)
		go r.run(j)
	}
}

// finish marks transition n handled and lets the confirmed position move.
func (r *Runner) finish(n int64) {
	// out is in submission order: n grows.
	i := sort.Search(len(r.out), func(i int) bool { return r.out[i].n >= n })
	if i == len(r.out) || r.out[i].n != n {
		return
	}
	if id := r.out[i].stale; id != "" {
		r.stale = append(r.stale, id)
		if len(r.stale) > watch.MaxStaleIDs {
			r.stale = r.stale[len(r.stale)-watch.MaxStaleIDs:]
		}
	}
	r.out = slices.Delete(r.out, i, i+1)
	r.signal()
}

// run runs the command for one transition.
func (r *Runner) run(j *job) {
	defer r.wg.Done()
	t := j.t
	cmd := exec.Command("sh", "-c", r.o.Command)
	cmd.Env = append(append([]string(nil), r.o.Env...), envOf(t, j.coalesced)...)
	cmd.Stdin = bytes.NewReader(append(t.JSON(), '\n'))
	cmd.Stdout, cmd.Stderr = r.o.Stdout, r.o.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	what := fmt.Sprintf("the command for %s %s → %s (event %s)", t.Key, orUnknown(t.Previous), t.State, t.EventID)
	var timedOut, stopped bool
	err := cmd.Start()
	if err == nil {
		done, watched := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(watched)
			var limit <-chan time.Time
			if r.o.Timeout > 0 {
				tm := time.NewTimer(r.o.Timeout)
				defer tm.Stop()
				limit = tm.C
			}
			select {
			case <-done:
				return
			case <-limit:
				timedOut = true
			case <-r.ctx.Done():
				stopped = true
			}
			syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(r.o.KillAfter):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
		}()
		err = cmd.Wait()
		close(done)
		<-watched
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running--
	var ee *exec.ExitError
	switch {
	case stopped:
		// The watcher is stopping: not handled, so not confirmed.
		return
	case timedOut:
		r.counts.TimedOut++
		r.o.Say(fmt.Sprintf("%s timed out after %s (--exec-timeout): its process group was sent SIGTERM", what, r.o.Timeout))
	case errors.As(err, &ee):
		r.counts.Failed++
		r.o.Say(fmt.Sprintf("%s %s", what, exitText(ee)))
	case err != nil:
		r.counts.Failed++
		r.o.Say(fmt.Sprintf("%s could not be run: %v", what, err))
	default:
		r.counts.Ran++
	}
	r.finish(j.n)
	r.dispatch()
}

func exitText(ee *exec.ExitError) string {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "was killed by " + ws.Signal().String()
	}
	return "exited " + strconv.Itoa(ee.ExitCode())
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// envOf is the LCWRAP_WATCH_ variables of a transition.
func envOf(t *watch.Transition, coalesced int) []string {
	kv := func(k, v string) string {
		v = strings.ReplaceAll(v, "\x00", "")
		if len(v) > maxEnvValue {
			v = v[:maxEnvValue]
		}
		return k + "=" + v
	}
	env := []string{
		kv(EnvChildID, t.ChildID), kv(EnvState, t.State), kv(EnvPrevious, t.Previous),
		kv(EnvActivity, t.Activity()), kv(EnvSource, t.Source), kv(EnvHost, t.Host),
		kv(EnvEventID, t.EventID), kv(EnvObservedAt, t.ObservedAt), kv(EnvWaitingFor, string(t.WaitingFor)),
		kv(EnvCoalesced, strconv.Itoa(coalesced)),
	}
	if t.Exit != nil && t.Exit.Code != nil {
		env = append(env, kv(EnvExitCode, strconv.Itoa(*t.Exit.Code)))
	}
	return env
}

// Close stops taking transitions, lets the running commands end until
// grace has passed (then stops them: not handled, not confirmed) and
// returns. Transitions still held or queued are not run: they are not
// confirmed, so a watcher restarted from its cursor hands them on again.
func (r *Runner) Close(grace time.Duration) {
	r.mu.Lock()
	r.closing = true
	for k, j := range r.held {
		j.held.Stop()
		delete(r.held, k)
	}
	r.queue = nil
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		r.cancel()
		<-done
	}
	r.cancel()
}

// Idle reports whether nothing is held, queued or running.
func (r *Runner) Idle() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running == 0 && len(r.queue) == 0 && len(r.held) == 0
}
