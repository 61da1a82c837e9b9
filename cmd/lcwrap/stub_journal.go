package main

import "github.com/urfave/cli/v3"

// Placeholder until its issue lands: delete this file when it does.

func tailCommand(std stdio) *cli.Command {
	return &cli.Command{Name: "tail", Usage: "print journal lines after a cursor", Action: notYet("tail")}
}

func emitCommand(std stdio) *cli.Command {
	return &cli.Command{Name: "emit", Usage: "append one event (for hook scripts)", Action: notYet("emit")}
}

func journalCommand(std stdio) *cli.Command {
	return &cli.Command{Name: "journal", Usage: "verify, repair or locate the journal", Action: notYet("journal")}
}
