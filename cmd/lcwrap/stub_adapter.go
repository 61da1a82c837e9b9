package main

import "github.com/urfave/cli/v3"

// Placeholder until its issue lands: delete this file when it does.

func snapshotCommand(std stdio) *cli.Command {
	return &cli.Command{Name: "snapshot", Usage: "print an AuthoritativeSnapshot", Action: notYet("snapshot")}
}

func cancelCommand(std stdio) *cli.Command {
	return &cli.Command{Name: "cancel", Usage: "cancel a launched child", Action: notYet("cancel")}
}
