package main

import "github.com/urfave/cli/v3"

// Each constructor below is replaced by its own file when its issue lands.

func runFlags() []cli.Flag { return nil }
func runAction(io stdio) cli.ActionFunc {
	return notYet("run")
}
func runCommand(io stdio) *cli.Command {
	return &cli.Command{Name: "run", Usage: "start COMMAND and report its lifecycle", Action: notYet("run")}
}
func adoptCommand(io stdio) *cli.Command {
	return &cli.Command{Name: "adopt", Usage: "observe processes lcwrap did not start", Action: notYet("adopt")}
}
func statusCommand(io stdio) *cli.Command {
	return &cli.Command{Name: "status", Usage: "show what is running and what ended", Action: notYet("status")}
}
func reconcileCommand(io stdio) *cli.Command {
	return &cli.Command{Name: "reconcile", Usage: "apply an authoritative snapshot", Action: notYet("reconcile")}
}
func snapshotCommand(io stdio) *cli.Command {
	return &cli.Command{Name: "snapshot", Usage: "print an AuthoritativeSnapshot", Action: notYet("snapshot")}
}
func cancelCommand(io stdio) *cli.Command {
	return &cli.Command{Name: "cancel", Usage: "cancel a launched child", Action: notYet("cancel")}
}
func tailCommand(io stdio) *cli.Command {
	return &cli.Command{Name: "tail", Usage: "print journal lines after a cursor", Action: notYet("tail")}
}
func emitCommand(io stdio) *cli.Command {
	return &cli.Command{Name: "emit", Usage: "append one event (for hook scripts)", Action: notYet("emit")}
}
func journalCommand(io stdio) *cli.Command {
	return &cli.Command{Name: "journal", Usage: "verify, repair or locate the journal", Action: notYet("journal")}
}
