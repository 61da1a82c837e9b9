package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/term"

	"github.com/lcwrap/lcwrap/journal"
	"github.com/lcwrap/lcwrap/jsonl"
	"github.com/lcwrap/lcwrap/view"
	"github.com/lcwrap/lcwrap/view/tui"
)

// Exit codes, as lcwrap's own.
const (
	exitFailed = 1
	exitUsage  = 125
)

// NotATerminal is the one line top answers when its output is not a
// terminal.
const NotATerminal = "lcwrap: top needs a terminal; use 'lcwrap status --watch' for a refreshing table, or 'lcwrap status --json' for a program"

// fps bounds how often the screen is redrawn: enough for keys to feel
// immediate, few enough wake-ups that an idle top costs next to nothing.
const fps = 10

func run(args []string) int {
	fs := flag.NewFlagSet("lcwrap top", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	path := fs.String("journal", "", "the journal to follow (default: $LCWRAP_JOURNAL, else the state directory's)")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(os.Stderr, "lcwrap: %v (see 'lcwrap top --help')\n", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "lcwrap: top takes no arguments, not %q (see 'lcwrap top --help')\n", fs.Arg(0))
		return exitUsage
	}
	if !term.IsTerminal(int(os.Stdout.Fd())) {
		fmt.Fprintln(os.Stderr, NotATerminal)
		return exitUsage
	}
	if *path == "" {
		p, err := journal.DefaultPath()
		if err != nil {
			fmt.Fprintf(os.Stderr, "lcwrap: %v\n", err)
			return exitFailed
		}
		*path = p
	}
	_, noColor := os.LookupEnv("NO_COLOR")
	var lines view.Lines = view.JournalLines(*path)
	if os.Getenv(panicHook) != "" {
		lines = panicking{lines}
	}
	live := view.NewLive(lines)
	m := tui.New(tui.Options{Live: live, Color: !noColor})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithFPS(fps))
	go func() {
		defer func() {
			if r := recover(); r != nil {
				// bubbletea restores the terminal only for its own
				// goroutines: hand the panic to it as a message.
				p.Send(tui.FatalMsg{Err: fmt.Errorf("following %s: panic: %v", *path, r)})
			}
		}()
		live.Run(ctx)
	}()
	go func() {
		// Reading a large journal leaves much garbage behind; left to
		// itself the runtime would return it to the system slowly, over
		// minutes. Do it once, after the first frame, so that an idle
		// top costs as little as it can.
		select {
		case <-live.CaughtUp():
		case <-ctx.Done():
			return
		}
		select {
		case <-time.After(time.Second):
			debug.FreeOSMemory()
			// From here on one processor is plenty, and fewer of them
			// wake up for each timer.
			runtime.GOMAXPROCS(1)
		case <-ctx.Done():
		}
	}()
	_, err := p.Run()
	cancel()
	switch {
	case m.Err() != nil:
		fmt.Fprintf(os.Stderr, "lcwrap: %v\n", m.Err())
		return exitFailed
	case err == nil, errors.Is(err, tea.ErrInterrupted):
		return 0
	}
	fmt.Fprintf(os.Stderr, "lcwrap: top: %v\n", err)
	return exitFailed
}

// panicHook names the environment variable that makes the follower panic
// once it has read the journal: the tests prove with it that a panic
// leaves the terminal as it was.
const panicHook = "LCWRAP_TOP_TEST_PANIC"

type panicking struct{ view.Lines }

func (p panicking) Follow(ctx context.Context, o journal.ReadOptions, fn func(jsonl.Record, []byte) error) error {
	return p.Lines.Follow(ctx, o, func(rec jsonl.Record, raw []byte) error {
		if err := fn(rec, raw); err != nil {
			return err
		}
		panic("test panic after line " + strconv.FormatInt(rec.JournalSequence, 10))
	})
}
