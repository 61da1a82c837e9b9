// Package event is lcwrap's event core: the schema-v1 lifecycle contract
// and nothing else.
//
// # What it promises
//
//   - The schema: Event, Kind, State, Lineage, capabilities (omitted ones
//     normalize to unknown, never known), snapshots, and the details
//     shapes its readers decode (details.go, docs/events.md), each
//     encoded by encoding/json (EncodeDetails: keys sorted, a caller's
//     filter applied to the decoded object).
//   - One transition table (transition.go): producers take a subset of its
//     edges, readers apply all of it; a refused change is a
//     *TransitionError.
//   - Validation: Parse and Event.Validate apply the contract's rules
//     (required fields, the seven kinds and eight states, which kinds
//     carry which states, strict UTC timestamps, non-negative sequence and
//     attempt, known|unknown capabilities); every rejection is a
//     *FieldError naming the field and the rule. Decoder reads a stream,
//     keeping valid events around bad lines with bounded diagnostics.
//   - Identity: a process is (pid, start time) on one boot of one host.
//     IdentityOf reads one (from /proc on Linux, gopsutil elsewhere or
//     with the lcwrap_gopsutil build tag; the Clock says which, and each
//     build reads the other's); CheckIdentity answers Gone only on proof
//     (same host and boot, and the pid absent, a zombie, or another start
//     time), ProcUnknown when proof is impossible from here, Alive when
//     the same pid with the same start time is there and not a zombie.
//     ProcTable is the seam tests use to simulate pid reuse.
//   - The timestamp format (Timestamp) and the Sink interface writers
//     hand whole lines to.
//
// # What it refuses to claim
//
// It never redacts: a filter comes from the caller (emit redacts
// what it builds, a Decoder's caller what a diagnostic keeps). It holds
// no integration's payloads: an agent's, codex's, notify's or the restart
// policy's shapes live with their writers, which add members to Created
// and Terminal through Extra. It does no I/O besides reading /proc (and
// the host name) for identities; a Decoder reads only the reader it is
// given. A valid line
// is well-formed evidence, not a true statement; end of input is not
// completion; Alive is presence, not progress. It never sends a signal,
// and nothing in it panics on foreign input.
//
// Where it sits among the other packages: docs/design.md.
package event
