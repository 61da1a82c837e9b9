package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/adopt"
	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
)

// adoptAgentName checks --agent for adopt: "" for none, else the driver
// it names or auto.
func adoptAgentName(cmd *cli.Command) (string, error) {
	switch name := cmd.String("agent"); name {
	case agentNone:
		return "", nil
	case agentAuto, "":
		return agentAuto, nil
	default:
		if agentDriver(name) == nil {
			return "", usagef(cmd, "--agent %q: choose one of %s", name, strings.Join(agentNames(), ", "))
		}
		return name, nil
	}
}

// adoptAgent looks for an agent's own evidence about an adopted process:
// the driver --agent names, else the one the process's name suggests. It
// returns nil, and the process stays presence-only, when there is no
// agent to look for, when the process is not that agent's, or when none of
// the agent's own evidence can be followed (said on a terminal).
func adoptAgent(ctx context.Context, cmd *cli.Command, std stdio, em *emit.Emitter, p *adopt.Process, c *emit.Child, tty bool) agent.Adoption {
	name, _ := adoptAgentName(cmd) // checked before anything was adopted
	if name == "" {
		return nil
	}
	pid := p.Identity().PID
	argv, _ := event.Cmdline(pid)
	named := name != agentAuto
	if !named {
		if name = agentByName(argv); name == "" {
			name = agentByName([]string{p.Name()})
		}
	}
	d := agentDriver(name)
	if d == nil {
		return nil
	}
	say := func(line string) {
		if tty {
			fmt.Fprintf(std.err, "lcwrap: pid %d: %s\n", pid, line)
		}
	}
	jp, _ := journalPath(cmd)
	a, err := d.Adopt(ctx, agent.AdoptRequest{
		Target:  agent.PIDTarget{Identity: p.Identity(), Name: p.Name(), Argv: argv, Named: named, Child: c},
		Emitter: em, Journal: jp, Say: say,
	})
	if err != nil {
		if !errors.Is(err, agent.ErrNotAgent) {
			say(err.Error())
		}
		return nil
	}
	return a
}

// adoptAgentTarget asks the driver name for an adoption with no process
// named (every session of its registry, a server's stream); what it
// cannot follow is one line, naming what to do instead.
func adoptAgentTarget(ctx context.Context, cmd *cli.Command, std stdio, em *emit.Emitter, name string, t agent.Target, what string) agent.Adoption {
	jp, _ := journalPath(cmd)
	a, err := agentDriver(name).Adopt(ctx, agent.AdoptRequest{
		Target: t, Emitter: em, Journal: jp,
		Say: func(line string) { fmt.Fprintf(std.err, "lcwrap: %s: %s\n", what, line) },
	})
	var u *agent.UnsupportedError
	switch {
	case errors.As(err, &u):
		fmt.Fprintf(std.err, "lcwrap: %s: the %s integration cannot follow %s (not supported by this driver); adopt its processes by pid: lcwrap adopt --agent %s PID\n", what, u.Agent, u.Shape, u.Agent)
	case err != nil:
		fmt.Fprintf(std.err, "lcwrap: %s: %v\n", what, err)
	}
	return a
}

// followAdoption follows an adoption with no process of lcwrap's own to
// watch until it ends by itself (gone) or observation stops (ctx).
func followAdoption(ctx context.Context, a agent.Adoption) {
	select {
	case <-a.Done():
		a.End(true)
	case <-ctx.Done():
		a.End(false)
	}
}
