// Package capabilities holds the contract's capability vocabulary and the
// named profiles lcwrap uses to declare what a lifecycle source can know.
//
// # What it promises
//
// Every capability is either Known or Unknown; the zero value and any
// omitted key mean Unknown, never Known. A Profile is the only way lcwrap
// code chooses a capability set, so every event that claims a capability
// can be traced to one named, documented reason.
//
// # What it refuses to claim
//
// A profile states what kind of evidence a source can produce, not that the
// evidence arrived. "heartbeat: known" says the source emits heartbeats; it
// does not say the child is alive. No profile ever claims task success.
//
// Where it sits among the other packages: docs/design.md.
package capabilities
