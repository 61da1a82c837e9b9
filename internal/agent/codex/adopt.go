package codex

import (
	"context"
	"sync"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
)

// Adopt implements agent.Driver. A process (agent.PIDTarget) whose command
// line runs codex with session evidence (ProcessMode) is followed where
// its own files prove which session is that process's (Prove: a rollout
// it, or a descendant serving no one else, holds open); until there is
// proof the adoption stays at the process. Its outcomes: the Adoption;
// agent.ErrNotAgent for any other process (whether or not the user named
// the agent: the proof needs codex's command line); an
// *agent.UnsupportedError for the other shapes.
func (Driver) Adopt(_ context.Context, req agent.AdoptRequest) (agent.Adoption, error) {
	t, ok := req.Target.(agent.PIDTarget)
	if !ok {
		return nil, agent.NotSupported(Source, req.Target)
	}
	if ProcessMode(t.Argv) == ModeNone {
		return nil, agent.ErrNotAgent
	}
	tr := t.Tracker(req.Emitter, Source, ChildPrefix, Limits)
	f := NewFollower(tr)
	c := t.Child
	f.OnProof = func(pr Proof) {
		proof := pr.Typed()
		c.Emit(emit.Spec{Kind: event.KindDiagnostic, Details: RolloutProven{
			Agent: Source, Proof: &proof,
			Message: "this process's codex session is proven by the rollout file it (or a descendant serving no one else) holds open; the session is followed as a child of this one",
		}})
	}
	f.Start(t.Identity)
	return &adopted{tracker: tr, f: f, childID: c.ID()}, nil
}

// adopted is an adopted codex being followed.
type adopted struct {
	tracker *agent.Tracker
	f       *Follower
	childID string
	once    sync.Once
}

// Done implements agent.Adoption: the caller watches the process.
func (a *adopted) Done() <-chan struct{} { return nil }

// End implements agent.Adoption.
func (a *adopted) End(gone bool) {
	a.once.Do(func() {
		a.f.Stop()
		if gone {
			a.tracker.End(agent.ProcessEnd{ChildID: a.childID, Adopted: true})
		}
	})
}
