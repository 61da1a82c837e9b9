// Package react runs a command for each transition a watcher hands it
// (`lcwrap watch --exec CMD`): through `sh -c`, the facts in LCWRAP_WATCH_*
// variables and the transition as JSON on its standard input, a bounded
// number at once, each with a timeout, bursts of one child coalesced, and
// a bounded queue whose overflow is dropped and said. It keeps the
// position up to which every transition was handled (run, failed, timed
// out, dropped or coalesced: never one still waiting or running), which
// is what a watcher's cursor may store: delivery is at least once.
//
// The command's environment is the watcher's without the lineage
// variables (LCWRAP_CHILD_ID, LCWRAP_ROOT_CHILD_ID) and the hook relay's
// (LCWRAP_HOOK_URL, LCWRAP_HOOK_TOKEN): an lcwrap inside CMD never becomes
// a child of the watched one, nor of whoever started the watcher.
//
// # What it refuses to claim
//
// A command that exited 0 did what it does, which says nothing about the
// child; a command's failure is reported, never fatal, and never changes
// what the journal says. Memory is bounded by the queue, the coalescing
// window's children and the commands running, not by the rate of
// transitions.
package react
