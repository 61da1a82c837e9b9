package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/journal"
)

func journalCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  "journal",
		Usage: "verify, repair or locate the journal",
		Description: "path prints the resolved journal path. verify reads every line (sealed files and\n" +
			"the live one) and reports the first problem (exit 1) or that the journal is clean\n" +
			"(exit 0). repair quarantines everything from the first bad line in place: the\n" +
			"bytes stay where they are, a record appended after them tells every lcwrap\n" +
			"reader to skip them, and a copy goes to <journal>.quarantine-<UTC time>, so that\n" +
			"appends can continue. Nothing is moved under a reader (docs/journal.md).\n" +
			"unlock breaks a lock whose owner lcwrap cannot judge (a pid in another PID\n" +
			"namespace or on another host), once you know that owner has exited.",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef(cmd, "unknown journal command %q: use path, verify, repair or unlock", cmd.Args().First())
			}
			return usagef(cmd, "journal needs a command: path, verify, repair or unlock")
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
					warnTrust(std, path)
					r, err := journal.Verify(path)
					if errors.Is(err, fs.ErrNotExist) {
						return exitCode(1, "no journal at %s: nothing to verify", path)
					}
					if err != nil {
						return exitCode(1, "journal verify: %v", err)
					}
					if r.Clean() {
						fmt.Fprintf(std.out, "journal %s: clean: %s, %d bytes%s\n", path, lines(r.Lines), r.Size, verifyExtras(r))
						return nil
					}
					be := r.Blocked
					fmt.Fprintf(std.out, "journal %s: append-blocked at line %d (byte %d): %s: %s\n", path, be.Line, be.Offset, be.Class, be.Reason)
					fmt.Fprintf(std.out, "  %s (%d bytes) before it, all valid; %s (%d bytes) from it on; bad lines: %s\n",
						lines(r.Valid), r.Prefix, lines(r.Lines-r.Valid), r.Size-r.Prefix, classCounts(r))
					if be.Torn() {
						fmt.Fprintf(std.out, "  a torn final line: the next writer quarantines it by itself; or run 'lcwrap journal repair' to quarantine it now (no byte is moved or deleted)\n")
					} else {
						fmt.Fprintf(std.out, "  run 'lcwrap journal repair' to quarantine line %d onwards in place (no byte is moved or deleted)\n", be.Line)
					}
					return exitCode(1, "")
				},
			},
			{
				Name:  "repair",
				Usage: "quarantine everything from the first bad line in place (nothing moved), so appends can continue",
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
						// The live file is clean; a sealed file is never
						// changed, so damage there is reported, not repaired.
						if r, err := journal.Verify(path); err == nil && r.Blocked != nil && r.Blocked.Path != path {
							be := r.Blocked
							return exitCode(1, "journal %s: the live file is clean, but sealed file %s has a bad line at line %d (byte %d): %s: %s; sealed files are never changed: readers report it and read on with the next file",
								path, be.Path, be.Line, be.Offset, be.Class, be.Reason)
						}
						fmt.Fprintf(std.out, "journal %s: clean (%s, %d bytes); nothing to repair\n", path, lines(rep.KeptLines), rep.KeptBytes)
						return nil
					}
					be, q := rep.Blocked, rep.Range
					fmt.Fprintf(std.out, "journal %s: quarantined in place bytes %d..%d (%s from line %d: %s: %s); every lcwrap reader skips them\n",
						path, q.From, q.To, lines(rep.QuarantinedLines), be.Line, be.Class, be.Reason)
					if rep.Quarantine != "" {
						fmt.Fprintf(std.out, "  a copy is in %s; no byte of the journal was moved or changed\n", rep.Quarantine)
					} else {
						fmt.Fprintf(std.out, "  no copy could be made (the range itself stays in the journal); no byte was moved or changed\n")
					}
					fmt.Fprintf(std.out, "  kept %s (%d bytes) before it; appends continue at journalSequence %d\n", lines(rep.KeptLines), rep.KeptBytes, rep.NextSequence)
					if rep.ForeignWriters {
						fmt.Fprintf(std.err, "lcwrap: warning: a writer without lcwrap's kernel lock (a reference writer or an older lcwrap) was seen on this journal; such writers still stop at the quarantined range\n")
					}
					return nil
				},
			},
			{
				Name:  "unlock",
				Usage: "break a lock whose owner has exited where lcwrap cannot see it (--token from the message)",
				Description: "Removes the journal's lock directory when its owner record still holds\n" +
					"--token and its owner is not alive as far as lcwrap can tell. For an owner\n" +
					"lcwrap cannot judge: a pid recorded in another PID namespace or on another\n" +
					"host, or recorded without its namespace and seen from a child namespace. A\n" +
					"lock that timed out names its token. Check first that the owner has exited,\n" +
					"where it ran (docs/journal.md, Breaking a lock by hand).",
				Flags: append(journalFlags()[:2:2],
					&cli.StringFlag{Name: "token", Usage: "the owner's `TOKEN`, as the timeout message names it (required)"}),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() > 0 {
						return usagef(cmd, "unexpected argument %q", cmd.Args().First())
					}
					token := cmd.String("token")
					if token == "" {
						return usagef(cmd, "--token is required: the owner's token, as the timeout message names it")
					}
					path, err := journalPath(cmd)
					if err != nil {
						return usagef(cmd, "%v", err)
					}
					if cmd.Duration("lock-timeout") <= 0 {
						return usagef(cmd, "--lock-timeout must be positive")
					}
					owner, err := journal.BreakLock(path, token, journal.Options{LockTimeout: cmd.Duration("lock-timeout")})
					if errors.Is(err, fs.ErrNotExist) {
						return exitCode(1, "no journal at %s: no lock to break", path)
					}
					if err != nil {
						return exitCode(1, "journal unlock: %v", err)
					}
					fmt.Fprintf(std.out, "journal %s: broke the lock of %s (token %s); appends can continue\n", path, owner, token)
					return nil
				},
			},
		},
	}
}

// warnTrust warns, before reading, about a journal that someone else
// than the user reading could have written: another user's, or one that
// others may write. It is read anyway.
func warnTrust(std stdio, path string) {
	var ue *journal.UnsafeError
	if errors.As(journal.CheckTrust(path), &ue) {
		fmt.Fprintf(std.err, "lcwrap: warning: journal %s is %s: its lines may not be what lcwrap wrote; reading it anyway (%s)\n", path, ue.Why, journal.SharedDirsDoc)
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

// verifyExtras says how many sealed files and quarantined ranges a clean
// journal has.
func verifyExtras(r journal.Report) string {
	var s string
	if n := len(r.Sealed); n > 0 {
		s += fmt.Sprintf(", %d sealed file(s) before the live one", n)
	}
	if n := len(r.Quarantined); n > 0 {
		s += fmt.Sprintf(", %d quarantined range(s) skipped", n)
	}
	return s
}
