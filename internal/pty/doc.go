// Package pty gives a child a pseudo-terminal of its own (creack/pty) and
// looks after lcwrap's terminal meanwhile: raw while the child runs so
// that every key reaches the child's terminal as a byte, restored on every
// way out, the child's window size following lcwrap's. supervise decides
// when (Config.PTY); this package does the terminal work.
//
// # What it promises
//
// Restore puts lcwrap's terminal settings back, however often it is
// called, and Close restores too. Stdin that is no terminal is copied as
// it is, and its end becomes the terminal's end-of-file character. The
// master's EIO is the end of the child's output, not an error.
//
// # What it refuses to claim
//
// A terminal is the child's own: lcwrap does not read what is typed into
// it as anything but bytes, and a Ctrl-C typed there is the child's
// terminal's signal, not a cancel request lcwrap delivered. Off Linux
// there is no pty (Open fails). See docs/interactive.md and
// docs/design.md.
package pty
