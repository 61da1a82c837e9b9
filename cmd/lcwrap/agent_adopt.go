package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/adopt"
	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/agent/claudecode"
	"github.com/lcwrap/lcwrap/internal/emit"
)

// registryPoll is how often an adopted agent's own registry is read again.
const registryPoll = 500 * time.Millisecond

// adoptedAgent follows an adopted agent's own evidence: for claude, its
// pid registry, when it proves which session that process runs.
type adoptedAgent struct {
	tracker *agent.Tracker
	reg     *claudecode.Registry
	childID string
	stop    chan struct{}
	done    chan struct{}
}

// adoptAgent looks for the evidence that an adopted process is an agent
// lcwrap can follow. It returns nil (the process stays PID-only) when
// --agent none, when the process is no agent lcwrap knows, or when no
// file of the agent's own proves which session it runs; it says which on
// a terminal.
func adoptAgent(cmd *cli.Command, std stdio, em *emit.Emitter, p *adopt.Process, c *emit.Child, tty bool) *adoptedAgent {
	name := cmd.String("agent")
	if name == agent.SelectNone || name != agent.SelectAuto && name != claudecode.Source {
		return nil
	}
	id := p.Identity()
	if name == agent.SelectAuto && p.Name() != "claude" {
		return nil
	}
	say := func(format string, args ...any) {
		if tty {
			fmt.Fprintf(std.err, "lcwrap: pid %d: "+format+"\n", append([]any{id.PID}, args...)...)
		}
	}
	if id.Clock != "" {
		say("its start time is not in clock ticks here, so Claude Code's pid registry cannot be matched; observing its presence only")
		return nil
	}
	reg, err := claudecode.FindRegistry(id.PID, id.StartTime, claudecode.RegistryDirs(id.PID))
	if err != nil {
		say("claude, but no file of its own proves which session it runs (%v); observing its presence only", err)
		return nil
	}
	if jp, err := journalPath(cmd); err == nil {
		state := filepath.Join(agent.StateDir(jp, claudecode.Source), reg.SessionID+".json")
		if _, err := os.Stat(state); err == nil {
			say("session %s is recorded by a hook you installed; not recorded twice", reg.SessionID)
			return nil
		}
	}
	lin := c.Lineage()
	tr := agent.New(agent.Config{
		Source: claudecode.Source, Prefix: claudecode.ChildPrefix, Limits: claudecode.RegistryLimits,
		Emitter: em.WithSource(claudecode.Source), Parent: c.ID(), Root: firstSet(lin.RootChildID, c.ID()),
		External: true, RunTag: runTag(c.ID()),
	})
	tr.Apply(agent.Observe(claudecode.RegistryObservations(reg, true)...))
	say("Claude Code's pid registry (%s) names session %s: following it", reg.Path, reg.SessionID)
	a := &adoptedAgent{tracker: tr, reg: reg, childID: c.ID(), stop: make(chan struct{}), done: make(chan struct{})}
	go a.follow()
	return a
}

// follow reads the registry again until stopped, recording status changes.
func (a *adoptedAgent) follow() {
	defer close(a.done)
	t := time.NewTicker(registryPoll)
	defer t.Stop()
	last := a.reg.Status
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
		r, err := claudecode.ReadRegistry(a.reg.Path)
		if err != nil || r.PID != a.reg.PID || r.ProcStart != a.reg.ProcStart || r.SessionID != a.reg.SessionID {
			continue // gone (the process is ending) or another's: nothing to follow
		}
		if r.Status != last {
			last = r.Status
			a.tracker.Apply(agent.Observe(claudecode.RegistryObservations(r, false)...))
		}
	}
}

// end is called once the adopted process is gone: the session still open
// becomes lost, once.
func (a *adoptedAgent) end(exited bool) {
	if a == nil {
		return
	}
	close(a.stop)
	<-a.done
	if exited {
		a.tracker.End(agent.ProcessEnd{ChildID: a.childID, Adopted: true})
	}
}
