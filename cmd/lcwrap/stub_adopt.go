package main

import "github.com/urfave/cli/v3"

// Placeholder until its issue lands: delete this file when it does.

func adoptCommand(std stdio) *cli.Command {
	return &cli.Command{Name: "adopt", Usage: "observe processes lcwrap did not start", Action: notYet("adopt")}
}
