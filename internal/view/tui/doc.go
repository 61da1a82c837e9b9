// Package tui is `lcwrap top`: a full-screen live view of a journal on
// bubbletea. It shows the lineage tree of view.Model, follows the journal
// from a cursor through live.Follower (never re-reading it per refresh), and
// keeps every key, filter and pane in a model that is tested without a
// terminal. It lives in its own program (cmd/lcwrap-top) so that linking
// the TUI library costs nothing to `lcwrap -- CMD` (docs/view.md).
//
// Idle, it costs no wake-up it can avoid: the model sets one clock timer
// for the next instant at which a duration or a freshness on the screen
// would read differently (view.NextChange; at most once an interval,
// DefaultInterval unless Options.Interval says otherwise; none when
// nothing shown depends on time), the journal wakes it through a
// watch of its directory (journal.ReadOptions.Watch), and Screen writes
// only the lines of a frame that changed, nothing for an unchanged one.
//
// With a fleet's follower (live.NewFleet) it shows a host table above the
// tree (last heard, clock skew, shipping delay; SILENT past the
// threshold), a HOST column, and the key H shows one host at a time.
//
// It refuses to claim what view refuses: a symbol is a state, not a
// verdict; stale is stale, never lost; an unknown capability is marked on
// its row and explained in the detail pane.
package tui
