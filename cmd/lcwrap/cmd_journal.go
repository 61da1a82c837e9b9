package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/journal"
)

func journalCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  "journal",
		Usage: "verify, repair or locate the journal",
		Description: "path prints the resolved journal path. verify reads every line and reports the\n" +
			"first problem (exit 1) or that the journal is clean (exit 0). repair moves\n" +
			"everything from the first bad line to <journal>.quarantine-<UTC time>, keeping\n" +
			"every byte, so that appends can continue.",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef(cmd, "unknown journal command %q: use path, verify or repair", cmd.Args().First())
			}
			return usagef(cmd, "journal needs a command: path, verify or repair")
		},
		Commands: []*cli.Command{
			{
				Name:  "path",
				Usage: "print the journal's path",
				Flags: journalFlags(),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					path, err := journalPath(cmd)
					if err != nil {
						return usagef(cmd, "%v", err)
					}
					fmt.Fprintln(std.out, path)
					return nil
				},
			},
			{
				Name:  "verify",
				Usage: "read the whole journal and report the first problem (exit 1) or that it is clean",
				Flags: journalFlags(),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					path, err := journalPath(cmd)
					if err != nil {
						return usagef(cmd, "%v", err)
					}
					r, err := journal.Verify(path)
					if errors.Is(err, fs.ErrNotExist) {
						return exitCode(1, "no journal at %s: nothing to verify", path)
					}
					if err != nil {
						return exitCode(1, "journal verify: %v", err)
					}
					if r.Clean() {
						fmt.Fprintf(std.out, "journal %s: clean: %s, %d bytes\n", path, lines(r.Lines), r.Size)
						return nil
					}
					be := r.Blocked
					fmt.Fprintf(std.out, "journal %s: append-blocked at line %d (byte %d): %s: %s\n", path, be.Line, be.Offset, be.Class, be.Reason)
					fmt.Fprintf(std.out, "  %s (%d bytes) before it, all valid; %s (%d bytes) from it on; bad lines: %s\n",
						lines(r.Valid), r.Prefix, lines(r.Lines-r.Valid), r.Size-r.Prefix, classCounts(r))
					fmt.Fprintf(std.out, "  run 'lcwrap journal repair' to move line %d onwards to a quarantine file (no byte is deleted)\n", be.Line)
					return exitCode(1, "")
				},
			},
			{
				Name:  "repair",
				Usage: "move everything from the first bad line to a quarantine file, so appends can continue",
				Flags: journalFlags(),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					path, err := journalPath(cmd)
					if err != nil {
						return usagef(cmd, "%v", err)
					}
					opts, err := journalOptions(cmd)
					if err != nil {
						return err
					}
					rep, err := journal.Repair(path, opts)
					if errors.Is(err, fs.ErrNotExist) {
						return exitCode(1, "no journal at %s: nothing to repair", path)
					}
					if err != nil {
						return exitCode(1, "journal repair: %v", err)
					}
					if rep.Blocked == nil {
						fmt.Fprintf(std.out, "journal %s: clean (%s, %d bytes); nothing to repair\n", path, lines(rep.KeptLines), rep.KeptBytes)
						return nil
					}
					be := rep.Blocked
					fmt.Fprintf(std.out, "journal %s: moved %s (%d bytes) from line %d (byte %d: %s: %s) to %s\n",
						path, lines(rep.MovedLines), rep.MovedBytes, be.Line, be.Offset, be.Class, be.Reason, rep.Quarantine)
					fmt.Fprintf(std.out, "  kept %s (%d bytes); appends continue at journalSequence %d\n", lines(rep.KeptLines), rep.KeptBytes, rep.KeptLines+1)
					return nil
				},
			},
		},
	}
}

// lines says "1 line" or "n lines".
func lines(n int64) string {
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}

// classCounts lists how many bad lines of each class a report found.
func classCounts(r journal.Report) string {
	var parts []string
	for c, n := range r.ByClass {
		parts = append(parts, fmt.Sprintf("%s %d", c, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
