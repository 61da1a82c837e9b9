package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/exitcode"
	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/termtext"
	"github.com/lcwrap/lcwrap/internal/view"
	"github.com/lcwrap/lcwrap/internal/watch"
)

func waitCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:      "wait",
		Usage:     "block until children end, or reach a state",
		ArgsUsage: "[CHILD]...",
		Description: "Blocks until the named children (or, without names, the open children the\n" +
			"selectors pick when it starts) meet the condition: --for terminal (the\n" +
			"default: ended, however), --for STATE, or --for stale. It reads the journal's\n" +
			"history first (a child that meets it already counts at once), then follows\n" +
			"it as it grows (inotify: no polling), through rotation and quarantine. A\n" +
			"named child with no events yet is waited for. It prints the final row of\n" +
			"each child (--json: one object per child, with \"wait\": met, unmet, pending\n" +
			"or never-appeared). --exit-code (one CHILD, --for terminal) exits with the\n" +
			"child's own exit code, 128+N for a signal N, and 123 when lcwrap does not\n" +
			"know it (an adopted process, a lost child) — never 0 for an unknown; a\n" +
			"child's own 124 then looks like wait's timeout: --json tells them apart.",
		Flags: []cli.Flag{
			journalFlags()[0],
			&cli.StringFlag{Name: "for", Value: string(watch.ForTerminal), Usage: "the condition: terminal, stale, or a `STATE` (created, starting, running, waiting, completed, failed, cancelled, lost)"},
			&cli.BoolFlag{Name: "all", Usage: "every child must meet it (the default)"},
			&cli.BoolFlag{Name: "any", Usage: "one child meeting it is enough"},
			&cli.DurationFlag{Name: "timeout", Usage: "give up after `D` (exit 124); 0 waits forever"},
			&cli.BoolFlag{Name: "exit-code", Usage: "with one CHILD and --for terminal: exit with the child's own exit code"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object per child instead of the table"},
			&cli.StringFlag{Name: "source", Usage: "without CHILD: the open children of lifecycle source `NAME`"},
			&cli.StringFlag{Name: "state", Usage: "without CHILD: the children in one of these `STATES` (comma-separated) when wait starts"},
			fleetFlag(), silentAfterFlag(),
			&cli.StringFlag{Name: "host", Usage: "with --fleet: children of host `NAME` only"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error { return waitAction(ctx, cmd, std) },
	}
}

// errWaitDone stops the follower once the waiting is over.
var errWaitDone = errors.New("done")

func waitAction(ctx context.Context, cmd *cli.Command, std stdio) error {
	cond, err := watch.ParseCondition(cmd.String("for"))
	if err != nil {
		return usagef(cmd, "--for: %v", err)
	}
	named := cmd.Args().Slice()
	w := &watch.Wait{For: cond, Any: cmd.Bool("any"), Named: named, Select: watch.Select{Source: cmd.String("source"), Host: cmd.String("host")}}
	if s := cmd.String("state"); s != "" {
		states, err := watch.ParseStates(s)
		if err != nil || containsStale(states) {
			return usagef(cmd, "--state: %v", orStale(err))
		}
		for _, st := range states {
			w.Select.State = append(w.Select.State, event.State(st))
		}
	}
	timeout := cmd.Duration("timeout")
	switch {
	case cmd.Bool("all") && cmd.Bool("any"):
		return usagef(cmd, "--all and --any contradict each other; choose one")
	case len(named) > 0 && (cmd.IsSet("source") || cmd.IsSet("state")):
		return usagef(cmd, "name children or select them with --source/--state, not both")
	case cmd.IsSet("host") && !cmd.IsSet("fleet"):
		return usagef(cmd, "--host applies to --fleet only")
	case timeout < 0:
		return usagef(cmd, "--timeout must be 0 or more, not %s", timeout)
	case cmd.Bool("exit-code") && len(named) != 1:
		return usagef(cmd, "--exit-code gives one child's exit code: name exactly one CHILD")
	case cmd.Bool("exit-code") && cond != watch.ForTerminal:
		return usagef(cmd, "--exit-code applies to --for terminal (a child's exit code is known once it ends)")
	}
	for _, id := range named {
		if id == "" {
			return usagef(cmd, "an empty CHILD id")
		}
	}
	o := watch.Options{Stale: cond == watch.StateStale, OnNotice: func(n watch.Notice) { fmt.Fprintf(std.err, "lcwrap: %s\n", oneLine(n.Text)) }}
	input, closeInput, err := watchInput(cmd, std, &o)
	if err != nil {
		return err
	}
	defer closeInput()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	f := watch.New(o)
	code := 0
	check := func() error {
		if done, c := w.Done(); done {
			code = c
			return errWaitDone
		}
		return nil
	}
	err = f.Run(ctx, watch.Handler{
		Transition: func(t *watch.Transition) error {
			w.Observe(t)
			return check()
		},
		CaughtUp: func() error {
			if err := w.Start(f); err != nil {
				if w.Select.Source == "" && len(w.Select.State) == 0 && w.Select.Host == "" && len(named) == 0 {
					// Bare 'lcwrap wait', as the shell's wait with no jobs.
					fmt.Fprintf(std.err, "lcwrap: no open child in %s: nothing to wait for\n", termtext.Line(input))
					return errWaitDone
				}
				return exitCode(exitcode.Failed, "%s%s in %s: nothing to wait for", err, selectorText(w.Select), input)
			}
			return check()
		},
	})
	switch {
	case errors.Is(err, errWaitDone):
	case errors.Is(err, context.DeadlineExceeded):
		if perr := printWait(std, w, cmd.Bool("json"), o.Fleet != nil); perr != nil {
			return perr
		}
		return exitCode(exitcode.Timeout, "%s", timeoutText(w, timeout, input))
	case err != nil:
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		return exitCode(exitcode.Failed, "wait: %v", err)
	}
	if err := printWait(std, w, cmd.Bool("json"), o.Fleet != nil); err != nil {
		return err
	}
	if code == exitcode.Unmet {
		return exitCode(code, "%s", unmetText(w))
	}
	if cmd.Bool("exit-code") {
		return exitCode(watch.ExitCode(w.Entries()[0]), "")
	}
	return nil
}

func containsStale(states []string) bool {
	for _, s := range states {
		if s == watch.StateStale {
			return true
		}
	}
	return false
}

func orStale(err error) error {
	if err != nil {
		return err
	}
	return errors.New("stale is no state to select by; use --for stale")
}

func selectorText(s watch.Select) string {
	var parts []string
	if s.Source != "" {
		parts = append(parts, "of source "+s.Source)
	}
	if len(s.State) > 0 {
		var names []string
		for _, st := range s.State {
			names = append(names, string(st))
		}
		parts = append(parts, "in state "+strings.Join(names, " or "))
	}
	if s.Host != "" {
		parts = append(parts, "on host "+s.Host)
	}
	if len(parts) == 0 {
		return ": no open child"
	}
	return " " + strings.Join(parts, ", ")
}

// waitRow is one child of `lcwrap wait --json`.
type waitRow struct {
	Wait    watch.Status `json:"wait"`
	Host    string       `json:"host,omitempty"`
	ChildID string       `json:"childId"`
	*projection.ChildView
}

// printWait prints the final row of each child.
func printWait(std stdio, w *watch.Wait, asJSON, fleet bool) error {
	entries := w.Entries()
	if asJSON {
		enc := json.NewEncoder(std.out)
		enc.SetEscapeHTML(false)
		for _, e := range entries {
			if err := enc.Encode(waitRow{Wait: e.Status, Host: e.Key.Host, ChildID: e.Key.ChildID, ChildView: e.View}); err != nil {
				return err
			}
		}
		return nil
	}
	rep := projection.Report{Evidence: true}
	for _, e := range entries {
		if e.View == nil {
			continue
		}
		v := *e.View
		if fleet {
			v.ChildID = e.Key.String()
		}
		rep.Children = append(rep.Children, v)
	}
	if len(rep.Children) == 0 {
		return nil
	}
	return view.Table(std.out, rep, view.TableOptions{Width: terminalWidth(std.out), Color: isTerminal(std.out), Now: time.Now()})
}

// counted says how many of the entries have each status.
func counted(w *watch.Wait) (met int, missing, unmet []string) {
	for _, e := range w.Entries() {
		switch e.Status {
		case watch.Met:
			met++
		case watch.Missing:
			missing = append(missing, termtext.Line(e.Key.String()))
		case watch.Unmet:
			unmet = append(unmet, termtext.Line(e.Key.String())+" ended "+string(*e.View.State))
		}
	}
	return met, missing, unmet
}

func timeoutText(w *watch.Wait, d time.Duration, input string) string {
	met, missing, _ := counted(w)
	s := fmt.Sprintf("timed out after %s: %d of %d children met --for %s", d, met, len(w.Entries()), w.For)
	if len(missing) > 0 {
		s += fmt.Sprintf("; never appeared in %s: %s", input, strings.Join(missing, ", "))
	}
	return s
}

func unmetText(w *watch.Wait) string {
	_, _, unmet := counted(w)
	return fmt.Sprintf("ended without meeting --for %s: %s", w.For, strings.Join(unmet, ", "))
}

// watchInput sets what o follows from --fleet or --journal (the journal's
// trust warned about on stderr) and returns its path, and what closes it.
func watchInput(cmd *cli.Command, std stdio, o *watch.Options) (string, func(), error) {
	if cmd.IsSet("fleet") {
		if cmd.IsSet("journal") {
			return "", nil, usagef(cmd, "--fleet and --journal name two inputs; choose one")
		}
		input := cmd.String("fleet")
		r, f, err := fleetRead(cmd, input)
		if err != nil {
			return "", nil, err
		}
		o.Fleet, o.Model = r, f
		return input, func() { r.Close() }, nil
	}
	if err := fleetOnly(cmd); err != nil {
		return "", nil, err
	}
	input, err := journalPath(cmd)
	if err != nil {
		return "", nil, usagef(cmd, "%v", err)
	}
	warnTrust(std, input)
	o.Journal = input
	return input, func() {}, nil
}
