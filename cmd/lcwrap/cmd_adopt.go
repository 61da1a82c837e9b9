package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"
	"golang.org/x/sync/errgroup"
	"golang.org/x/term"

	"github.com/lcwrap/lcwrap/internal/adopt"
	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/redact"
	"github.com/lcwrap/lcwrap/internal/supervise"
)

// minPoll is the least --poll: a look reads the process table, and a
// shorter wait would make adopt a busy loop.
const minPoll = 10 * time.Millisecond

func adoptCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:      "adopt",
		Usage:     "observe processes lcwrap did not start (presence only; never signals them)",
		ArgsUsage: "PID [PID...] | --agent NAME [URL...]",
		Description: "Records each process's identity (pid and start time) and command line, then\n" +
			"waits for it to go away and records it as lost: its exit status, history,\n" +
			"state, heartbeat and cancellation are unknown to an observer. lcwrap never\n" +
			"sends the process a signal; Ctrl-C stops the observation only.\n\n" +
			"An agent lcwrap knows (--agent, or recognised by its name) is followed\n" +
			"through its own evidence too. With --agent NAME and no PID, lcwrap asks that\n" +
			"integration for every session the agent's own registry lists; with a URL\n" +
			"(http:// or https://), for a running agent server's event stream. An\n" +
			"integration that cannot follow one of these says so, and lcwrap exits 1.",
		Flags: append(writerFlags(),
			&cli.StringSliceFlag{Name: "pid-file", Usage: "adopt the process whose id is in `PATH` (repeatable)"},
			&cli.StringFlag{Name: "child-id", Usage: "childId to record (only with a single PID; default: generated from the command name)"},
			&cli.StringFlag{Name: "parent-child-id", Sources: cli.EnvVars(supervise.EnvChildID), Usage: "lineage parentChildId (set by an enclosing lcwrap run)"},
			&cli.StringFlag{Name: "root-child-id", Sources: cli.EnvVars(supervise.EnvRootChildID), Usage: "lineage rootChildId (default: set by an enclosing lcwrap run, else the childId)"},
			&cli.DurationFlag{Name: "poll", Value: adopt.DefaultPoll, Usage: "how often to look where the kernel offers no pidfd to wait on (at least 10ms)"},
			&cli.StringFlag{Name: "watch", Value: "auto", Hidden: true, Usage: "auto (pidfd where available) or poll"},
			cloneFlags([]cli.Flag{agentFlagDef})[0],
		),
		Action: func(ctx context.Context, cmd *cli.Command) error { return adoptAction(ctx, cmd, std) },
	}
}

// stopped is why observation ended early: lcwrap adopt got a signal.
type stopped struct{ sig syscall.Signal }

func (s *stopped) Error() string { return "lcwrap adopt received " + signalName(s.sig) }

func signalName(s syscall.Signal) string {
	if s == syscall.SIGINT {
		return "SIGINT"
	}
	return "SIGTERM"
}

func adoptAction(ctx context.Context, cmd *cli.Command, std stdio) error {
	agentName, err := adoptAgentName(cmd)
	if err != nil {
		return err
	}
	pids, urls, err := adoptArgs(cmd, agentName)
	if err != nil {
		return err
	}
	childID := cmd.String("child-id")
	switch {
	case childID != "" && len(urls) > 0:
		return usagef(cmd, "--child-id names one adopted process; a server's sessions have ids of their own")
	case childID != "" && len(pids) != 1:
		return usagef(cmd, "--child-id names one lifecycle; it needs exactly one PID, not %d", len(pids))
	}
	watch, err := adopt.ParseWatch(cmd.String("watch"))
	if err != nil {
		return usagef(cmd, "--watch %v", err)
	}
	if cmd.Duration("poll") <= 0 {
		return usagef(cmd, "--poll must be a positive duration, like 250ms")
	}
	if cmd.Duration("poll") < minPoll {
		return usagef(cmd, "--poll %v is too often: give at least %v (each look reads the process table)", cmd.Duration("poll"), minPoll)
	}
	opts := adopt.Options{Watch: watch, Poll: cmd.Duration("poll")}

	// Signals end the observation; they never reach the adopted processes.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case s := <-sigs:
			cancel(&stopped{sig: s.(syscall.Signal)})
		case <-ctx.Done():
		}
	}()

	sinks, err := openSinks(cmd, std)
	if err != nil {
		return err
	}
	em := emit.New(emit.Options{Source: cmd.String("source"), OnSinkError: sinkWarning(std)}, sinks.Sinks(std, true)...)
	defer em.Close()
	lineage := event.Lineage{ParentChildID: cmd.String("parent-child-id"), RootChildID: cmd.String("root-child-id")}
	tty := isTerminal(std.err)

	failed := false
	var g errgroup.Group
	// The agent's own sessions beside the processes named: those of the
	// servers named, or, with nothing named, every one its registry lists.
	type agentTarget struct {
		t    agent.Target
		what string // for messages
	}
	var targets []agentTarget
	for _, u := range urls {
		targets = append(targets, agentTarget{agent.ServerTarget{URL: u, Lineage: lineage}, redact.Text(u)})
	}
	if len(pids) == 0 && len(urls) == 0 {
		targets = append(targets, agentTarget{agent.RegistryTarget{Lineage: lineage}, "--agent " + agentName + " with no PID"})
	}
	for _, t := range targets {
		a := adoptAgentTarget(ctx, cmd, std, em, agentName, t.t, t.what)
		if a == nil {
			failed = true
			continue
		}
		g.Go(func() error {
			followAdoption(ctx, a)
			return nil
		})
	}
	for _, pid := range pids {
		if ctx.Err() != nil {
			break // a signal came first: adopt nothing more
		}
		p, err := adopt.Open(pid, opts)
		if err != nil {
			fmt.Fprintf(std.err, "lcwrap: %v%s\n", err, adoptHint(err))
			failed = true
			continue
		}
		c, err := p.Record(em, childID, lineage)
		if err != nil {
			p.Close()
			fmt.Fprintf(std.err, "lcwrap: pid %d: %v\n", pid, err)
			failed = true
			continue
		}
		if tty {
			fmt.Fprintf(std.err, "lcwrap: adopted pid %d (%s) as %s; observing its presence only\n", pid, p.Name(), c.ID())
		}
		ag := adoptAgent(ctx, cmd, std, em, p, c, tty)
		g.Go(func() error {
			defer p.Close()
			_, err := p.Follow(ctx, c)
			if ag != nil {
				ag.End(err == nil)
			}
			var s *stopped
			switch {
			case err == nil:
				if tty {
					fmt.Fprintf(std.err, "lcwrap: pid %d exited; exit status unknown (adopted)\n", pid)
				}
			case errors.As(err, &s):
				if tty {
					fmt.Fprintf(std.err, "lcwrap: pid %d: observation ended; state unknown\n", pid)
				}
			default:
				fmt.Fprintf(std.err, "lcwrap: pid %d: observation ended; state unknown: %v\n", pid, err)
			}
			return err
		})
	}
	err = g.Wait()
	if s := (*stopped)(nil); errors.As(context.Cause(ctx), &s) {
		return exitCode(128+int(s.sig), "")
	}
	if failed || err != nil {
		return exitCode(1, "")
	}
	return nil
}

// adoptArgs reads the PID arguments and --pid-file values (each a process
// id, none twice) and the server URLs (http:// or https://), which need
// the agent named. With the agent named (agentName not auto), naming
// nothing asks for every session of its registry.
func adoptArgs(cmd *cli.Command, agentName string) (pids []int, urls []string, err error) {
	seen := map[int]bool{}
	add := func(pid int) error {
		if seen[pid] {
			return usagef(cmd, "pid %d is given twice; name each process once", pid)
		}
		seen[pid] = true
		pids = append(pids, pid)
		return nil
	}
	named := agentName != "" && agentName != agentAuto
	for _, a := range cmd.Args().Slice() {
		if strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "https://") {
			if !named {
				return nil, nil, usagef(cmd, "%s: name the agent whose server it is: --agent %s", redact.Text(a), strings.Join(agentNames()[2:], "|"))
			}
			urls = append(urls, a)
			continue
		}
		pid, err := adopt.ParsePID(a)
		if err == nil {
			err = add(pid)
		}
		if err != nil {
			return nil, nil, usagef(cmd, "%v", err)
		}
	}
	for _, path := range cmd.StringSlice("pid-file") {
		pid, err := adopt.ReadPIDFile(path)
		if err != nil {
			return nil, nil, usagef(cmd, "--pid-file: %v", err)
		}
		if err := add(pid); err != nil {
			return nil, nil, err
		}
	}
	if len(pids) == 0 && len(urls) == 0 && !named {
		return nil, nil, usagef(cmd, "name the processes to observe: lcwrap adopt PID [PID...] or --pid-file PATH")
	}
	return pids, urls, nil
}

// adoptHint says what to do about a pid that could not be adopted.
func adoptHint(err error) string {
	switch {
	case errors.Is(err, event.ErrPermission):
		return " (run lcwrap as the process's user, or as root)"
	case errors.Is(err, event.ErrNoProcess):
		return " (check the pid; the process may have ended already)"
	}
	return ""
}

// isTerminal reports whether w is a terminal (human lines go only there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth returns w's width in columns when it is a terminal, else
// 0.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return cols
}
