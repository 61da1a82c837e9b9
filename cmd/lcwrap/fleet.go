package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/fleet"
	"github.com/lcwrap/lcwrap/internal/projection"
)

// fleetFlag is --fleet PATH of the readers.
func fleetFlag() cli.Flag {
	return &cli.StringFlag{Name: "fleet", Usage: "read a fleet: the gateway Collector's OTLP-JSON output at `PATH` (a file, a directory of rotated files, or a glob) instead of the journal"}
}

// silentAfterFlag is --silent-after D of the fleet readers.
func silentAfterFlag() cli.Flag {
	return &cli.DurationFlag{Name: "silent-after", Value: fleet.DefaultSilentAfter, Usage: "with --fleet: a host unheard for `D` is silent, and its open children stale"}
}

// fleetOnly refuses --silent-after without --fleet: it would change
// nothing.
func fleetOnly(cmd *cli.Command) error {
	if cmd.IsSet("silent-after") {
		return usagef(cmd, "--silent-after applies to --fleet only")
	}
	return nil
}

// refuseFleet is what cancel and reconcile answer to --fleet.
func refuseFleet(cmd *cli.Command, code int) error {
	if !cmd.IsSet("fleet") {
		return nil
	}
	return exitCode(code, "%s --fleet refused: a fleet is other hosts' shipped evidence, and lcwrap holds no authority over another host's processes; run 'lcwrap %s' on the child's own host", cmd.Name, cmd.Name)
}

// fleetRead opens the output at path and an empty fleet, silent after
// --silent-after where the command has it.
func fleetRead(cmd *cli.Command, path string) (*fleet.Reader, *fleet.Fleet, error) {
	d := fleet.DefaultSilentAfter
	if cmd.IsSet("silent-after") {
		if d = cmd.Duration("silent-after"); d <= 0 {
			return nil, nil, usagef(cmd, "--silent-after must be positive, not %s", d)
		}
	}
	r, err := fleet.NewReader(path)
	if errors.Is(err, fleet.ErrNoOutput) {
		return nil, nil, exitCode(1, "%v: nothing was shipped there yet; --fleet names the gateway's output (the file exporter's directory, a file of it, or a glob)", err)
	}
	if err != nil {
		return nil, nil, exitCode(1, "--fleet: %v", err)
	}
	f := fleet.New(fleet.Options{SilentAfter: d})
	return r, f, nil
}

// fleetWarnings says on stderr what a fleet picture cannot vouch for.
func fleetWarnings(out *statusOutput, rep fleet.Report) {
	if rep.DamageCount > 0 && len(rep.Damage) > 0 {
		d := rep.Damage[0]
		host := ""
		if d.Host != "" {
			host = " from host " + d.Host
		}
		out.warnOnce("fleet-damage", fmt.Sprintf("%d parts of the gateway output are not events and were skipped; the first%s: %s byte %d: %s: %s",
			rep.DamageCount, host, d.File, d.Offset, d.Class, d.Reason))
	}
	if rep.NoReceiveStamp > 0 {
		out.warnOnce("fleet-stamp", fmt.Sprintf("%d events carry no gateway receive stamp (%s): without it a host's last-heard time, skew and silence cannot be judged; put the lcwrap_receive_time processor in the gateway's pipeline",
			rep.NoReceiveStamp, fleet.AttrReceivedAt))
	}
}

// fleetStatus is `lcwrap status --fleet PATH`.
func fleetStatus(ctx context.Context, cmd *cli.Command, std stdio) error {
	path := cmd.String("fleet")
	for _, f := range []string{"file", "journal", "mixed"} {
		if cmd.IsSet(f) {
			return usagef(cmd, "--fleet and --%s name two inputs; choose one", f)
		}
	}
	for _, f := range []string{"lock-timeout", "lock-stale-after", "fsync", "journal-max-bytes"} {
		if cmd.IsSet(f) {
			return usagef(cmd, "--%s applies to a journal lcwrap appends to, not to --fleet", f)
		}
	}
	if cmd.Bool("reconcile") {
		return usagef(cmd, "--reconcile checks processes on this host, and a fleet is other hosts' shipped evidence: run 'lcwrap status --reconcile' on each host")
	}
	if cmd.Args().Len() > 0 {
		return usagef(cmd, "status takes no arguments, not %q", cmd.Args().First())
	}
	r, f, err := fleetRead(cmd, path)
	if err != nil {
		return err
	}
	defer r.Close()
	_, noColor := os.LookupEnv("NO_COLOR")
	out := statusOutput{std: std, all: cmd.Bool("all"), json: cmd.Bool("json"), watch: cmd.Bool("watch"), seen: map[string]string{}}
	out.color = !out.json && !noColor && isTerminal(std.out)
	read := func() (fleet.Report, error) {
		if err := r.Pass(func(it *fleet.Item) error { f.Apply(it); return nil }); err != nil {
			return fleet.Report{}, exitCode(1, "reading the fleet at %s: %v", path, err)
		}
		f.SetPending(r.Pending())
		rep := f.Report(out.all)
		rep.Input = path
		fleetWarnings(&out, rep)
		return rep, nil
	}
	render := func(rep fleet.Report) error {
		out.frames++
		switch {
		case out.watch && out.color:
			fmt.Fprint(std.out, "\x1b[H\x1b[2J")
		case out.watch && out.frames > 1:
			fmt.Fprintln(std.out)
		}
		if out.json {
			enc := json.NewEncoder(std.out)
			enc.SetEscapeHTML(false)
			if !out.watch {
				enc.SetIndent("", "  ")
			}
			return enc.Encode(rep)
		}
		return fleet.Table(std.out, rep, fleet.TableOptions{Now: time.Now()})
	}
	if !out.watch {
		rep, err := read()
		if err != nil {
			return err
		}
		return render(rep)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		rep, err := read()
		if err != nil {
			return err
		}
		if err := render(rep); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// fleetTailLine is one line of `lcwrap tail --fleet`: the host, the
// cursor after which a later `tail --fleet --after` resumes, and the
// journal line as the host wrote it.
type fleetTailLine struct {
	Host   string          `json:"host"`
	Cursor string          `json:"cursor"`
	Event  json.RawMessage `json:"event"`
}

// fleetTail is `lcwrap tail --fleet PATH`.
func fleetTail(ctx context.Context, cmd *cli.Command, std stdio) error {
	path := cmd.String("fleet")
	switch {
	case cmd.Args().Len() > 0:
		return usagef(cmd, "unexpected argument %q", cmd.Args().First())
	case cmd.IsSet("journal"):
		return usagef(cmd, "--fleet and --journal name two inputs; choose one")
	case cmd.IsSet("after-event"):
		return usagef(cmd, "--after-event reads one journal; with --fleet give --after CURSOR (a cursor 'tail --fleet' printed)")
	}
	var after *fleet.Cursor
	if s := cmd.String("after"); s != "" {
		c, err := fleet.ParseCursor(s)
		if err != nil {
			return usagef(cmd, "--after: %v", err)
		}
		after = &c
	}
	r, f, err := fleetRead(cmd, path)
	if err != nil {
		return err
	}
	defer r.Close()
	if after != nil {
		r.After(*after)
	}
	child, host, follow := cmd.String("child"), cmd.String("host"), cmd.Bool("follow")
	w := bufio.NewWriter(std.out)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	damaged := 0
	print := func(it *fleet.Item) error {
		o := f.Apply(it)
		if it.Before {
			return nil
		}
		if o.Damage {
			damaged++
			if d := it.Damage; d != nil && (host == "" || d.Host == host) {
				w.Flush()
				fmt.Fprintf(std.err, "lcwrap: not an event%s at %s byte %d (record %d): %s: %s\n", hostOf(d.Host), d.File, d.Offset, d.Index, d.Class, oneLine(d.Reason))
			}
			return nil
		}
		if !o.Shown() || child != "" && it.Event.ChildID != child || host != "" && it.Host != host {
			return nil
		}
		return enc.Encode(fleetTailLine{Host: it.Host, Cursor: it.Cursor.String(), Event: json.RawMessage(slices.Clone(it.Body))})
	}
	if !follow {
		if err := r.Pass(print); err != nil {
			return fleetTailError(path, err)
		}
		return nil
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err = r.Follow(ctx, 200*time.Millisecond, print, w.Flush)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return fleetTailError(path, err)
}

func hostOf(h string) string {
	if h == "" {
		return " (no host)"
	}
	return " from host " + h
}

func fleetTailError(path string, err error) error {
	switch {
	case errors.Is(err, fleet.ErrCursorNotFound), errors.Is(err, fleet.ErrManyLive):
		return exitCode(1, "tail --fleet %s: %v", path, err)
	case err != nil:
		return exitCode(1, "tail --fleet %s: %v", path, err)
	}
	return nil
}

// fleetSnapshot is `lcwrap snapshot --fleet PATH`.
func fleetSnapshot(cmd *cli.Command, std stdio) error {
	reason := cmd.String("reason")
	switch {
	case cmd.Args().Len() > 0:
		return usagef(cmd, "snapshot takes no arguments, not %q", cmd.Args().First())
	case cmd.IsSet("journal"):
		return usagef(cmd, "--fleet and --journal name two inputs; choose one")
	case !slices.Contains(projection.SnapshotReasons, reason):
		return usagef(cmd, "--reason must be one of %s, not %q", strings.Join(projection.SnapshotReasons, ", "), reason)
	}
	path := cmd.String("fleet")
	r, f, err := fleetRead(cmd, path)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.Pass(func(it *fleet.Item) error { f.Apply(it); return nil }); err != nil {
		return exitCode(1, "reading the fleet at %s: %v", path, err)
	}
	rep := f.Report(true)
	if !rep.Evidence {
		return exitCode(1, "no records in the fleet at %s: a snapshot of nothing would say nothing runs", path)
	}
	fmt.Fprintf(std.err, "lcwrap: a fleet snapshot rests on shipped evidence (each host as of its last-heard time) and checks no process: complete is false\n")
	enc := json.NewEncoder(std.out)
	enc.SetEscapeHTML(false)
	return enc.Encode(fleet.BuildSnapshot(rep, reason))
}
