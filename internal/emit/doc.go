// Package emit builds lifecycle events and writes them to sinks.
//
// # What it promises
//
// An Emitter stands for one lifecycle source: a source name and a fresh
// sourceEpoch per process, so a restarted lcwrap never reuses a sequence
// space. Each Child it makes numbers its events from 1 with no gaps, gives
// every event a unique eventId (<sourceEpoch>/<childId>/<sequence>) and an
// observedAt in the strict UTC form with milliseconds. Activity and details
// pass through redaction before any sink sees them, in one step of building
// (EncodeDetails; the event core never redacts); activity is cut to 512
// characters. Every event is validated once, before it is written: an event
// that fails validation is a bug in the caller and is never written (the
// journal sink does not parse it again). An event whose line would be over
// MaxLine is cut to fit (details.cut says what went and how much), never
// dropped.
//
// Every sink receives each event as one complete line, written with a single
// write. A sink that fails is reported once through Options.OnSinkError and
// not used again for the rest of the run; the other sinks continue.
//
// Queue is lcwrap's one bounded queue (the journal sink's, the agent
// output tap's): one goroutine drains it in batches, in order; past its
// bound a Put waits, or is dropped and counted, as its owner chose.
//
// # What it refuses to claim
//
// Writing an event records an observation, nothing more. The emitter never
// adds a field that says a task succeeded, and it never invents a state: the
// caller decides kind and state from what it saw.
//
// Where it sits among the other packages: docs/design.md.
package emit
