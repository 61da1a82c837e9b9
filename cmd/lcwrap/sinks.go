package main

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
)

// journalFlags are the flags of every command that reads or writes the
// journal.
func journalFlags() []cli.Flag { return cloneFlags(journalFlagDefs) }

// journalFlagDefs are journalFlags' definitions; like every flag
// definition below they are data the compiler lays out, never handed to
// the parser (which fills in the flags it is given): a command gets
// copies (cloneFlags), the quick readers read these.
var journalFlagDefs = []cli.Flag{
	&cli.StringFlag{Name: "journal", Usage: "journal `PATH` (default $LCWRAP_JOURNAL, else $XDG_STATE_HOME/lcwrap/journal.jsonl, else ~/.local/state/lcwrap/journal.jsonl)"},
	&cli.DurationFlag{Name: "lock-timeout", Value: 5 * time.Second, Usage: "give up acquiring the journal lock after this long"},
	&cli.DurationFlag{Name: "lock-stale-after", Value: 30 * time.Second, Usage: "a lock this old whose owner is provably dead may be reclaimed"},
	&cli.StringFlag{Name: "fsync", Value: "terminal", Usage: "flush the journal to disk: always, terminal (after terminal events) or never"},
	&cli.IntFlag{Name: "journal-max-bytes", Usage: "seal the journal file and start the next one when an append would take it past `N` bytes (0: never; see docs/journal.md)"},
}

// writerFlags are the flags of every command that writes events.
func writerFlags() []cli.Flag { return cloneFlags(writerFlagDefs()) }

// writerFlagDefs are writerFlags' definitions (journalFlagDefs').
func writerFlagDefs() []cli.Flag { return slices.Concat(journalFlagDefs, sinkFlagDefs) }

var sinkFlagDefs = []cli.Flag{
	&cli.BoolFlag{Name: "no-journal", Usage: "do not write the journal (only --emit sinks)"},
	&cli.BoolFlag{Name: "journal-required", Usage: "refuse to start (exit 125) when the journal cannot take appends (cannot be opened, lock timeout, append-blocked)"},
	&cli.StringSliceFlag{Name: "emit", Usage: "also write events to `SINK`: stderr, stdout, fd:N or file:PATH (repeatable)"},
	&cli.StringFlag{Name: "source", Value: emit.DefaultSource, Usage: "source name recorded in every event"},
}

// cloneFlags copies flag definitions for one command's parser: a flag
// keeps what it parsed, so no two commands, and no definition, share one.
func cloneFlags(defs []cli.Flag) []cli.Flag {
	out := make([]cli.Flag, len(defs))
	for i, f := range defs {
		v := reflect.ValueOf(f).Elem()
		c := reflect.New(v.Type())
		c.Elem().Set(v)
		out[i] = c.Interface().(cli.Flag)
	}
	return out
}

// journalPath resolves --journal or the default path.
func journalPath(cmd flagReader) (string, error) {
	if p := cmd.String("journal"); p != "" {
		return p, nil
	}
	return journal.DefaultPath()
}

// journalOptions reads the journal flags.
func journalOptions(cmd flagReader) (journal.Options, error) {
	mode, err := journal.ParseFsync(cmd.String("fsync"))
	if err != nil {
		return journal.Options{}, usagef(cmd, "--fsync %v", err)
	}
	if cmd.Duration("lock-timeout") <= 0 {
		return journal.Options{}, usagef(cmd, "--lock-timeout must be positive")
	}
	if cmd.Duration("lock-stale-after") <= 0 {
		return journal.Options{}, usagef(cmd, "--lock-stale-after must be positive")
	}
	if cmd.Int("journal-max-bytes") < 0 {
		return journal.Options{}, usagef(cmd, "--journal-max-bytes must be 0 (never rotate) or positive")
	}
	return journal.Options{
		LockTimeout: cmd.Duration("lock-timeout"),
		StaleAfter:  cmd.Duration("lock-stale-after"),
		Fsync:       mode,
		MaxBytes:    int64(cmd.Int("journal-max-bytes")),
	}, nil
}

// sinkSet is what a writing command's flags ask for. The stream sinks
// (stdout, stderr) are only flags here: a command that runs a child must
// interpose on the shared stream before writing events to it.
type sinkSet struct {
	Journal     *journal.Journal // nil with --no-journal or when it could not be opened
	JournalPath string
	Files       []event.Sink // file:PATH and fd:N sinks
	Stdout      bool         // --emit stdout (or fd:1)
	Stderr      bool         // --emit stderr (or fd:2)
}

// openSinks opens the journal and file sinks the flags ask for. A journal
// that cannot be opened is a warning on stderr, unless --journal-required
// makes it a refusal to start (exit 125). A bad --emit value is a usage
// error; a file sink that cannot be opened is a refusal to start too: the
// user asked for it explicitly and nothing has been started yet.
func openSinks(cmd flagReader, std stdio) (*sinkSet, error) {
	set := &sinkSet{}
	var specs []emit.SinkSpec
	for _, v := range cmd.StringSlice("emit") {
		spec, err := emit.ParseSinkSpec(v)
		if err != nil {
			return nil, usagef(cmd, "--emit %v", err)
		}
		specs = append(specs, spec)
	}
	opts, err := journalOptions(cmd)
	if err != nil {
		return nil, err
	}
	if !cmd.Bool("no-journal") {
		path, err := journalPath(cmd)
		if err == nil {
			set.JournalPath = path
			set.Journal, err = journal.Open(path, opts)
			if err == nil && cmd.Bool("journal-required") {
				// Required: the journal must take appends now (lock
				// within the timeout, no bad content), not only open.
				if err = set.Journal.Ready(); err != nil {
					set.Journal.Close()
				}
			}
		}
		if err != nil {
			if cmd.Bool("journal-required") {
				return nil, exitCode(exitUsage, "journal required but unavailable: %v", err)
			}
			fmt.Fprintf(std.err, "lcwrap: journal unavailable, continuing without it: %v\n", err)
			set.Journal = nil
		}
	} else if cmd.Bool("journal-required") {
		return nil, usagef(cmd, "--journal-required and --no-journal contradict each other")
	}
	for _, spec := range specs {
		switch spec.Kind {
		case emit.SpecStdout:
			set.Stdout = true
		case emit.SpecStderr:
			set.Stderr = true
		case emit.SpecFD:
			s, err := emit.OpenFDSink(spec.FD)
			if err != nil {
				set.Close()
				return nil, exitCode(exitUsage, "--emit %s: %v", spec, err)
			}
			set.Files = append(set.Files, s)
		case emit.SpecFile:
			s, err := emit.OpenFileSink(spec.Path)
			if err != nil {
				set.Close()
				return nil, exitCode(exitUsage, "--emit %s: %v", spec, err)
			}
			set.Files = append(set.Files, s)
		}
	}
	return set, nil
}

// Sinks returns the journal and file sinks, plus plain stream sinks for
// commands that share no stream with a child (adopt, emit).
func (s *sinkSet) Sinks(std stdio, withStreams bool) []event.Sink {
	var out []event.Sink
	if s.Journal != nil {
		out = append(out, emit.NewJournalSink(s.Journal))
	}
	out = append(out, s.Files...)
	if withStreams {
		if s.Stdout {
			out = append(out, emit.NewWriterSink("stdout", std.out))
		}
		if s.Stderr {
			out = append(out, emit.NewWriterSink("stderr", std.err))
		}
	}
	return out
}

// Close closes what openSinks opened (used when starting fails).
func (s *sinkSet) Close() {
	for _, f := range s.Files {
		f.Close()
	}
	if s.Journal != nil {
		s.Journal.Close()
	}
}

// sinkWarning is the emitter's OnSinkError: one line on stderr per failing
// sink; the work goes on.
func sinkWarning(std stdio) func(string, error) {
	return func(name string, err error) {
		fmt.Fprintf(std.err, "lcwrap: %v; no more events go there, the command is not affected\n", err)
	}
}
