// Package exitcode is the one table of lcwrap's exit statuses: every code
// lcwrap or one of its commands exits with, its name, what it means, and
// which commands give it (with each command's own words). cmd/lcwrap's
// help and docs/run.md are generated from Table; supervise and cmd/lcwrap
// use the constants.
//
// # What it promises
//
// A code means one thing across commands wherever the table gives it a
// name of its own (123 is always "the end is unknown", 125 always "lcwrap's
// own usage error: nothing was done"); the small codes 1 to 6 are each
// command's own and say so per command. The run path reads only the
// constants: the table is data, built by the linker.
//
// # What it refuses to claim
//
// An exit status is not task success: 0 from a run is the child's own 0.
// A code shared by lcwrap and the child it ran (any N, 124 from a child
// that exits 124) cannot be told apart by the status alone; the journal's
// terminal event can. See docs/design.md.
package exitcode
