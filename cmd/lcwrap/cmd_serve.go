package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/urfave/cli/v3"
)

// serveProgram is the program that is `lcwrap serve` (cmd/lcwrap-serve):
// net/http's server costs every plain run its start-up when linked, so it
// lives there (docs/design.md, "A second binary").
const serveProgram = "lcwrap-serve"

func serveCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "the lifecycle API over HTTP (children, snapshot, events, cancel) and a live page",
		Description: "Serves the journal (or --fleet) on --listen, loopback by default:\n" +
			"GET /v1/children (status --json), /v1/children/ID, /v1/snapshot,\n" +
			"/v1/events (Server-Sent Events from a cursor, id = journalSequence,\n" +
			"resumed with Last-Event-ID), POST /v1/children/ID/cancel (lcwrap cancel's\n" +
			"rules), and GET / (a live page). Every data route needs the token in\n" +
			"--token-file (made, mode 0600, when missing) as Authorization: Bearer; the\n" +
			"Host header must name the address listened on. It runs the program\n" +
			"lcwrap-serve (found beside lcwrap, else in $PATH), kept apart so net/http\n" +
			"costs `lcwrap -- CMD` nothing. The API: docs/serve.md.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "journal", Usage: "journal `PATH` (default $LCWRAP_JOURNAL, else $XDG_STATE_HOME/lcwrap/journal.jsonl, else ~/.local/state/lcwrap/journal.jsonl)"},
			fleetFlag(), silentAfterFlag(),
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:7468", Usage: "`ADDR` to listen on: HOST:PORT, or a unix socket path; other than loopback it warns that the token travels in clear text without TLS"},
			&cli.StringFlag{Name: "token-file", Usage: "the bearer token's `FILE` (default serve.token in the state directory; made with mode 0600 when missing)"},
			&cli.StringFlag{Name: "tls-cert", Usage: "serve TLS with this certificate `FILE` (with --tls-key)"},
			&cli.StringFlag{Name: "tls-key", Usage: "the TLS private key `FILE` (with --tls-cert)"},
			&cli.StringSliceFlag{Name: "allow-host", Usage: "also accept Host header `NAME:PORT` (a name clients use; needed when --listen is 0.0.0.0 or ::)"},
			&cli.BoolFlag{Name: "read-only", Usage: "refuse cancel"},
			&cli.IntFlag{Name: "max-streams", Value: 256, Usage: "event streams open at once, at most `N`"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error { return serveAction(cmd, std) },
	}
}

func serveAction(cmd *cli.Command, std stdio) error {
	if cmd.Args().Len() > 0 {
		return usagef(cmd, "serve takes no arguments, not %q", cmd.Args().First())
	}
	if cmd.IsSet("silent-after") && !cmd.IsSet("fleet") {
		return usagef(cmd, "--silent-after applies to --fleet only")
	}
	if cmd.IsSet("fleet") && cmd.IsSet("journal") {
		return usagef(cmd, "--fleet and --journal name two inputs; choose one")
	}
	if cmd.IsSet("tls-cert") != cmd.IsSet("tls-key") {
		return usagef(cmd, "--tls-cert and --tls-key go together")
	}
	if cmd.Int("max-streams") < 1 {
		return usagef(cmd, "--max-streams must be 1 or more, not %d", cmd.Int("max-streams"))
	}
	argv := []string{serveProgram}
	for _, name := range []string{"journal", "fleet", "listen", "token-file", "tls-cert", "tls-key"} {
		if cmd.IsSet(name) {
			argv = append(argv, "--"+name+"="+cmd.String(name))
		}
	}
	if !cmd.IsSet("fleet") && !cmd.IsSet("journal") {
		path, err := journalPath(cmd)
		if err != nil {
			return exitCode(1, "%v", err)
		}
		argv = append(argv, "--journal="+path)
	}
	if cmd.IsSet("silent-after") {
		argv = append(argv, "--silent-after="+cmd.Duration("silent-after").String())
	}
	for _, h := range cmd.StringSlice("allow-host") {
		argv = append(argv, "--allow-host="+h)
	}
	if cmd.Bool("read-only") {
		argv = append(argv, "--read-only")
	}
	argv = append(argv, fmt.Sprintf("--max-streams=%d", cmd.Int("max-streams")))
	bin, err := findProgram(serveProgram)
	if err != nil {
		return exitCode(1, "serve is the program %s, not found beside lcwrap or in $PATH: build it beside lcwrap with 'make build' (bin/lcwrap and bin/lcwrap-serve) from the source tree", serveProgram)
	}
	return execTop(bin, argv, std)
}

// findProgram looks for a program of lcwrap's beside the running lcwrap,
// then in $PATH.
func findProgram(name string) (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath(name)
}
