package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v3"
)

// topInterval and minTopInterval are lcwrap-top's default and least
// -interval (tui.DefaultInterval; a test checks they agree). They are
// repeated here so that lcwrap links no TUI library.
const (
	topInterval    = 2 * time.Second
	minTopInterval = 100 * time.Millisecond
)

// topProgram is the program that is `lcwrap top` (cmd/lcwrap-top).
const topProgram = "lcwrap-top"

// notATerminal is top's one-line refusal when its output is not a
// terminal (cmd/lcwrap-top says the same).
const notATerminal = "top needs a terminal; use 'lcwrap status --watch' for a refreshing table, or 'lcwrap status --json' for a program"

func topCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  "top",
		Usage: "a live, full-screen tree of every child",
		Description: "Follows the journal from a cursor and shows the lineage tree (launched process,\n" +
			"agent session, sub-agents; retries under their root with their attempt number)\n" +
			"with each child's state (colour and symbol), activity, freshness, start,\n" +
			"duration, exit and source. ?N on a row: N capabilities are unknown; enter\n" +
			"opens the detail pane (events, lineage, why each capability is unknown, last\n" +
			"diagnostics). Keys: ↑↓ or j/k move, enter details, / filter, e ended\n" +
			"children, q or ^C quit. NO_COLOR is honoured. Without a terminal it refuses:\n" +
			"'lcwrap status --watch' and 'lcwrap status --json' serve pipes.\n" +
			"With --fleet PATH it follows a gateway Collector's output (docs/fleet.md): a\n" +
			"host table (last heard, clock skew, shipping delay, children; SILENT past\n" +
			"--silent-after, its open children stale, never lost) above the children, each\n" +
			"with its HOST; the key H shows one host at a time (then every host again).\n" +
			"It runs the program lcwrap-top (found beside lcwrap, else in $PATH), kept\n" +
			"apart so the TUI library costs `lcwrap -- CMD` nothing (docs/view.md).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "journal", Usage: "journal `PATH` (default $LCWRAP_JOURNAL, else $XDG_STATE_HOME/lcwrap/journal.jsonl, else ~/.local/state/lcwrap/journal.jsonl)"},
			&cli.DurationFlag{Name: "interval", Value: topInterval, Usage: "the least time between two redraws of the clock (durations, freshness; at least 100ms); keys and new events redraw at once"},
			fleetFlag(),
			silentAfterFlag(),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error { return topAction(cmd, std) },
	}
}

func topAction(cmd *cli.Command, std stdio) error {
	if cmd.Args().Len() > 0 {
		return usagef(cmd, "top takes no arguments, not %q", cmd.Args().First())
	}
	if cmd.Duration("interval") < minTopInterval {
		return usagef(cmd, "--interval %v: give at least %v", cmd.Duration("interval"), minTopInterval)
	}
	if !isTerminal(std.out) {
		return exitCode(exitUsage, "%s", notATerminal)
	}
	var argv []string
	switch {
	case cmd.IsSet("fleet") && cmd.IsSet("journal"):
		return usagef(cmd, "--fleet and --journal name two inputs; choose one")
	case cmd.IsSet("fleet"):
		if cmd.Duration("silent-after") <= 0 {
			return usagef(cmd, "--silent-after must be positive, not %s", cmd.Duration("silent-after"))
		}
		argv = []string{"-fleet", cmd.String("fleet"), "-silent-after", cmd.Duration("silent-after").String()}
	default:
		if err := fleetOnly(cmd); err != nil {
			return err
		}
		path, err := journalPath(cmd)
		if err != nil {
			return exitCode(1, "%v", err)
		}
		argv = []string{"-journal", path}
	}
	bin, err := findTop()
	if err != nil {
		return exitCode(1, "top is the program %s, not found beside lcwrap or in $PATH: build it beside lcwrap with 'make build' (bin/lcwrap and bin/lcwrap-top) from the source tree", topProgram)
	}
	return execTop(bin, append(append([]string{topProgram}, argv...), "-interval", cmd.Duration("interval").String()), std)
}

// findTop looks for lcwrap-top beside the running lcwrap, then in $PATH.
func findTop() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), topProgram)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath(topProgram)
}
