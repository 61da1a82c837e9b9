// Package view is the live model: what a person is shown of the
// projection. It keeps the lineage tree of every child (launched process →
// agent session → sub-agents, retries under their root with their attempt
// number), a per-child history beside the projection (the last events, the
// state segments, the stale spans, bounded per child), the cells of one
// row (state symbol, activity, freshness, start, duration, exit, source,
// unknown capabilities), the status table fitted to a terminal's width and
// the detail pane. Model.Apply costs one event's work and Sync recomputes
// only the children touched. It reads no file and starts no goroutine:
// internal/view/live follows a journal into a Model, internal/view/tui
// draws it full-screen (lcwrap top), internal/report writes it as HTML.
// docs/view.md shows all three.
//
// Everything it shows comes from the projection: state, staleness and
// exit are the projection's. It never prints or exits; cmd/lcwrap and
// cmd/lcwrap-top do.
//
// # What it refuses to claim
//
// A symbol is a state, never a verdict: completed means the process (or
// the agent's own report) ended that way, not that the task succeeded,
// and no symbol says so. Stale is shown as stale, never as lost. A
// capability the source did not declare known is shown as unknown, with
// the reason. Text that reaches a terminal or a report is redacted again,
// and what a terminal would act on in it is shown escaped (termtext).
package view
