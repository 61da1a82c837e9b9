// Package lastline reads the latest line of a child's output that says
// something: the text after its last carriage return (what a redrawn
// progress line shows), without terminal escape sequences or control
// characters, trimmed, as valid UTF-8, at most MaxLine bytes. Tap feeds
// it from a stream (internal/stream); supervise makes activity events of
// what it offers, at its own pace.
//
// # What it promises
//
// Every chunk is looked at once; a progress line redrawn a million times
// keeps only its latest text; foreign bytes never panic and always come
// out as clean text (a fuzz target holds it to that).
//
// # What it refuses to claim
//
// A line is what the child last printed, not what it is doing or whether
// it makes progress. Redaction and the 512-character cut come later, when
// the line becomes an event. See docs/design.md.
package lastline
