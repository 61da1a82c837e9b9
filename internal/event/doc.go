// Package jsonl defines the schema-v1 lifecycle types of the contract
// (LifecycleEvent, Lineage, capabilities, AuthoritativeSnapshot), validates
// and normalizes them, and reads JSON Lines streams with bounded memory.
//
// # Vocabulary
//
// The details of every event lcwrap writes have a type here (details.go,
// docs/events.md), encoded without reflection by Object and decoded by
// readers with encoding/json: one set of types for writers and readers.
// The contract's state machine is one table (transition.go): producers
// take a subset of its edges, readers apply all of it, and a refused
// change is a *TransitionError.
//
// # Validation
//
// Parse and Event.Validate apply the contract's rules: the required fields;
// the seven kinds and eight states; created carries state created, terminal
// carries completed|failed|cancelled|lost, state_changed carries a state,
// activity and heartbeat carry none (reconciliation and diagnostic may);
// timestamps in the strict UTC form YYYY-MM-DDTHH:MM:SS[.mmm]Z;
// non-negative integer sequence and attempt; capabilities known|unknown.
// Normalization turns omitted capabilities into unknown (never known), cuts
// activity to 512 characters and drops unknown top-level fields. Every
// rejection is a *FieldError naming the field and the rule.
//
// # Reading
//
// LineReader buffers partial lines, caps line size (64 KiB by default; a
// longer line is reported as oversized and reading continues after it),
// rejects invalid UTF-8 and reports a final line without a newline as
// truncated. Decoder builds on it: it keeps valid events around bad lines and
// retains at most 32 diagnostics, each redacted and cut to 512 characters,
// while counting every problem.
//
// # What it refuses to claim
//
// A valid line is well-formed evidence, not a true statement: validation
// cannot tell whether a producer lied. End of input is not completion: the
// reader reports where the stream stopped, never that a child finished.
// Nothing in this package panics on foreign input.
//
// Where it sits among the other packages: docs/design.md.
package event
