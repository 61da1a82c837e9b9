// Package stream interposes on one of lcwrap's output streams when event
// lines share it with the child's output, or when something must see the
// child's bytes (output activity, a pty's master, an agent's tap). Which
// streams are interposed is supervise.Interpose's decision.
//
// # What it promises
//
// The child's bytes pass through unchanged and in order (by tee(2) where
// the stream is a pipe and no line of lcwrap's must be placed). Every
// event line starts at the beginning of a line, in one write: between the
// child's lines at once, otherwise after the child's newline, or after at
// most lineWait, when lcwrap ends the line itself. If the real stream
// fails, the child sees the broken pipe it would have seen without lcwrap.
//
// # What it refuses to claim
//
// A copied byte says the child wrote it, nothing about what it means; a
// Tap sees the bytes, not their sense. See docs/design.md.
package stream
