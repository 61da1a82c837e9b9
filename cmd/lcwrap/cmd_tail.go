package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// errFound stops a scan once the cursor event is found.
var errFound = errors.New("found")

func tailCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  "tail",
		Usage: "print journal lines after a cursor",
		Description: "Prints journal lines, as stored, whose journalSequence is greater than the\n" +
			"cursor (--after N, or the line of --after-event ID). A character a terminal\n" +
			"would act on (DEL or a C1 control, which JSON allows raw in a string) is\n" +
			"written as its \\u escape: the same JSON value. --follow keeps printing\n" +
			"appended lines (it looks every 50 ms) until SIGINT or SIGTERM, and goes on\n" +
			"after a 'journal repair'. Without --follow, a bad line stops it with a message\n" +
			"naming the line and byte offset. -n N prints only the last N of the lines it\n" +
			"would print (then, with --follow, the new ones). A --child the journal has\n" +
			"no event of is an error (exit 1); with --follow, tail waits for its events.",
		Flags: []cli.Flag{
			journalFlags()[0], // --journal
			&cli.StringFlag{Name: "after", Usage: "print lines after journalSequence `N` (with --fleet: after a fleet CURSOR)"},
			&cli.StringFlag{Name: "after-event", Usage: "print lines after the line holding eventId `ID`"},
			&cli.StringFlag{Name: "child", Usage: "print only events of child `ID`"},
			&cli.Int64Flag{Name: "last", Aliases: []string{"n"}, Usage: "print only the last `N` lines (then, with --follow, the new ones)"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing appended lines until interrupted"},
			fleetFlag(),
			&cli.StringFlag{Name: "host", Usage: "with --fleet: print only events of host `NAME`"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.IsSet("fleet") {
				return fleetTail(ctx, cmd, std)
			}
			if cmd.Args().Len() > 0 {
				return usagef(cmd, "unexpected argument %q", cmd.Args().First())
			}
			if cmd.IsSet("host") {
				return usagef(cmd, "--host applies to --fleet only")
			}
			var after int64
			if s := cmd.String("after"); s != "" {
				n, err := strconv.ParseInt(s, 10, 64)
				switch {
				case err != nil:
					return usagef(cmd, "invalid value %q for --after: not a whole number (a journalSequence; with --fleet, a fleet cursor)", s)
				case n < 0:
					return usagef(cmd, "--after must be 0 or more, not %d", n)
				}
				after = n
			}
			if cmd.IsSet("after") && cmd.IsSet("after-event") {
				return usagef(cmd, "use --after or --after-event, not both")
			}
			path, err := journalPath(cmd)
			if err != nil {
				return usagef(cmd, "%v", err)
			}
			warnTrust(std, path)
			if id := cmd.String("after-event"); id != "" {
				if after, err = findEvent(path, id); err != nil {
					return tailError(path, err)
				}
			}
			last := cmd.Int64("last")
			if last < 0 {
				return usagef(cmd, "--last must be 0 or more, not %d", last)
			}
			// ^C and SIGTERM end tail at once, a long backlog included:
			// the reader's callback stops at the next line.
			ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			t := tailer{ctx: ctx, child: cmd.String("child"), after: after, follow: cmd.Bool("follow"), out: bufio.NewWriter(std.out)}
			if cmd.IsSet("last") {
				t.last = &ring{n: int(min(last, math.MaxInt32))}
			}
			defer t.out.Flush()
			// What is there now: read whole, for --last and to know
			// whether --child has any event at all.
			err = journal.Read(path, journal.ReadOptions{}, t.take)
			if errors.Is(err, context.Canceled) {
				return nil
			}
			if !t.follow || (err != nil && !errors.Is(err, fs.ErrNotExist)) {
				t.flush()
				if err == nil && t.child != "" && !t.known {
					return exitCode(1, "no events of child %s in journal %s ('lcwrap status --all' lists the children)", t.child, path)
				}
				return tailError(path, err)
			}
			t.flush()
			t.last = nil
			if errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(std.err, "lcwrap: no journal at %s yet: waiting for it to be created\n", termtext.Line(path))
			} else if t.child != "" && !t.known {
				fmt.Fprintf(std.err, "lcwrap: no events of child %s in journal %s yet: waiting for them\n", termtext.Line(t.child), termtext.Line(path))
			}
			err = journal.Follow(ctx, path, t.seen, t.take, func(be *journal.BlockedError) {
				t.out.Flush()
				wait := "waiting for 'lcwrap journal repair'"
				if be.Torn() {
					wait = "a torn final line: waiting for the next writer to quarantine it by itself (or for 'lcwrap journal repair')"
				}
				fmt.Fprintf(std.err, "lcwrap: %s\n", oneLine(fmt.Sprintf("journal %s stops at line %d (byte %d): %s: %s; %s",
					path, be.Line, be.Offset, be.Class, be.Reason, wait)))
			})
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return tailError(path, err)
		},
	}
}

// tailer prints the journal lines tail selects.
type tailer struct {
	ctx    context.Context // ended by ^C or SIGTERM
	child  string
	after  int64 // the cursor
	follow bool
	out    *bufio.Writer
	last   *ring // with --last, the lines held until the read ends
	seen   int64 // the journalSequence of the last line read
	known  bool  // a line of child was read (after the cursor or not)
}

// take is the journal reader's callback: every valid line, in order.
func (t *tailer) take(rec event.Record, raw []byte) error {
	if err := t.ctx.Err(); err != nil {
		return err
	}
	t.seen = max(t.seen, rec.JournalSequence)
	if t.child != "" && rec.Event.ChildID != t.child {
		return nil
	}
	t.known = true
	if rec.JournalSequence <= t.after {
		return nil
	}
	line := termtext.Line(string(raw))
	if t.last != nil {
		t.last.add(line)
		return nil
	}
	t.out.WriteString(line)
	t.out.WriteByte('\n')
	if t.follow {
		return t.out.Flush()
	}
	return nil
}

// flush prints the lines --last held.
func (t *tailer) flush() {
	if t.last == nil {
		return
	}
	for _, l := range t.last.lines() {
		t.out.WriteString(l)
		t.out.WriteByte('\n')
	}
	t.out.Flush()
}

// ring keeps the last n lines added.
type ring struct {
	n    int
	buf  []string
	next int // where the next line goes once buf is full
}

func (r *ring) add(l string) {
	switch {
	case r.n == 0:
	case len(r.buf) < r.n:
		r.buf = append(r.buf, l)
	default:
		r.buf[r.next] = l
		r.next = (r.next + 1) % r.n
	}
}

// lines returns the lines kept, oldest first.
func (r *ring) lines() []string {
	return append(append([]string(nil), r.buf[r.next:]...), r.buf[:r.next]...)
}

// findEvent returns the journalSequence of the first line holding eventId id.
func findEvent(path, id string) (int64, error) {
	var at int64
	err := journal.Scan(path, 0, func(rec event.Record, raw []byte) error {
		if rec.Event.EventID == id {
			at = rec.JournalSequence
			return errFound
		}
		return nil
	})
	if errors.Is(err, errFound) {
		return at, nil
	}
	if err == nil {
		err = fmt.Errorf("no event with eventId %q in journal %s", id, path)
	}
	return 0, err
}

// tailError turns a reading error into exit status 1 with one line.
func tailError(path string, err error) error {
	var be *journal.BlockedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &be) && be.Torn():
		return exitCode(1, "journal %s stops at line %d (byte %d): %s: %s; a torn final line (a writer killed while writing it): the next writer quarantines it by itself, or 'lcwrap journal repair' does it now",
			path, be.Line, be.Offset, be.Class, be.Reason)
	case errors.As(err, &be):
		return exitCode(1, "journal %s stops at line %d (byte %d): %s: %s; the lines after it are not shown: run 'lcwrap journal repair'",
			path, be.Line, be.Offset, be.Class, be.Reason)
	case errors.Is(err, fs.ErrNotExist):
		return noJournal(path)
	}
	return exitCode(1, "tail: %v", err)
}
