package codex

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// ProvePoll is how often a Follower looks for the rollout until it is
// proven: interactive codex opens it at the first prompt.
const ProvePoll = 250 * time.Millisecond

// followPoll is how often a proven rollout is read for new lines.
const followPoll = 100 * time.Millisecond

// Follower proves which rollout file is the session of one process tree
// (the process lcwrap launched or adopted) and follows it into a Tracker.
// Without proof it records nothing about a session: the run stays at
// process level. Safe for concurrent use.
type Follower struct {
	// OnProof, when set before Start, is called once with the proof,
	// before the rollout's first line is read.
	OnProof func(Proof)

	tracker *agent.Tracker
	apply   func(agent.Outcome) error // the tracker's, or the run's gate

	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	proof   *Proof
	last    error          // why the last attempt proved nothing
	refused map[string]int // refusals other than ErrNotYet, by reason
	leaders map[int]daemon // descendants in sessions of their own
	readErr error          // the rollout could not be read
	rootID  event.Identity
}

// daemon is a descendant that runs in a session of its own (setsid), as
// codex's app-server does: lcwrap's leftover report, which looks at the
// launched process's group, cannot see it.
type daemon struct {
	id      event.Identity
	command string
}

// NewFollower returns a Follower writing to tracker.
func NewFollower(tracker *agent.Tracker) *Follower {
	return &Follower{tracker: tracker, apply: tracker.Apply, refused: map[string]int{}, leaders: map[int]daemon{}}
}

// Start begins proving and following for the tree under root; call it
// once, when root has started.
func (f *Follower) Start(root event.Identity) {
	ctx, cancel := context.WithCancel(context.Background())
	f.mu.Lock()
	if f.done != nil {
		f.mu.Unlock()
		cancel()
		return
	}
	f.cancel, f.done, f.rootID = cancel, make(chan struct{}), root
	f.mu.Unlock()
	go func() {
		defer close(f.done)
		f.run(ctx, root)
	}()
}

// Stop ends proving and following: what the rollout holds by now is read,
// and no evidence arrives after Stop returns.
func (f *Follower) Stop() {
	f.mu.Lock()
	cancel, done := f.cancel, f.done
	f.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

func (f *Follower) run(ctx context.Context, root event.Identity) {
	t := time.NewTicker(ProvePoll)
	defer t.Stop()
	for {
		p, tree, err := proveTree(root)
		f.noteDaemons(root, tree)
		if err == nil {
			f.follow(ctx, p)
			return
		}
		f.mu.Lock()
		f.last = err
		if !errors.Is(err, ErrNotYet) {
			f.refused[refusalKind(err)]++
		}
		f.mu.Unlock()
		if errors.Is(err, ErrRootGone) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// follow reads the proven rollout from its first line until ctx is done.
func (f *Follower) follow(ctx context.Context, p Proof) {
	f.mu.Lock()
	f.proof = &p
	f.mu.Unlock()
	if f.OnProof != nil {
		f.OnProof(p)
	}
	r := &RolloutReader{Thread: p.ThreadID}
	first := true
	lines := NewLines(func(b []byte) {
		out := r.Line(b)
		if first && len(out.Observations) == 1 && out.Observations[0].Kind == agent.SessionStarted {
			out.Observations[0].Facts.RolloutProof = p.Facts()
		}
		first = false
		f.apply(out)
	})
	err := Follow(ctx, p.Path, followPoll, lines)
	if lines.Partial() {
		f.apply(agent.Unrecognize(p.ThreadID, "(unterminated last line)"))
	}
	for range lines.Oversized {
		f.apply(agent.Unrecognize(p.ThreadID, "(line over 1 MiB)"))
	}
	if err != nil {
		f.mu.Lock()
		f.readErr = err
		f.mu.Unlock()
	}
}

// noteDaemons records the tree's processes that lead a session of their
// own (setsid'd daemons), while they are still visibly descendants.
func (f *Follower) noteDaemons(root event.Identity, tree map[int]event.ProcInfo) {
	for pid, info := range tree {
		if pid == root.PID || info.SID != pid || tree[root.PID].SID == pid {
			continue
		}
		f.mu.Lock()
		_, seen := f.leaders[pid]
		f.mu.Unlock()
		if seen {
			continue
		}
		id, _, err := event.IdentityOf(event.System, pid)
		if err != nil || id.StartTime != info.StartTime {
			continue
		}
		argv, _ := event.Cmdline(pid)
		f.mu.Lock()
		f.leaders[pid] = daemon{id: id, command: oneLine(strings.Join(argv, " "))}
		f.mu.Unlock()
	}
}

// refusalKind names a refusal for the counts (its sentinel's text).
func refusalKind(err error) string {
	for _, e := range []error{ErrAmbiguous, ErrShared, ErrMismatch, ErrUnsupported} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	return "error: " + oneLine(err.Error())
}

// Report says what the Follower proved or why it proved nothing, and
// which of the tree's daemons outlived it, for the launched (or adopted)
// process's terminal event. Call it after Stop.
func (f *Follower) Report() CodexRollout {
	f.mu.Lock()
	defer f.mu.Unlock()
	var r CodexRollout
	switch {
	case f.proof != nil:
		r.Rollout = "followed"
		pr := f.proof.Typed()
		r.Proof = &pr
		if f.readErr != nil {
			r.ReadError = f.readErr.Error()
		}
	default:
		r.Rollout = "not followed"
		r.Note = "no rollout file was proven to be this process's (held open by it or a descendant serving no one else); the run is reported at process level only"
		if f.last != nil {
			r.LastCheck = f.last.Error()
		}
	}
	if len(f.refused) > 0 {
		r.Refusals = agent.IntMap(f.refused)
	}
	pids := make([]int, 0, len(f.leaders))
	for pid := range f.leaders {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	for _, pid := range pids {
		d := f.leaders[pid]
		if event.CheckIdentity(event.System, d.id).Status != event.Alive {
			continue
		}
		r.Daemons = append(r.Daemons, CodexDaemon{Process: d.id, Command: d.command, OwnSession: true,
			Note: "a descendant that runs in a session of its own (setsid) and outlived the launched process; lcwrap's leftover report, which looks at the launched process's group, does not include it"})
	}
	return r
}

// Proven returns the proof, once there is one.
func (f *Follower) Proven() (Proof, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.proof == nil {
		return Proof{}, false
	}
	return *f.proof, true
}
