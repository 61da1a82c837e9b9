package main

import (
	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/adopt"
	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/agent/codex"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
)

// adoptCodex follows an adopted codex process's session where its own
// files prove which session is that process's (codex.Prove: a rollout it,
// or a descendant serving no one else, holds open); for any other
// process, and until there is proof, the adoption stays PID-only. It
// returns what to call when observation ends: gone says the process
// ended (its open sessions then end lost), else observation stopped and
// they are left as they are.
func adoptCodex(cmd *cli.Command, em *emit.Emitter, c *emit.Child, p *adopt.Process) (end func(gone bool)) {
	none := func(bool) {}
	if name := cmd.String("agent"); name != agent.SelectAuto && name != codex.Source {
		return none
	}
	argv, err := event.Cmdline(p.Identity().PID)
	if err != nil || codex.ProcessMode(argv) == codex.ModeNone {
		return none
	}
	lin := c.Lineage()
	tr := agent.New(agent.Config{
		Source: codex.Source, Emitter: em.WithSource(codex.Source), Prefix: (codex.Driver{}).ChildPrefix(),
		Parent: c.ID(), Root: firstSet(lin.RootChildID, c.ID()), RunTag: runTag(c.ID()),
		External: true, Limits: codex.Limits,
	})
	f := codex.NewFollower(tr)
	f.OnProof = func(pr codex.Proof) {
		proof := pr.Typed()
		c.Emit(emit.Spec{Kind: event.KindDiagnostic, Details: codex.RolloutProven{
			Agent: codex.Source, Proof: &proof,
			Message: "this process's codex session is proven by the rollout file it (or a descendant serving no one else) holds open; the session is followed as a child of this one",
		}})
	}
	f.Start(p.Identity())
	return func(gone bool) {
		f.Stop()
		if gone {
			tr.End(agent.ProcessEnd{ChildID: c.ID(), Adopted: true})
		}
	}
}
