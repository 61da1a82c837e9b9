package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
)

// errFound stops a scan once the cursor event is found.
var errFound = errors.New("found")

func tailCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  "tail",
		Usage: "print journal lines after a cursor",
		Description: "Prints journal lines, as stored, whose journalSequence is greater than the\n" +
			"cursor (--after N, or the line of --after-event ID). --follow keeps printing\n" +
			"appended lines (it looks every 50 ms) until SIGINT or SIGTERM, and goes on\n" +
			"after a 'journal repair'. Without --follow, a bad line stops it with a message\n" +
			"naming the line and byte offset.",
		Flags: []cli.Flag{
			journalFlags()[0], // --journal
			&cli.StringFlag{Name: "after", Usage: "print lines after journalSequence `N` (with --fleet: after a fleet CURSOR)"},
			&cli.StringFlag{Name: "after-event", Usage: "print lines after the line holding eventId `ID`"},
			&cli.StringFlag{Name: "child", Usage: "print only events of child `ID`"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing appended lines until interrupted"},
			fleetFlag(),
			&cli.StringFlag{Name: "host", Usage: "with --fleet: print only events of host `NAME`"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.IsSet("fleet") {
				return fleetTail(ctx, cmd, std)
			}
			if cmd.Args().Len() > 0 {
				return usagef(cmd, "unexpected argument %q", cmd.Args().First())
			}
			if cmd.IsSet("host") {
				return usagef(cmd, "--host applies to --fleet only")
			}
			var after int64
			if s := cmd.String("after"); s != "" {
				n, err := strconv.ParseInt(s, 10, 64)
				switch {
				case err != nil:
					return usagef(cmd, "invalid value %q for --after: a journalSequence (with --fleet: a fleet cursor)", s)
				case n < 0:
					return usagef(cmd, "--after must be 0 or more, not %d", n)
				}
				after = n
			}
			if cmd.IsSet("after") && cmd.IsSet("after-event") {
				return usagef(cmd, "use --after or --after-event, not both")
			}
			path, err := journalPath(cmd)
			if err != nil {
				return usagef(cmd, "%v", err)
			}
			if id := cmd.String("after-event"); id != "" {
				if after, err = findEvent(path, id); err != nil {
					return tailError(path, err)
				}
			}
			child, follow := cmd.String("child"), cmd.Bool("follow")
			out := bufio.NewWriter(std.out)
			defer out.Flush()
			print := func(rec event.Record, raw []byte) error {
				if child != "" && rec.Event.ChildID != child {
					return nil
				}
				out.Write(raw)
				out.WriteByte('\n')
				if follow {
					return out.Flush()
				}
				return nil
			}
			if !follow {
				return tailError(path, journal.Scan(path, after, print))
			}
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(std.err, "lcwrap: no journal at %s yet: waiting for it to be created\n", path)
			}
			ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			err = journal.Follow(ctx, path, after, print, func(be *journal.BlockedError) {
				out.Flush()
				fmt.Fprintf(std.err, "lcwrap: journal %s stops at line %d (byte %d): %s: %s; waiting for 'lcwrap journal repair'\n",
					path, be.Line, be.Offset, be.Class, be.Reason)
			})
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return tailError(path, err)
		},
	}
}

// findEvent returns the journalSequence of the first line holding eventId id.
func findEvent(path, id string) (int64, error) {
	var at int64
	err := journal.Scan(path, 0, func(rec event.Record, raw []byte) error {
		if rec.Event.EventID == id {
			at = rec.JournalSequence
			return errFound
		}
		return nil
	})
	if errors.Is(err, errFound) {
		return at, nil
	}
	if err == nil {
		err = fmt.Errorf("no event with eventId %q in journal %s", id, path)
	}
	return 0, err
}

// tailError turns a reading error into exit status 1 with one line.
func tailError(path string, err error) error {
	var be *journal.BlockedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &be):
		return exitCode(1, "journal %s stops at line %d (byte %d): %s: %s; the lines after it are not shown: run 'lcwrap journal repair'",
			path, be.Line, be.Offset, be.Class, be.Reason)
	case errors.Is(err, fs.ErrNotExist):
		return noJournal(path)
	}
	return exitCode(1, "tail: %v", err)
}
