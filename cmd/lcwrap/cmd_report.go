package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/fleet"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/outpath"
	"github.com/lcwrap/lcwrap/internal/redact"
	htmlreport "github.com/lcwrap/lcwrap/internal/report" // app.go's report prints an error
	"github.com/lcwrap/lcwrap/internal/view"
)

func reportCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "write one self-contained HTML file: timeline, table, events",
		Description: "Reads the journal (or a stream with --file) and writes one HTML file that opens\n" +
			"offline (inline CSS and SVG, no script, a Content-Security-Policy that forbids\n" +
			"every fetch): a timeline with one bar per child coloured by state (waiting and\n" +
			"stale spans visible), nested by lineage; a table of the children; a section\n" +
			"per child with its last events, its capabilities and why each unknown one is\n" +
			"unknown. Text is redacted. Past --limit children, ended ones are counted per\n" +
			"state instead of drawn, and the report says how many.\n" +
			"With --fleet PATH it reads a gateway Collector's output (docs/fleet.md): a\n" +
			"host table, one timeline lane per host (its times on the gateway's clock),\n" +
			"and every child with its host; --child ID matches that id on every host.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "journal", Usage: "journal `PATH` (default $LCWRAP_JOURNAL, else $XDG_STATE_HOME/lcwrap/journal.jsonl, else ~/.local/state/lcwrap/journal.jsonl)"},
			&cli.StringFlag{Name: "file", Usage: "read events from `PATH` (- for standard input) instead of the journal"},
			&cli.BoolFlag{Name: "mixed", Usage: "with --file: lines that are not lifecycle events are log lines (a CI log)"},
			&cli.StringFlag{Name: "html", Usage: "write the report to `FILE` (default: standard output, when it is not a terminal); " + outpath.Help},
			&cli.StringFlag{Name: "since", Usage: "leave out children that ended before `WHEN`: a duration back from now (2h) or a UTC time (2026-12-01T09:00:00Z)"},
			&cli.StringSliceFlag{Name: "child", Usage: "only child `ID` and its descendants (repeatable)"},
			&cli.IntFlag{Name: "limit", Value: htmlreport.DefaultLimit, Usage: "children drawn one by one; ended ones past it are counted per state"},
			fleetFlag(),
			silentAfterFlag(),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error { return reportAction(cmd, std) },
	}
}

func reportAction(cmd *cli.Command, std stdio) error {
	file, out := cmd.String("file"), cmd.String("html")
	now := time.Now()
	switch {
	case strings.HasPrefix(out, "-") && out != "-":
		return usagef(cmd, "--html %q: give the file to write after --html, e.g. 'lcwrap report --html report.html'", out)
	case cmd.Args().Len() > 0:
		return usagef(cmd, "report takes no arguments, not %q: write the report with --html FILE (or to standard output), read a stream or a CI log with --file PATH", cmd.Args().First())
	case file != "" && cmd.IsSet("journal"):
		return usagef(cmd, "--journal and --file name two inputs; choose one")
	case file == "" && cmd.Bool("mixed"):
		return usagef(cmd, "--mixed applies to --file streams only")
	case cmd.Int("limit") < 1:
		return usagef(cmd, "--limit must be at least 1, not %d", cmd.Int("limit"))
	case out == "" && isTerminal(std.out):
		return usagef(cmd, "report writes HTML: give --html FILE, or redirect standard output to a file")
	case cmd.IsSet("fleet") && (file != "" || cmd.IsSet("journal")):
		return usagef(cmd, "--fleet and --%s name two inputs; choose one", map[bool]string{true: "file", false: "journal"}[file != ""])
	case cmd.IsSet("fleet") && cmd.Bool("mixed"):
		return usagef(cmd, "--mixed applies to --file streams only")
	case !cmd.IsSet("fleet"):
		if err := fleetOnly(cmd); err != nil {
			return err
		}
	}
	opts := htmlreport.Options{Now: now, Limit: int(cmd.Int("limit"))}
	if s := cmd.String("since"); s != "" {
		since, err := parseSince(s, now)
		if err != nil {
			return usagef(cmd, "--since %q: %v", s, err)
		}
		opts.Since = since.UnixMilli()
	}
	if cmd.IsSet("child") {
		opts.Children = cmd.StringSlice("child")
	}
	// Two readings where the input can be read again: the first chooses
	// the children drawn, the second keeps their histories only, so the
	// report's memory grows with the children drawn, not the input.
	var (
		read  htmlreport.Read
		again = true
		f1    *fleet.Fleet
	)
	switch {
	case cmd.IsSet("fleet"):
		path := cmd.String("fleet")
		opts.Input = path
		records := int64(-1) // what the first reading read
		read = func(m *view.Model, keep func(string) bool) error {
			r, f, err := fleetRead(cmd, path)
			if err != nil {
				return err
			}
			defer r.Close()
			if f1 == nil {
				f1 = f
				m.SetHostClock(f.HostClock)
			}
			n := int64(0)
			err = r.Pass(func(it *fleet.Item) error {
				if records >= 0 && n >= records {
					return errReadEnough
				}
				n++
				if keep != nil && (it.Event == nil || !keep(view.KeyOf(it.Host, it.Event.ChildID))) {
					return nil
				}
				f.ApplyTo(m, it)
				return nil
			})
			if records < 0 {
				records = n
			}
			if err != nil && !errors.Is(err, errReadEnough) {
				return exitCode(1, "reading the fleet at %s: %v", path, err)
			}
			return nil
		}
	case file != "":
		opts.Input = file
		var in io.Reader = std.in
		if file != "-" {
			fi, err := os.Stat(file)
			if err != nil {
				return exitCode(1, "%v", err)
			}
			again = fi.Mode().IsRegular() // a FIFO or a device is a stream: read once
		} else {
			again = false
		}
		lines := int64(-1) // what the first reading read
		read = func(m *view.Model, keep func(string) bool) error {
			r := in
			if file != "-" {
				f, err := os.Open(file)
				if err != nil {
					return exitCode(1, "%v", err)
				}
				defer f.Close()
				r = f
			}
			d := event.NewDecoder(r, event.DecoderOptions{Mixed: cmd.Bool("mixed"), Redact: redact.Text})
			n := int64(0)
			for lines < 0 || n < lines {
				rec, err := d.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return exitCode(1, "reading %s: %v", file, err)
				}
				n++
				if keep == nil || keep(rec.Event.ChildID) {
					m.Apply(&rec.Event, rec.Line.Bytes, 0)
				}
			}
			if lines < 0 {
				lines, opts.BadLines = n, d.Stats().Invalid
			}
			return nil
		}
	default:
		path, err := journalPath(cmd)
		if err != nil {
			return exitCode(1, "%v", err)
		}
		warnTrust(std, path)
		opts.Input = path
		last := int64(-1) // the last line the first reading read
		read = func(m *view.Model, keep func(string) bool) error {
			first := last < 0
			err := journal.Scan(path, 0, func(rec event.Record, raw []byte) error {
				if !first && rec.JournalSequence > last {
					return errReadEnough
				}
				if first {
					last = rec.JournalSequence
				}
				if keep == nil || keep(rec.Event.ChildID) {
					m.Apply(&rec.Event, raw, rec.JournalSequence)
				}
				return nil
			})
			if first && last < 0 {
				last = 0
			}
			var be *journal.BlockedError
			switch {
			case errors.As(err, &be):
				if first {
					opts.Blocked = be.Error() + "; the report shows what the lines before it say"
					fmt.Fprintf(std.err, "lcwrap: %s\n", oneLine(opts.Blocked))
				}
			case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errReadEnough):
				return exitCode(1, "cannot read the journal: %v", err)
			}
			return nil
		}
	}
	m, err := htmlreport.Build(read, again, view.NewModel, opts)
	if err != nil {
		return err
	}
	if f1 != nil {
		opts.Fleet = &htmlreport.Fleet{Hosts: f1.HostViews(), Totals: f1.Totals()}
	}
	if out == "" {
		_, err := htmlreport.Write(std.out, m, opts)
		return err
	}
	var buf bytes.Buffer
	sum, err := htmlreport.Write(&buf, m, opts)
	if err != nil {
		return exitCode(1, "%v", err)
	}
	if err := outpath.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return exitCode(1, "cannot write the report: %v", err)
	}
	for _, id := range sum.Unmatched {
		fmt.Fprintf(std.err, "lcwrap: no child %s in %s\n", shorten(id, 64), opts.Input)
	}
	agg := 0
	for _, n := range sum.Aggregated {
		agg += n
	}
	msg := fmt.Sprintf("wrote %s: %s drawn", out, count(sum.Drawn, "child", "children"))
	if agg > 0 {
		msg += fmt.Sprintf(", %s counted, not drawn (--limit %d)", count(agg, "ended one", "ended ones"), opts.Limit)
	}
	fmt.Fprintln(std.out, msg)
	return nil
}

// errReadEnough ends a second reading of a report's input where the
// first one ended.
var errReadEnough = errors.New("read as far as the first reading")

// count says "1 child" or "n children".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// parseSince reads --since: a duration back from now, or a UTC time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, errors.New("a duration back from now must not be negative")
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, errors.New("not a duration (90m, 2h) nor an RFC 3339 time (2026-12-01T09:00:00Z)")
}
