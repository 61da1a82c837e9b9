// Package tui is `lcwrap top`: a full-screen live view of a journal on
// bubbletea. It shows the lineage tree of view.Model, follows the journal
// from a cursor through view.Live (never re-reading it per refresh), and
// keeps every key, filter and pane in a model that is tested without a
// terminal. It lives in its own program (cmd/lcwrap-top) so that linking
// the TUI library costs nothing to `lcwrap -- CMD` (docs/view.md).
//
// It refuses to claim what view refuses: a symbol is a state, not a
// verdict; stale is stale, never lost; an unknown capability is marked on
// its row and explained in the detail pane.
package tui
