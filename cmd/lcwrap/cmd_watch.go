package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/exitcode"
	"github.com/lcwrap/lcwrap/internal/outpath"
	"github.com/lcwrap/lcwrap/internal/react"
	"github.com/lcwrap/lcwrap/internal/termtext"
	"github.com/lcwrap/lcwrap/internal/watch"
)

func watchCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  "watch",
		Usage: "run a command (or print a line) for each transition into some states",
		Description: "Follows the journal (or --fleet) and, for each transition of a child into one\n" +
			"of the --for states (or into stale, a judgement of silence), prints one line\n" +
			"or, with --exec, runs CMD through sh -c. CMD gets the facts in LCWRAP_WATCH_*\n" +
			"variables (CHILD_ID, STATE, PREVIOUS_STATE, ACTIVITY, SOURCE, HOST, EVENT_ID,\n" +
			"OBSERVED_AT, WAITING_FOR, EXIT_CODE, COALESCED) and the transition as JSON on\n" +
			"its standard input; never LCWRAP_CHILD_ID or LCWRAP_ROOT_CHILD_ID, so an lcwrap\n" +
			"inside CMD is no child of the watched one. --jobs commands run at once, each\n" +
			"for at most --exec-timeout; a failure or timeout is said on stderr, never\n" +
			"fatal; past --queue waiting transitions the oldest is dropped (said).\n" +
			"--cursor FILE (with --exec, by default one under the state directory) makes\n" +
			"it durable: a restart goes on after the last transition handled; one may be\n" +
			"delivered again after a crash (at least once): drop repeats by\n" +
			"LCWRAP_WATCH_EVENT_ID. Without a cursor it starts at the journal's end.",
		Flags: []cli.Flag{
			journalFlags()[0],
			&cli.StringFlag{Name: "for", Usage: "the `STATES` (comma-separated) to react to: created, starting, running, waiting, completed, failed, cancelled, lost, stale"},
			&cli.StringFlag{Name: "exec", Usage: "run `CMD` (through sh -c) for each transition"},
			&cli.BoolFlag{Name: "json", Usage: "without --exec: print each transition as JSON (schema lcwrap-watch/1)"},
			&cli.StringFlag{Name: "cursor", Usage: "keep the position in `FILE`: a restart goes on from it (" + outpath.Help + ")"},
			&cli.BoolFlag{Name: "no-cursor", Usage: "with --exec: keep no cursor (start at the end; a restart misses what happened meanwhile)"},
			&cli.IntFlag{Name: "jobs", Value: react.DefaultJobs, Usage: "with --exec: run at most `N` commands at once"},
			&cli.DurationFlag{Name: "exec-timeout", Value: react.DefaultTimeout, Usage: "with --exec: stop a command after `D` (SIGTERM to its process group, SIGKILL 2s later)"},
			&cli.DurationFlag{Name: "coalesce", Usage: "with --exec: hold a child's transition for `D`; a later one of that child replaces it (LCWRAP_WATCH_COALESCED counts them)"},
			&cli.IntFlag{Name: "queue", Value: react.DefaultQueue, Usage: "with --exec: at most `N` transitions wait for a free slot; past it the oldest is dropped (said on stderr)"},
			&cli.StringFlag{Name: "source", Usage: "only children of lifecycle source `NAME`"},
			fleetFlag(), silentAfterFlag(),
			&cli.StringFlag{Name: "host", Usage: "with --fleet: only children of host `NAME`"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error { return watchAction(ctx, cmd, std) },
	}
}

func watchAction(ctx context.Context, cmd *cli.Command, std stdio) error {
	if !cmd.IsSet("for") {
		return usagef(cmd, "--for names the states to react to, e.g. --for waiting,failed,lost")
	}
	states, err := watch.ParseStates(cmd.String("for"))
	if err != nil {
		return usagef(cmd, "--for: %v", err)
	}
	exec := cmd.String("exec")
	switch {
	case cmd.Args().Len() > 0:
		return usagef(cmd, "watch takes no arguments, not %q; give the command with --exec 'CMD'", cmd.Args().First())
	case cmd.IsSet("exec") && strings.TrimSpace(exec) == "":
		return usagef(cmd, "--exec needs a command")
	case cmd.IsSet("exec") && cmd.Bool("json"):
		return usagef(cmd, "--json is what watch prints without --exec; with --exec the command gets the JSON on its standard input")
	case cmd.IsSet("host") && !cmd.IsSet("fleet"):
		return usagef(cmd, "--host applies to --fleet only")
	case cmd.IsSet("cursor") && cmd.Bool("no-cursor"):
		return usagef(cmd, "--cursor and --no-cursor contradict each other; choose one")
	case cmd.IsSet("cursor") && cmd.String("cursor") == "":
		return usagef(cmd, "--cursor needs a file")
	}
	if !cmd.IsSet("exec") {
		for _, f := range []string{"jobs", "exec-timeout", "coalesce", "queue", "no-cursor"} {
			if cmd.IsSet(f) {
				return usagef(cmd, "--%s applies to --exec only", f)
			}
		}
	}
	switch {
	case cmd.Int("jobs") < 1:
		return usagef(cmd, "--jobs must be 1 or more, not %d", cmd.Int("jobs"))
	case cmd.Int("queue") < 1:
		return usagef(cmd, "--queue must be 1 or more, not %d", cmd.Int("queue"))
	case cmd.Duration("exec-timeout") <= 0:
		return usagef(cmd, "--exec-timeout must be positive, not %s", cmd.Duration("exec-timeout"))
	case cmd.Duration("coalesce") < 0:
		return usagef(cmd, "--coalesce must be 0 or more, not %s", cmd.Duration("coalesce"))
	}
	say := func(s string) { fmt.Fprintf(std.err, "lcwrap: watch: %s\n", oneLine(s)) }
	o := watch.Options{Stale: slices.Contains(states, watch.StateStale), OnNotice: func(n watch.Notice) { say(n.Text) }}
	input, closeInput, err := watchInput(cmd, std, &o)
	if err != nil {
		return err
	}
	defer closeInput()
	if abs, err := filepath.Abs(input); err == nil {
		input = abs
	}
	cursorPath := cmd.String("cursor")
	if cursorPath == "" && cmd.IsSet("exec") && !cmd.Bool("no-cursor") {
		if cursorPath, err = defaultCursor(input, states, exec, cmd.String("host"), cmd.String("source")); err != nil {
			return exitCode(exitcode.Failed, "--cursor: no default: %v; give --cursor FILE or --no-cursor", err)
		}
	}
	o.FromEnd = true
	if cursorPath != "" {
		c, ok, err := watch.LoadCursor(cursorPath)
		switch {
		case err != nil:
			return exitCode(exitcode.Failed, "--cursor: %v; remove it to start at the end", err)
		case ok && c.Input != input:
			return exitCode(exitcode.Failed, "--cursor %s is the position in %s, not in %s; give another --cursor", cursorPath, c.Input, input)
		case ok:
			o.FromEnd, o.After, o.StaleSeen = false, c.Position, c.Stale
		}
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	f := watch.New(o)
	host, source := cmd.String("host"), cmd.String("source")
	wanted := func(t *watch.Transition) bool {
		return !t.Before && slices.Contains(states, t.State) && (host == "" || t.Host == host) && (source == "" || t.View.Source == source)
	}
	saver := &cursorSaver{path: cursorPath, input: input, say: say}
	var h watch.Handler
	var runner *react.Runner
	if cmd.IsSet("exec") {
		runner = react.New(react.Options{Command: exec, Jobs: int(cmd.Int("jobs")), Timeout: cmd.Duration("exec-timeout"),
			Coalesce: cmd.Duration("coalesce"), Queue: int(cmd.Int("queue")), Env: react.Env(os.Environ()),
			Stdout: std.out, Stderr: std.err, Say: say})
		h = watch.Handler{
			Transition: func(t *watch.Transition) error {
				if wanted(t) {
					runner.Submit(t)
				}
				return nil
			},
			Read: func() error { runner.Read(f.Position()); return nil },
		}
		if cursorPath != "" {
			done := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); saver.loop(done, runner) }()
			defer func() { close(done); wg.Wait() }()
		}
	} else {
		out := bufio.NewWriter(std.out)
		asJSON := cmd.Bool("json")
		var stale []string
		h = watch.Handler{
			Transition: func(t *watch.Transition) error {
				if !wanted(t) {
					return nil
				}
				if asJSON {
					out.Write(t.JSON())
				} else {
					out.WriteString(transitionLine(t))
				}
				out.WriteByte('\n')
				if t.State == watch.StateStale {
					stale = append(stale, t.EventID)
					if len(stale) > watch.MaxStaleIDs {
						stale = stale[1:]
					}
				}
				return nil
			},
			Read: func() error {
				if err := out.Flush(); err != nil {
					return err
				}
				saver.offer(f.Position(), stale)
				return nil
			},
		}
	}
	h.CaughtUp = func() error {
		from := "from its end"
		if !o.FromEnd {
			from = "after " + o.After.String() + " (--cursor)"
		}
		say(fmt.Sprintf("following %s %s for %s", input, from, strings.Join(states, ", ")))
		if runner != nil {
			runner.Read(f.Position())
		} else {
			saver.offer(f.Position(), nil)
		}
		return nil
	}
	err = f.Run(ctx, h)
	if runner != nil {
		runner.Close(5 * time.Second)
		c := runner.Counts()
		if c.Submitted > 0 {
			say(fmt.Sprintf("ran %d commands: %d failed, %d timed out, %d transitions dropped, %d coalesced", c.Ran+c.Failed+c.TimedOut, c.Failed, c.TimedOut, c.Dropped, c.Coalesced))
		}
		p, stale := runner.Confirmed()
		saver.offer(p, stale)
	}
	if serr := saver.flush(); serr != nil {
		say(serr.Error())
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return exitCode(exitcode.Failed, "watch: %v", err)
	}
	return nil
}

// transitionLine is a transition as watch prints it without --exec.
func transitionLine(t *watch.Transition) string {
	var b strings.Builder
	prev := t.Previous
	if prev == "" {
		prev = "unknown"
	}
	fmt.Fprintf(&b, "%s %s %s → %s", t.ObservedAt, t.Key, prev, t.State)
	if t.WaitingFor != "" {
		fmt.Fprintf(&b, " (%s)", t.WaitingFor)
	}
	if t.State == watch.StateStale && t.View.StaleReason != "" {
		fmt.Fprintf(&b, " (%s)", t.View.StaleReason)
	}
	if t.Exit != nil && t.Exit.Code != nil {
		fmt.Fprintf(&b, " exit %d", *t.Exit.Code)
	}
	if t.Source != "" {
		fmt.Fprintf(&b, " source %s", t.Source)
	}
	if a := t.Activity(); a != "" {
		fmt.Fprintf(&b, ": %s", a)
	}
	fmt.Fprintf(&b, " [%s]", t.EventID)
	return termtext.Line(b.String())
}

// defaultCursor is the cursor file of a watcher under the state
// directory: one per input, states, command and filters, so that two
// different watchers never share one.
func defaultCursor(input string, states []string, exec, host, source string) (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(home, ".local", "state")
	}
	dir = filepath.Join(dir, "lcwrap", "watch")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	s := slices.Clone(states)
	slices.Sort(s)
	sum := sha256.Sum256([]byte(strings.Join([]string{input, strings.Join(s, ","), exec, host, source}, "\x00")))
	return filepath.Join(dir, hex.EncodeToString(sum[:8])+".cursor"), nil
}

// cursorSaver writes the cursor file when the confirmed position moved,
// at most every saveEvery.
type cursorSaver struct {
	path, input string
	say         func(string)
	mu          sync.Mutex
	want, saved watch.Cursor
	dirty       bool
	last        time.Time
	failed      bool
}

const saveEvery = 100 * time.Millisecond

func (s *cursorSaver) offer(p watch.Position, stale []string) {
	if s.path == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := watch.Cursor{Input: s.input, Position: p, Stale: slices.Clone(stale)}
	if c.Position == s.saved.Position && slices.Equal(c.Stale, s.saved.Stale) && !s.last.IsZero() {
		return
	}
	s.want, s.dirty = c, true
	if time.Since(s.last) >= saveEvery {
		s.writeLocked()
	}
}

func (s *cursorSaver) writeLocked() error {
	if !s.dirty {
		return nil
	}
	s.last = time.Now()
	if err := watch.SaveCursor(s.path, s.want); err != nil {
		if !s.failed {
			s.failed = true
			s.say(fmt.Sprintf("the cursor cannot be written to %s: %v (a restart would repeat what was handled since)", s.path, err))
		}
		return err
	}
	s.failed = false
	s.saved, s.dirty = s.want, false
	return nil
}

func (s *cursorSaver) flush() error {
	if s.path == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writeLocked(); err != nil {
		return fmt.Errorf("the cursor could not be saved to %s: %v", s.path, err)
	}
	return nil
}

// loop saves the runner's confirmed position as it moves, until done.
func (s *cursorSaver) loop(done <-chan struct{}, r *react.Runner) {
	tick := time.NewTicker(saveEvery)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-r.Changed():
		case <-tick.C:
		}
		p, stale := r.Confirmed()
		s.offer(p, stale)
		s.mu.Lock()
		if s.dirty && time.Since(s.last) >= saveEvery {
			s.writeLocked()
		}
		s.mu.Unlock()
	}
}
