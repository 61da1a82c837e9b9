package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/exitcode"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/reconcile"
	"github.com/lcwrap/lcwrap/internal/redact"
	"github.com/lcwrap/lcwrap/internal/termtext"
	"github.com/lcwrap/lcwrap/internal/view"
)

// exitRefused is reconcile's answer to a snapshot it will not apply
// (unreadable, malformed, incomplete): nothing was appended.
const exitRefused = exitcode.Refused

// maxSnapshotBytes caps a snapshot read into memory.
const maxSnapshotBytes = 16 << 20

func statusCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show what is running, what ended and how",
		Description: "Reads the journal (or any event stream with --file) and prints one row per\n" +
			"child: running ones first, ended ones with --all. FRESHNESS is the time since\n" +
			"the child's lifecycle source last said anything; a child is stale after 3\n" +
			"heartbeat intervals of silence (\"—\" when it declares no heartbeat). A state\n" +
			"marked * is provisional: events are missing. A PID-only adopted process shows\n" +
			"as observed: its presence is known, not its state. With no lifecycle evidence\n" +
			"at all it prints: " + projection.NoEvidence + "\n" +
			"--reconcile checks the recorded identity (pid and start time) of each stale\n" +
			"child's wrapper, or of an adopted process, and appends a lost event only when\n" +
			"that process is provably gone; a live one, or one on another host, is never\n" +
			"declared lost.",
		Flags: append(journalFlags(),
			&cli.StringFlag{Name: "file", Usage: "read events from `PATH` (- for standard input) instead of the journal"},
			&cli.BoolFlag{Name: "mixed", Usage: "with --file: lines that are not lifecycle events are log lines (a CI log)"},
			&cli.BoolFlag{Name: "all", Usage: "include children that ended"},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON document (schema lcwrap-status/1) instead of the table"},
			&cli.BoolFlag{Name: "reconcile", Usage: "append lost for stale children whose wrapper or adopted process is provably gone"},
			&cli.BoolFlag{Name: "watch", Usage: "refresh every second until interrupted"},
			fleetFlag(), silentAfterFlag(),
		),
		Action: func(ctx context.Context, cmd *cli.Command) error { return statusAction(ctx, cmd, std) },
	}
}

func statusAction(ctx context.Context, cmd *cli.Command, std stdio) error {
	if cmd.IsSet("fleet") {
		return fleetStatus(ctx, cmd, std)
	}
	if err := fleetOnly(cmd); err != nil {
		return err
	}
	file := cmd.String("file")
	switch {
	case cmd.Args().Len() > 0:
		return usagef(cmd, "status takes no arguments, not %q; use --file PATH to read a stream", cmd.Args().First())
	case file != "" && cmd.Bool("reconcile"):
		return usagef(cmd, "--reconcile appends to the journal; it cannot be combined with --file")
	case file != "" && cmd.IsSet("journal"):
		return usagef(cmd, "--journal and --file name two inputs; choose one")
	case file == "-" && cmd.Bool("watch"):
		return usagef(cmd, "--watch re-reads its input, and standard input cannot be re-read; use --file PATH")
	case file == "" && cmd.Bool("mixed"):
		return usagef(cmd, "--mixed applies to --file streams only")
	}
	opts, err := journalOptions(cmd)
	if err != nil {
		return err
	}
	_, noColor := os.LookupEnv("NO_COLOR")
	out := statusOutput{std: std, all: cmd.Bool("all"), json: cmd.Bool("json"), watch: cmd.Bool("watch"), seen: map[string]string{}}
	out.color = !out.json && !noColor && isTerminal(std.out)
	out.width = terminalWidth(std.out)
	out.allCmd = allCommand(cmd)
	var src statusSource
	if file != "" {
		src = &streamSource{path: file, in: std.in, mixed: cmd.Bool("mixed")}
	} else {
		path, err := journalPath(cmd)
		if err != nil {
			return exitCode(1, "%v", err)
		}
		warnTrust(std, path)
		js := &journalSource{t: projection.NewTracker(path)}
		if cmd.Bool("reconcile") {
			js.r = reconcile.New(js.t, opts, event.System, time.Now)
			defer js.r.Close()
		}
		src = js
	}
	var missing *missingError
	if !out.watch {
		rep, err := src.read(ctx, &out)
		if errors.As(err, &missing) {
			return errors.Join(out.render(rep), err) // what it knows: nothing
		}
		if err != nil {
			return err
		}
		return out.render(rep)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		rep, err := src.read(ctx, &out)
		if ctx.Err() != nil {
			return nil // ^C: watching ends normally
		}
		if errors.As(err, &missing) {
			out.warnOnce("missing", missing.msg) // it may appear: keep watching
			err = nil
		}
		if err != nil {
			return err
		}
		if err := out.render(rep); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// statusSource is what status reads: the journal or a stream.
type statusSource interface {
	// read returns the picture now, reporting warnings through out.
	read(ctx context.Context, out *statusOutput) (projection.Report, error)
}

// journalSource reads the journal: once, or (watching) by following it,
// reconciling stale children when asked.
type journalSource struct {
	t         *projection.Tracker
	r         *reconcile.Reconciler
	following bool
	followErr chan error
}

func (s *journalSource) read(ctx context.Context, out *statusOutput) (projection.Report, error) {
	if !s.following {
		if _, err := os.Stat(s.t.Path()); errors.Is(err, fs.ErrNotExist) {
			return s.t.Report(time.Now(), out.all), noJournal(s.t.Path())
		}
		if err := s.t.Refresh(); err != nil && !errors.Is(err, journal.ErrBlocked) {
			return projection.Report{}, exitCode(1, "cannot read the journal: %v", err)
		}
		if out.watch {
			s.following, s.followErr = true, make(chan error, 1)
			go func() { s.followErr <- s.t.Follow(ctx) }()
		}
	}
	select {
	case err := <-s.followErr:
		if ctx.Err() == nil {
			return projection.Report{}, exitCode(1, "cannot follow the journal: %v", err)
		}
	default:
	}
	be := s.t.Blocked()
	if be != nil {
		out.blocked(be)
	}
	if s.r != nil && be != nil {
		out.warnOnce("reconcile", "reconcile skipped: nothing can be appended to a blocked journal")
	}
	if s.r != nil && be == nil {
		findings, err := s.r.Lost(ctx)
		for _, f := range findings {
			out.finding(f)
		}
		if err != nil && ctx.Err() == nil {
			return projection.Report{}, exitCode(1, "reconcile: cannot record lost children in %s: %v", s.t.Path(), err)
		}
	}
	return s.t.Report(time.Now(), out.all), nil
}

// streamSource reads a file or standard input from its start each time.
type streamSource struct {
	path  string
	in    io.Reader
	mixed bool
}

func (s *streamSource) read(_ context.Context, out *statusOutput) (projection.Report, error) {
	r := s.in
	if s.path != "-" {
		f, err := os.Open(s.path)
		if errors.Is(err, fs.ErrNotExist) {
			rep := projection.New().Report(time.Now(), out.all)
			rep.Input = s.path
			return rep, noStream(s.path)
		}
		if err != nil {
			return projection.Report{}, exitCode(1, "%v", err)
		}
		defer f.Close()
		r = f
	}
	p := projection.New()
	st, _, err := projection.ReadStream(r, p, event.DecoderOptions{Mixed: s.mixed, Redact: redact.Text})
	if err != nil {
		return projection.Report{}, exitCode(1, "reading %s: %v", s.path, err)
	}
	if st.Invalid > 0 {
		out.warnOnce("bad:"+strconv.FormatInt(st.Invalid, 10), fmt.Sprintf("%d lines of %s are not valid events and were skipped ('lcwrap validate %s' shows why)", st.Invalid, s.path, s.path))
	}
	rep := p.Report(time.Now(), out.all)
	rep.Input, rep.BadLines = s.path, st.Invalid
	return rep, nil
}

// statusOutput prints frames and warnings; in watch mode each warning is
// printed once.
type statusOutput struct {
	std                     stdio
	all, json, color, watch bool
	width                   int               // the terminal's columns; 0 when not a terminal
	allCmd                  string            // the command line that shows the ended children too
	seen                    map[string]string // warnings printed, by key
	frames                  int
}

func (o *statusOutput) warnOnce(key, msg string) {
	if o.seen[key] == msg {
		return
	}
	o.seen[key] = msg
	fmt.Fprintf(o.std.err, "lcwrap: %s\n", oneLine(msg))
}

func (o *statusOutput) blocked(be *journal.BlockedError) {
	o.warnOnce("blocked", be.Error()+"; showing what the lines before it say")
}

// finding says what reconciling one stale child found.
func (o *statusOutput) finding(f reconcile.Finding) {
	who := f.Checked
	if who == "" {
		o.warnOnce("finding:"+f.ChildID, fmt.Sprintf("%s is stale; %s", f.ChildID, f.Check.Reason))
		return
	}
	pid := f.Check.Identity.PID
	var msg string
	switch {
	case f.Appended:
		msg = fmt.Sprintf("%s is lost: its %s (pid %d) is gone: %s; recorded in the journal", f.ChildID, who, pid, f.Check.Reason)
		if cp := f.ChildProcess; cp != nil {
			switch cp.Status {
			case event.Alive.String():
				msg += fmt.Sprintf("; its own process (pid %d) is still present: 'lcwrap adopt %d' observes it", cp.Identity.PID, cp.Identity.PID)
			case event.Gone.String():
				msg += "; its own process is gone too"
			}
		}
	case f.Gone():
		msg = fmt.Sprintf("%s ended while its %s was being checked; not marked lost", f.ChildID, who)
	case f.Check.Status == event.Alive.String():
		msg = fmt.Sprintf("%s is stale, but its %s (pid %d) is alive: not lost", f.ChildID, who, pid)
	default:
		msg = fmt.Sprintf("%s is stale; its %s cannot be checked from here (%s): not lost", f.ChildID, who, f.Check.Reason)
	}
	o.warnOnce("finding:"+f.ChildID, msg)
}

func (o *statusOutput) render(rep projection.Report) error {
	w := o.std.out
	o.frames++
	switch {
	case o.watch && o.color:
		fmt.Fprint(w, "\x1b[H\x1b[2J") // in place, on a terminal
	case o.watch && o.frames > 1:
		fmt.Fprintln(w)
	}
	if o.json {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if !o.watch {
			enc.SetIndent("", "  ")
		}
		if err := enc.Encode(rep); err != nil {
			return err
		}
		// encoding/json leaves DEL and the C1 controls raw: escaped, the
		// document is the same JSON.
		_, err := io.WriteString(w, termtext.Text(b.String()))
		return err
	}
	return view.Table(w, rep, view.TableOptions{Width: o.width, Color: o.color, Now: time.Now(), AllCommand: o.allCmd})
}

// allCommand is the status command line that shows the ended children of
// the same input: --file and --mixed, or --journal, as given, and --all.
func allCommand(cmd *cli.Command) string {
	words := []string{"lcwrap", "status"}
	if f := cmd.String("file"); f != "" {
		words = append(words, "--file", shellWord(f))
		if cmd.Bool("mixed") {
			words = append(words, "--mixed")
		}
	} else if cmd.IsSet("journal") {
		words = append(words, "--journal", shellWord(cmd.String("journal")))
	}
	return strings.Join(append(words, "--all"), " ")
}

// shellWord quotes s for a shell (in double quotes: the hint it goes in
// is in single ones) when it needs it.
func shellWord(s string) string {
	s = termtext.Line(s)
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-") == "" {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`").Replace(s) + `"`
}

func exitText(v *projection.ChildView) string { return view.Exit(v) }

// shorten makes foreign text safe for one table cell: control characters
// become spaces (no escape sequence reaches the terminal) and the text is
// cut to n characters.
func shorten(s string, n int) string { return termtext.Shorten(s, n) }

func reconcileCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  "reconcile",
		Usage: "apply an authoritative snapshot to the journal, with an audit event per correction",
		Description: "Reads an AuthoritativeSnapshot (the contract's shape) and compares it with the\n" +
			"journal. Each non-terminal child whose state it corrects gets a reconciliation\n" +
			"event (before, after, snapshotId); a terminal child is never changed. A\n" +
			"non-terminal child the snapshot's coverage includes but leaves out gets a\n" +
			"diagnostic event counting consecutive complete misses; only --grace misses in\n" +
			"a row make it stale, state unknown (never lost). A snapshot without\n" +
			"complete: true, source, sourceEpoch, snapshotId, observedAt or coverage is\n" +
			"refused.",
		Flags: append(journalFlags(),
			&cli.StringFlag{Name: "snapshot", Usage: "the snapshot to apply: `FILE`, or - for standard input"},
			&cli.IntFlag{Name: "grace", Value: projection.DefaultGrace, Usage: "consecutive complete misses before an omitted child is surfaced as stale, state unknown"},
			fleetFlag(),
		),
		Action: func(ctx context.Context, cmd *cli.Command) error { return reconcileAction(ctx, cmd, std) },
	}
}

func reconcileAction(ctx context.Context, cmd *cli.Command, std stdio) error {
	if err := refuseFleet(cmd, exitRefused); err != nil {
		return err
	}
	name := cmd.String("snapshot")
	switch {
	case cmd.Args().Len() > 0:
		return usagef(cmd, "reconcile takes no arguments, not %q; give the snapshot with --snapshot FILE", cmd.Args().First())
	case name == "":
		return usagef(cmd, "--snapshot FILE (or - for standard input) is required")
	case cmd.Int("grace") < 1:
		return usagef(cmd, "--grace must be at least 1, not %d", cmd.Int("grace"))
	}
	opts, err := journalOptions(cmd)
	if err != nil {
		return err
	}
	path, err := journalPath(cmd)
	if err != nil {
		return exitCode(1, "%v", err)
	}
	b, err := readSnapshot(name, std.in)
	if err != nil {
		return exitCode(exitRefused, "snapshot %s refused: %v; nothing was appended", name, err)
	}
	s, err := event.ParseSnapshot(b)
	if err != nil {
		return exitCode(exitRefused, "snapshot %s refused: %v; nothing was appended", name, err)
	}
	if !s.Complete {
		return exitCode(exitRefused, "snapshot %s refused: complete is not true, and an incomplete view can neither correct a child nor prove one absent; nothing was appended", name)
	}
	r := reconcile.New(projection.NewTracker(path), opts, event.System, time.Now)
	defer r.Close()
	plan, err := r.Snapshot(ctx, s, int(cmd.Int("grace")))
	printPlan(std, s, plan)
	if err != nil {
		return exitCode(1, "reconcile: journal %s: %v", path, err)
	}
	return nil
}

func readSnapshot(name string, in io.Reader) ([]byte, error) {
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		in = f
	}
	b, err := io.ReadAll(io.LimitReader(in, maxSnapshotBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSnapshotBytes {
		return nil, fmt.Errorf("larger than %d MiB", maxSnapshotBytes>>20)
	}
	return b, nil
}

func printPlan(std stdio, s event.Snapshot, plan projection.Plan) {
	for _, c := range plan.Corrections {
		before := string(c.Before)
		if before == "" {
			before = "unknown"
		}
		fmt.Fprintf(std.out, "corrected %s: %s → %s\n", shorten(c.ChildID, 64), before, c.After)
	}
	counted := 0
	for _, o := range plan.Omissions {
		rec := o.Record
		switch {
		case rec.ConsecutiveMisses == 0:
			fmt.Fprintf(std.out, "listed again %s: miss count reset\n", shorten(o.ChildID, 64))
			continue
		case rec.Intent == projection.IntentStaleUnknown:
			fmt.Fprintf(std.out, "omitted %s: %d consecutive complete misses (grace %d): now stale, state unknown\n", shorten(o.ChildID, 64), rec.ConsecutiveMisses, rec.Grace)
		default:
			fmt.Fprintf(std.out, "omitted %s: %d of %d consecutive complete misses\n", shorten(o.ChildID, 64), rec.ConsecutiveMisses, rec.Grace)
		}
		counted++
	}
	for _, rf := range plan.Refusals {
		fmt.Fprintf(std.err, "lcwrap: %s is %s (terminal): the snapshot's %s is not applied; terminal states are immutable\n", shorten(rf.ChildID, 64), rf.State, rf.SnapshotState)
	}
	for _, id := range plan.Unknown {
		fmt.Fprintf(std.err, "lcwrap: %s is not in the journal: nothing to correct\n", shorten(id, 64))
	}
	for _, id := range plan.Older {
		fmt.Fprintf(std.err, "lcwrap: %s: the snapshot reports an older sequence than the journal holds: not applied\n", shorten(id, 64))
	}
	fmt.Fprintf(std.out, "snapshot %s from %s: %d corrected, %d omissions counted, %d refused (terminal)\n",
		shorten(s.SnapshotID, 64), shorten(s.Source, 64), len(plan.Corrections), counted, len(plan.Refusals))
}
