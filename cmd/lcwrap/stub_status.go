package main

import "github.com/urfave/cli/v3"

// Placeholder until its issue lands: delete this file when it does.

func statusCommand(std stdio) *cli.Command {
	return &cli.Command{Name: "status", Usage: "show what is running and what ended", Action: notYet("status")}
}

func reconcileCommand(std stdio) *cli.Command {
	return &cli.Command{Name: "reconcile", Usage: "apply an authoritative snapshot", Action: notYet("reconcile")}
}
