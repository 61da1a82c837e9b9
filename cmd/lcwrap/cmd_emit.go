package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/exitcode"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/linereader"
	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/supervise"
)

// exitUncertain is emit's exit status when the event went into the
// journal but whether it stands is unknown (the exit-status table's 121).
const exitUncertain = exitcode.EmitUnknown

// emitEpoch is the sourceEpoch of `lcwrap emit` for a source unless
// --source-epoch says otherwise: stable, so that repeated calls for one
// child continue one sequence space in the journal, and named after the
// source, so that eventIds (<sourceEpoch>/<childId>/<sequence>) of two
// sources never collide.
func emitEpoch(source string) string { return "emit-" + source }

func emitCommand(std stdio) *cli.Command {
	return &cli.Command{
		Name:  "emit",
		Usage: "append one event (for hook scripts and other stateless producers)",
		Description: "Builds one schema-v1 event, validates and redacts it, and appends it to the\n" +
			"journal (and to --emit sinks). Without --sequence the next sequence of\n" +
			"(source, sourceEpoch, childId) is reserved under the journal lock, found by\n" +
			"reading the journal backwards from its end: quick for a child that wrote\n" +
			"recently, a read of the whole journal for a child id it has never seen.\n" +
			"sourceEpoch defaults to \"emit-<source>\" so that calls for one child continue\n" +
			"one sequence. Capabilities come only from --profile (default external: all\n" +
			"unknown).\n" +
			"\n" +
			"A state change (--kind created, state_changed or terminal) must follow the\n" +
			"child's state in the journal, which is read for it; any other change every\n" +
			"reader would drop, so emit refuses it (exit 125, nothing written). A child\n" +
			"the journal has not seen may start in any state.\n\n" +
			"Exit status 121 means unknown whether written: the line went into the\n" +
			"journal, but afterwards the lock turned out to be another writer's or the\n" +
			"sync failed, so whether it stands is not known. Do not retry on 121 (that\n" +
			"may record the event twice); look with 'lcwrap tail' or 'journal verify'.\n" +
			"Exit status 1 means it was not written.\n\n" +
			"The legal changes:\n" +
			transitionTable(),
		Flags:  emitFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error { return emitMain(std, cmd) },
	}
}

// emitFlags are emit's flags.
func emitFlags() []cli.Flag { return cloneFlags(emitFlagDefs()) }

// emitFlagDefs are emitFlags' definitions (see journalFlagDefs).
func emitFlagDefs() []cli.Flag { return slices.Concat(writerFlagDefs(), emitOwnFlagDefs) }

var emitOwnFlagDefs = []cli.Flag{
	&cli.StringFlag{Name: "child-id", Usage: "child `ID` the event is about (required)"},
	&cli.StringFlag{Name: "kind", Usage: "event `KIND`: created, state_changed, activity, heartbeat, terminal, reconciliation or diagnostic (required)"},
	&cli.StringFlag{Name: "state", Usage: "child `STATE` (created, starting, running, waiting, completed, failed, cancelled, lost)"},
	&cli.StringFlag{Name: "activity", Usage: "what the child is doing (redacted, cut to 512 characters)"},
	&cli.StringFlag{Name: "details", Usage: "details as a JSON object (redacted)"},
	&cli.StringFlag{Name: "source-epoch", Usage: "sourceEpoch `E` of the event's sequence space (default emit-<source>)"},
	&cli.Int64Flag{Name: "sequence", Usage: "use sequence `N` instead of reserving the next one"},
	&cli.StringFlag{Name: "profile", Value: "external", Usage: "capability profile `NAME` (external, adopted-pid-only, launched, launched-no-heartbeat)"},
	&cli.StringFlag{Name: "parent-child-id", Usage: "parent child `ID` (default $LCWRAP_CHILD_ID when it is another child)"},
	&cli.StringFlag{Name: "root-child-id", Usage: "root child `ID` of the lineage (default $LCWRAP_ROOT_CHILD_ID, else the child id)"},
	&cli.Int64Flag{Name: "attempt", Usage: "retry attempt `N` (0 for the first)"},
	&cli.BoolFlag{Name: "external", Usage: "mark the child as external (not started by the producer)"},
	&cli.StringFlag{Name: "adopted-at", Usage: "when an external child was adopted, `TS` in YYYY-MM-DDTHH:MM:SS[.mmm]Z (needs --external)"},
}

// transitionTable lists the contract's legal state changes, one line per
// state that has any, then the terminal states.
func transitionTable() string {
	var b strings.Builder
	var terminal []string
	for _, from := range event.States {
		next := event.Successors(from)
		if len(next) == 0 {
			terminal = append(terminal, string(from))
			continue
		}
		fmt.Fprintf(&b, "  %-9s → %s\n", from, joinStates(next))
	}
	fmt.Fprintf(&b, "  %s are terminal: nothing follows them.\n", strings.Join(terminal, ", "))
	return b.String()
}

// joinStates joins states with ", ".
func joinStates(states []event.State) string {
	s := make([]string, len(states))
	for i, st := range states {
		s[i] = string(st)
	}
	return strings.Join(s, ", ")
}

// orList is "a, b or c".
func orList(states []event.State) string {
	s := joinStates(states)
	if i := strings.LastIndex(s, ", "); i >= 0 {
		s = s[:i] + " or " + s[i+2:]
	}
	return s
}

// emitMain is an emit: the parser's or quickEmit's.
func emitMain(std stdio, cmd flagReader) error {
	e, err := emitConfig(cmd)
	if err != nil {
		return err
	}
	set, err := openSinks(cmd, std)
	if err != nil {
		return err
	}
	return e.write(cmd, std, set)
}

// emitEvent is a checked emit command line.
type emitEvent struct {
	opts    emit.Options
	id      string
	lineage event.Lineage
	profile event.Profile
	spec    emit.Spec
	seq     int64 // the sequence, when fixed
	fixed   bool  // --sequence given: nothing to reserve
}

// emitConfig checks every flag and the event itself before anything is
// opened: every mistake is a usage error.
func emitConfig(cmd flagReader) (*emitEvent, error) {
	if cmd.Args().Len() > 0 {
		return nil, usagef(cmd, "unexpected argument %q: every part of the event is a flag", cmd.Args().First())
	}
	e := &emitEvent{
		opts: emit.Options{Source: cmd.String("source"), Epoch: cmp.Or(cmd.String("source-epoch"), emitEpoch(cmd.String("source")))},
		id:   cmd.String("child-id"),
		spec: emit.Spec{Kind: event.Kind(cmd.String("kind")), State: event.State(cmd.String("state")), Activity: cmd.String("activity")},
	}
	switch {
	case e.id == "":
		return nil, usagef(cmd, "--child-id is required")
	case e.spec.Kind == "":
		return nil, usagef(cmd, "--kind is required")
	case e.opts.Source == "" || cmd.IsSet("source-epoch") && cmd.String("source-epoch") == "":
		return nil, usagef(cmd, "--source and --source-epoch must not be empty")
	case cmd.Int64("attempt") < 0:
		return nil, usagef(cmd, "--attempt must be 0 or more")
	case cmd.IsSet("sequence") && cmd.Int64("sequence") < 0:
		return nil, usagef(cmd, "--sequence must be 0 or more")
	case cmd.IsSet("adopted-at") && !cmd.Bool("external"):
		return nil, usagef(cmd, "--adopted-at needs --external: only an external child is adopted")
	case cmd.Bool("no-journal") && !cmd.IsSet("sequence"):
		return nil, usagef(cmd, "--no-journal needs --sequence: without the journal there is nowhere to reserve the next sequence")
	case cmd.Bool("no-journal") && len(cmd.StringSlice("emit")) == 0:
		return nil, usagef(cmd, "--no-journal without --emit writes the event nowhere")
	}
	e.seq, e.fixed = cmd.Int64("sequence"), cmd.IsSet("sequence")
	var err error
	if e.profile, err = event.Lookup(cmd.String("profile")); err != nil {
		return nil, usagef(cmd, "--profile: %v", err)
	}
	parent := cmp.Or(cmd.String("parent-child-id"), os.Getenv(supervise.EnvChildID))
	if parent == e.id {
		parent = "" // the enclosing child itself, not its parent
	}
	e.lineage = event.Lineage{
		RootChildID:   cmp.Or(cmd.String("root-child-id"), os.Getenv(supervise.EnvRootChildID), e.id),
		ParentChildID: parent,
		Attempt:       cmd.Int64("attempt"),
		External:      cmd.Bool("external"),
		AdoptedAt:     cmd.String("adopted-at"),
	}
	for name, id := range map[string]string{"child-id": e.id, "parent-child-id": parent, "root-child-id": e.lineage.RootChildID} {
		if err := checkID(id); err != nil {
			return nil, usagef(cmd, "--%s %q: %v", name, id, err)
		}
	}
	if d := cmd.String("details"); d != "" {
		if e.spec.Details, err = parseDetails(d); err != nil {
			return nil, usagef(cmd, "--details: %v", err)
		}
	}
	// Build the event once without a sink: validation errors surface here.
	line, err := e.build(max(e.seq, 1), nil)
	if err != nil {
		return nil, usagef(cmd, "%v", err)
	}
	if n := len(line) + len(`,"journalSequence":`) + 19; n > linereader.DefaultMaxBytes {
		return nil, usagef(cmd, "the event is %d bytes, over the %d-byte line cap: shorten --details", len(line), linereader.DefaultMaxBytes)
	}
	return e, nil
}

// parseDetails decodes one JSON object, keeping numbers as written.
func parseDetails(s string) (event.FreeDetails, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("must be a JSON object, like '{\"step\":\"link\"}'")
	}
	if dec.More() {
		return nil, errors.New("must be one JSON object, with nothing after it")
	}
	return m, nil
}

// builtEvent is an event built and not yet written, with its line.
type builtEvent struct {
	ev   event.Event
	line []byte
}

// build makes the event with sequence seq, redacted and validated, and
// returns its line (newline included); into, when not nil, keeps the event.
func (e *emitEvent) build(seq int64, into *builtEvent) ([]byte, error) {
	child := emit.New(e.opts).Child(e.id, e.lineage, e.profile)
	child.SetNextSequence(seq)
	ev, line, err := child.Build(e.spec)
	if err != nil {
		return nil, err
	}
	if into != nil {
		into.ev, into.line = ev, line
	}
	return line, nil
}

// write appends the event to the journal (reserving its sequence unless
// fixed) and then writes it to the other sinks.
func (e *emitEvent) write(cmd flagReader, std stdio, set *sinkSet) error {
	failed, uncertain := false, false
	var ev builtEvent
	var history *projection.Projection // the child's events, for a state change
	build := func(seq int64) ([]byte, error) {
		line, err := e.build(seq, &ev)
		if err == nil && history != nil {
			err = refuseTransition(history.Apply(&ev.ev, line))
		}
		return line, err
	}
	if !cmd.Bool("no-journal") {
		var err error
		switch {
		case set.Journal == nil:
			failed = true // openSinks said why
		case e.changesState():
			if history, err = childHistory(set.Journal.Path(), e.id); err != nil {
				set.Journal.Close()
				fmt.Fprintf(std.err, "lcwrap: event not written to the journal: %v\n", err)
				failed = true
				break
			}
			fallthrough
		default:
			err = e.appendTo(set.Journal, build)
			var refused *transitionRefused
			switch {
			case errors.As(err, &refused):
				set.Journal = nil
				set.Close()
				return usagef(cmd, "%v", refused)
			case errors.Is(err, journal.ErrUncertain):
				fmt.Fprintf(std.err, "lcwrap: unknown whether the event was written to the journal (exit %d: do not retry blindly): %v\n", exitUncertain, err)
				uncertain = true
			case err != nil:
				fmt.Fprintf(std.err, "lcwrap: event not written to the journal: %v\n", err)
				failed = true
			}
		}
		set.Journal = nil // closed: Sinks below returns the other sinks
	}
	if ev.line == nil && e.fixed {
		build(e.seq) // validated by emitConfig already
	}
	if ev.line == nil {
		if len(cmd.StringSlice("emit")) > 0 {
			fmt.Fprintln(std.err, "lcwrap: no sequence could be reserved, so the event was written nowhere")
		}
		set.Close()
		return exitCode(1, "")
	}
	for _, s := range set.Sinks(std, true) {
		err := errors.Join(s.WriteEvent(&ev.ev, ev.line), s.Close())
		if err != nil {
			fmt.Fprintf(std.err, "lcwrap: event not written to %s: %v\n", s.Name(), err)
			failed = true
		}
	}
	switch {
	case uncertain:
		return exitCode(exitUncertain, "")
	case failed:
		return exitCode(1, "")
	}
	return nil
}

// changesState reports whether the event moves the child to a state that
// readers check against the contract's table (a reconciliation is a
// correction, bound by no table).
func (e *emitEvent) changesState() bool {
	switch e.spec.Kind {
	case event.KindCreated, event.KindStateChanged, event.KindTerminal:
		return true
	}
	return false
}

// childHistory projects the events the journal at path holds about child
// id (sealed files included). It reads without the lock, so that writers
// are not held up for the whole read: an event another writer appends
// for that child meanwhile is not seen (a reader then judges the new
// event as before). A journal that does not exist yet holds nothing; one
// blocked at a bad line holds the events before it.
func childHistory(path, id string) (*projection.Projection, error) {
	p := projection.New()
	err := journal.Read(path, journal.ReadOptions{}, func(rec event.Record, raw []byte) error {
		if rec.Event.ChildID == id {
			p.Apply(&rec.Event, raw)
		}
		return nil
	})
	var blocked *journal.BlockedError
	if errors.Is(err, fs.ErrNotExist) || errors.As(err, &blocked) {
		err = nil // nothing yet; a blocked journal refuses the append itself
	}
	return p, err
}

// transitionRefused is a state change the child's history does not allow:
// every reader would drop it.
type transitionRefused struct {
	child string
	err   *event.TransitionError
}

func (e *transitionRefused) Error() string {
	if e.err.From.Terminal() {
		return fmt.Sprintf("child %s already ended (%s), and a terminal state is final: every reader would drop this %s event, so nothing was written", e.child, e.err.From, e.err.To)
	}
	return fmt.Sprintf("%s for child %s: from %s it may move only to %s; every reader would drop this event, so nothing was written",
		e.err, e.child, e.err.From, orList(event.Successors(e.err.From)))
}

// refuseTransition turns a projection outcome that a reader would drop for
// its state into a *transitionRefused; nil otherwise.
func refuseTransition(out projection.Outcome) error {
	var te *event.TransitionError
	if (out.Result == projection.IllegalTransition || out.Result == projection.TerminalImmutable) && errors.As(out.Err, &te) {
		return &transitionRefused{child: out.ChildID, err: te}
	}
	return nil
}

// appendTo appends the event to j and closes j.
func (e *emitEvent) appendTo(j *journal.Journal, build func(int64) ([]byte, error)) error {
	terminal := e.spec.Kind == event.KindTerminal
	var err error
	if e.fixed {
		var line []byte
		if line, err = build(e.seq); err == nil {
			_, err = j.Append([][]byte{line}, terminal)
		}
	} else {
		key := journal.Key{Source: e.opts.Source, SourceEpoch: e.opts.Epoch, ChildID: e.id}
		_, err = j.AppendNext(key, build, terminal)
	}
	if cerr := j.Close(); cerr != nil {
		if err == nil {
			// Appended; a failed close (a network file system reporting
			// a failed write-back) leaves its standing unknown.
			return fmt.Errorf("%w: the line was appended, but closing the journal failed: %w", journal.ErrUncertain, cerr)
		}
		err = errors.Join(err, cerr)
	}
	return err
}
