package main

import "github.com/urfave/cli/v3"

// Placeholder until its issue lands: delete this file when it does.

func runFlags() []cli.Flag { return nil }

func runAction(std stdio) cli.ActionFunc { return notYet("run") }

func runCommand(std stdio) *cli.Command {
	return &cli.Command{Name: "run", Usage: "start COMMAND and report its lifecycle", Action: notYet("run")}
}
