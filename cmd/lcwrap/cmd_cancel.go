package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/cancel"
	"github.com/lcwrap/lcwrap/internal/exitcode"
	"github.com/lcwrap/lcwrap/internal/wrapsig"
)

// The exit codes of lcwrap cancel (docs/orchestrator.md). Every refusal
// happens before anything is sent.
const (
	exitCancelTimeout = exitcode.Failed            // --wait: the request was sent, the child has not ended yet
	exitCancelJournal = exitcode.Refused           // the journal cannot be read, or the request cannot be recorded
	exitNoAuthority   = exitcode.CancelNoAuthority // no verified authority: adopted/external, another host, unverifiable
	exitUnknownChild  = exitcode.CancelNoSuchChild // no such child in the journal
	exitNotRunning    = exitcode.CancelNotRunning  // it has already ended, or has not started yet
	exitWrapperGone   = exitcode.CancelWrapperGone // its wrapper is gone: the child may be lost
)

func cancelCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:      "cancel",
		Usage:     "cancel a child lcwrap launched, where it holds verified authority",
		ArgsUsage: "CHILD_ID",
		Description: "Checks authority first and sends nothing when it is missing. Then records the\n" +
			"request in the journal (a diagnostic event of source " + cancel.Source + ", with the\n" +
			"reason) and sends SIGTERM to the child's wrapper through a pidfd, after checking\n" +
			"the wrapper's pid and start time again once the pidfd is open, so a recycled\n" +
			"pid is never hit. The wrapper treats it as any SIGTERM: a cancel request for\n" +
			"the whole job (the process group, then SIGKILL after its --kill-after).",
		Flags: append(journalFlags(),
			&cli.StringFlag{Name: "reason", Usage: "why, recorded in the journal (redacted, cut to 512 characters)"},
			&cli.DurationFlag{Name: "wait", Usage: "then wait up to `DURATION` for the child's terminal event"},
			fleetFlag(),
		),
		Action: func(ctx context.Context, cmd *cli.Command) error { return cancelAction(ctx, cmd, std) },
	}
}

func cancelAction(ctx context.Context, cmd *cli.Command, std stdio) error {
	if err := refuseFleet(cmd, exitNoAuthority); err != nil {
		return err
	}
	if cmd.Args().Len() != 1 || cmd.Args().First() == "" {
		return usagef(cmd, "cancel takes one CHILD_ID ('lcwrap status' lists them), not %d arguments", cmd.Args().Len())
	}
	id := cmd.Args().First()
	if err := checkID(id); err != nil {
		return usagef(cmd, "CHILD_ID %q: %v", id, err)
	}
	if cmd.Duration("wait") < 0 {
		return usagef(cmd, "--wait must not be negative")
	}
	opts, err := journalOptions(cmd)
	if err != nil {
		return err
	}
	path, err := journalPath(cmd)
	if err != nil {
		return exitCode(exitCancelJournal, "%v; nothing was sent", err)
	}
	sent, err := cancel.Send(cancel.Request{Journal: path, Options: opts, ChildID: id, Reason: cmd.String("reason")})
	var se *cancel.SignalError
	switch {
	case errors.Is(err, cancel.ErrRead):
		return exitCode(exitCancelJournal, "%v; nothing was sent", err)
	case errors.Is(err, cancel.ErrRecord):
		return exitCode(exitCancelJournal, "%v; nothing was sent", err)
	case errors.As(err, &se) && se.Recorded:
		note := "the recorded request was not delivered"
		if se.NoteErr != nil {
			note += fmt.Sprintf(" (and saying so in the journal failed: %v)", se.NoteErr)
		}
		return signalRefusal(id, se.Err, note)
	case se != nil:
		return signalRefusal(id, se.Err, "nothing was sent")
	case err != nil:
		return authorityRefusal(path, err)
	}
	fmt.Fprintf(std.out, "cancel requested: SIGTERM sent to the wrapper of %s (pid %d)\n", id, sent.Wrapper.PID)
	wait := cmd.Duration("wait")
	if wait == 0 {
		return nil
	}
	ctx, stop := context.WithTimeout(ctx, wait)
	defer stop()
	v, err := sent.Wait(ctx)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return exitCode(exitCancelTimeout, "%s has not ended within %s; the request was sent: its wrapper sends SIGKILL to what is left after its --kill-after", id, wait)
	case err != nil:
		return exitCode(exitCancelTimeout, "cannot follow the journal: %v; the request was sent", err)
	}
	fmt.Fprintf(std.out, "%s ended: %s (exit %s)\n", id, *v.State, exitText(&v))
	return nil
}

// authorityRefusal turns a refusal of cancel.CheckAuthority into its
// exit code and one line.
func authorityRefusal(path string, err error) error {
	var ae *cancel.AuthorityError
	if !errors.As(err, &ae) {
		return exitCode(exitCancelJournal, "%v; nothing was sent", err)
	}
	id := shorten(ae.ChildID, 64)
	switch {
	case errors.Is(err, cancel.ErrUnknownChild):
		return exitCode(exitUnknownChild, "no child %s in the journal %s; nothing was sent ('lcwrap status --all' lists them)", id, path)
	case errors.Is(err, cancel.ErrEnded):
		return exitCode(exitNotRunning, "%s has already ended: %s; nothing was sent", id, ae.State)
	case errors.Is(err, cancel.ErrNotStarted):
		return exitCode(exitNotRunning, "%s has not started yet (state created); nothing was sent: try again once it is running", id)
	case errors.Is(err, cancel.ErrWrapperGone):
		return exitCode(exitWrapperGone, "cannot cancel %s: %s; the child may be lost: see lcwrap status --reconcile; nothing was sent", id, ae.Reason)
	}
	return exitCode(exitNoAuthority, "cannot cancel %s: %s; nothing was sent", id, ae.Reason)
}

// signalRefusal turns a failure to open or signal the wrapper into its
// exit code and one line ending with note.
func signalRefusal(id string, err error, note string) error {
	id = shorten(id, 64)
	if errors.Is(err, wrapsig.ErrGone) {
		return exitCode(exitWrapperGone, "cannot cancel %s: its wrapper is gone (%v); the child may be lost: see lcwrap status --reconcile; %s", id, err, note)
	}
	return exitCode(exitNoAuthority, "cannot cancel %s: its wrapper cannot be signalled from here: %v; %s", id, err, note)
}
