package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/projection"
)

func snapshotCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  "snapshot",
		Usage: "print an AuthoritativeSnapshot of the journal's children, each checked now",
		Description: "Prints one AuthoritativeSnapshot (the contract's shape) as one JSON line:\n" +
			"source \"" + projection.SnapshotSource + "\", a fresh sourceEpoch, snapshotId \"<sourceEpoch>/<reason>\".\n" +
			"Each child not yet ended is checked now: the recorded identity (pid and start\n" +
			"time) of its wrapper, or of an adopted process, on this host. Alive keeps its\n" +
			"state; provably gone is reported lost. Ended children keep their terminal\n" +
			"state. Only when every child got a definite answer does it say complete: true\n" +
			"with coverage \"all\"; otherwise complete: false, coverage lists exactly the\n" +
			"children it lists, and stderr names each one left out and why. It never\n" +
			"writes to the journal.",
		Flags: []cli.Flag{
			journalFlags()[0], // --journal
			&cli.StringFlag{Name: "reason", Value: "periodic", Usage: "why it is asked for: " + strings.Join(projection.SnapshotReasons, ", ") + " (part of the snapshotId)"},
			fleetFlag(), silentAfterFlag(),
		},
		Action: func(_ context.Context, cmd *cli.Command) error { return snapshotAction(cmd, std) },
	}
}

func snapshotAction(cmd *cli.Command, std stdio) error {
	if cmd.IsSet("fleet") {
		return fleetSnapshot(cmd, std)
	}
	if err := fleetOnly(cmd); err != nil {
		return err
	}
	reason := cmd.String("reason")
	switch {
	case cmd.Args().Len() > 0:
		return usagef(cmd, "snapshot takes no arguments, not %q", cmd.Args().First())
	case !slices.Contains(projection.SnapshotReasons, reason):
		return usagef(cmd, "--reason must be one of %s, not %q", strings.Join(projection.SnapshotReasons, ", "), reason)
	}
	path, err := journalPath(cmd)
	if err != nil {
		return exitCode(1, "%v", err)
	}
	warnTrust(std, path)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		// No evidence is not an empty world: a complete snapshot of no
		// children would tell an orchestrator that nothing runs.
		return noJournal(path)
	}
	tr := projection.NewTracker(path)
	err = tr.Refresh()
	var be *journal.BlockedError
	switch {
	case errors.As(err, &be):
		fmt.Fprintf(std.err, "lcwrap: %s; only children that ended before it are covered\n", oneLine(be.Error()))
	case err != nil:
		return exitCode(1, "cannot read the journal: %v", err)
	}
	s, uncovered := tr.BuildSnapshot(event.System, time.Now(), emit.NewEpoch(), reason)
	for _, u := range uncovered {
		fmt.Fprintf(std.err, "lcwrap: %s is not covered: %s\n", shorten(u.ChildID, 64), oneLine(u.Reason))
	}
	enc := json.NewEncoder(std.out)
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}
