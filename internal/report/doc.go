// Package report writes the self-contained HTML report of a view.Model:
// a timeline with one bar per child coloured by state (stale spans
// hatched), nested by lineage; a table of the children; a section per
// child with its events, capabilities and why each unknown one is
// unknown. Past a limit, ended children are counted per state instead of
// drawn, and the report says how many. docs/view.md shows one.
//
// # What it promises
//
// The file loads nothing: inline CSS and SVG, a Content-Security-Policy
// that forbids every fetch, no script. Text from events is redacted again
// and stripped of control characters before it is escaped.
//
// # What it refuses to claim
//
// What view refuses: a colour is a state, never a verdict (completed is
// how a process ended, not whether its task succeeded); stale is hatched,
// never drawn as lost; an unknown capability is marked and explained.
// With no lifecycle evidence it says so, and draws nothing.
package report
