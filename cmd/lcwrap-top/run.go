package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/term"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/fleet"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/view/live"
	"github.com/lcwrap/lcwrap/internal/view/tui"
)

// Exit codes, as lcwrap's own.
const (
	exitFailed = 1
	exitUsage  = 125
)

// NotATerminal is the one line top answers when its output is not a
// terminal.
const NotATerminal = "lcwrap: top needs a terminal; use 'lcwrap status --watch' for a refreshing table, or 'lcwrap status --json' for a program"

func run(args []string) int {
	fs := flag.NewFlagSet("lcwrap top", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	path := fs.String("journal", "", "the journal to follow (default: $LCWRAP_JOURNAL, else the state directory's)")
	interval := fs.Duration("interval", tui.DefaultInterval, "the least time between two redraws of the clock")
	fleetPath := fs.String("fleet", "", "a fleet: the gateway Collector's output (a file, a directory or a glob) instead of a journal")
	silentAfter := fs.Duration("silent-after", fleet.DefaultSilentAfter, "with -fleet: a host unheard for this long is silent")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(os.Stderr, "lcwrap: %v (see 'lcwrap top --help')\n", err)
		return exitUsage
	}
	if *interval < tui.MinInterval {
		fmt.Fprintf(os.Stderr, "lcwrap: --interval %v: give at least %v (see 'lcwrap top --help')\n", *interval, tui.MinInterval)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "lcwrap: top takes no arguments, not %q (see 'lcwrap top --help')\n", fs.Arg(0))
		return exitUsage
	}
	if *fleetPath != "" && *path != "" {
		fmt.Fprintln(os.Stderr, "lcwrap: --fleet and --journal name two inputs; choose one (see 'lcwrap top --help')")
		return exitUsage
	}
	if *silentAfter <= 0 {
		fmt.Fprintf(os.Stderr, "lcwrap: --silent-after must be positive, not %v (see 'lcwrap top --help')\n", *silentAfter)
		return exitUsage
	}
	if !term.IsTerminal(int(os.Stdout.Fd())) {
		fmt.Fprintln(os.Stderr, NotATerminal)
		return exitUsage
	}
	_, noColor := os.LookupEnv("NO_COLOR")
	if *fleetPath != "" {
		r, err := fleet.NewReader(*fleetPath)
		if errors.Is(err, fleet.ErrNoOutput) {
			fmt.Fprintf(os.Stderr, "lcwrap: %v: nothing was shipped there yet; --fleet names the gateway's output (the file exporter's directory, a file of it, or a glob)\n", err)
			return exitFailed
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "lcwrap: --fleet: %v\n", err)
			return exitFailed
		}
		defer r.Close()
		follower := live.NewFleet(*fleetPath, r, fleet.Options{SilentAfter: *silentAfter})
		m := tui.New(tui.Options{Live: follower, Color: !noColor, Interval: *interval})
		var inner tea.Model = m
		if os.Getenv(panicHook) == "key" {
			inner = panicOnKey{m}
		}
		return show(inner, m, follower, *fleetPath)
	}
	if *path == "" {
		p, err := journal.DefaultPath()
		if err != nil {
			fmt.Fprintf(os.Stderr, "lcwrap: %v\n", err)
			return exitFailed
		}
		*path = p
	}
	var lines live.Lines = live.JournalLines(*path)
	if os.Getenv(panicHook) == "follower" {
		lines = panicking{lines}
	}
	follower := live.New(lines)
	m := tui.New(tui.Options{Live: follower, Color: !noColor, Interval: *interval})
	var inner tea.Model = m
	if os.Getenv(panicHook) == "key" {
		inner = panicOnKey{m}
	}
	return show(inner, m, follower, *path)
}

// show runs the model on the terminal until a key, a signal or an error
// ends it, and restores the terminal however it ends.
//
// bubbletea decodes the keys and runs the event loop, without its
// renderer: that one redraws on a ticker (10 frames a second) whether or
// not anything changed, and an idle top would wake up for it. drawn
// draws instead, only when the screen changes (docs/view.md, idle).
func show(inner tea.Model, m *tui.Model, follower *live.Follower, path string) (code int) {
	t, err := openTerminal(os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "lcwrap: top: %v\n", err)
		return exitFailed
	}
	d := &drawn{inner: inner, scr: tui.NewScreen(os.Stdout, 0)}
	defer func() {
		// The last resort: a panic outside the model and its commands.
		if r := recover(); r != nil {
			t.restore()
			report(recovered("top", r))
			code = exitFailed
		}
	}()
	defer t.restore()
	w, h := t.size()
	d.Update(tea.WindowSizeMsg{Width: w, Height: h})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := tea.NewProgram(d, tea.WithoutRenderer(), tea.WithInput(t.in), tea.WithOutput(os.Stdout), tea.WithoutSignalHandler())
	go func() {
		defer func() {
			if r := recover(); r != nil {
				p.Send(tui.FatalMsg{Err: recovered("following "+path, r)})
			}
		}()
		follower.Run(ctx)
	}()
	go signals(ctx, p, t)
	go func() {
		// Reading a large journal leaves much garbage behind; left to
		// itself the runtime would return it to the system slowly, over
		// minutes. Do it once, after the first frame, so that an idle
		// top costs as little as it can.
		select {
		case <-follower.CaughtUp():
		case <-ctx.Done():
			return
		}
		select {
		case <-time.After(time.Second):
			debug.FreeOSMemory()
			// From here on one processor is plenty, and fewer of them
			// wake up for each timer.
			runtime.GOMAXPROCS(1)
			quietGC()
		case <-ctx.Done():
		}
	}()
	_, err = p.Run()
	cancel()
	t.restore()
	switch {
	case d.err != nil:
		report(d.err)
		return exitFailed
	case m.Err() != nil:
		report(m.Err())
		return exitFailed
	case err == nil, errors.Is(err, tea.ErrInterrupted):
		return 0
	}
	fmt.Fprintf(os.Stderr, "lcwrap: top: %v\n", err)
	return exitFailed
}

// report prints why top ended, with the stack of a panic.
func report(err error) {
	fmt.Fprintf(os.Stderr, "lcwrap: %v\n", err)
	var pe *panicError
	if errors.As(err, &pe) {
		os.Stderr.Write(pe.stack)
	}
}

// signals ends the program on SIGINT, SIGTERM and SIGHUP (the terminal is
// restored on the way out) and tells it the terminal's new size on
// SIGWINCH. Between signals it sleeps.
func signals(ctx context.Context, p *tea.Program, t *terminal) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGWINCH)
	defer signal.Stop(ch)
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-ch:
			if s == syscall.SIGWINCH {
				w, h := t.size()
				p.Send(tea.WindowSizeMsg{Width: w, Height: h})
				continue
			}
			p.Quit()
			return
		}
	}
}

// panicHook names the environment variable that makes top panic: in the
// follower once it has read the journal ("follower"), or in the model at
// the key ! ("key"). The tests prove with it that a panic leaves the
// terminal as it was.
const panicHook = "LCWRAP_TOP_TEST_PANIC"

type panicking struct{ live.Lines }

func (p panicking) Follow(ctx context.Context, o journal.ReadOptions, fn func(event.Record, []byte) error) error {
	return p.Lines.Follow(ctx, o, func(rec event.Record, raw []byte) error {
		if err := fn(rec, raw); err != nil {
			return err
		}
		panic("test panic after line " + strconv.FormatInt(rec.JournalSequence, 10))
	})
}

type panicOnKey struct{ *tui.Model }

func (p panicOnKey) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok && k.String() == "!" {
		panic("test panic at a key")
	}
	m, cmd := p.Model.Update(msg)
	return panicOnKey{m.(*tui.Model)}, cmd
}
