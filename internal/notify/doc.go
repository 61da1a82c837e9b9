// Package notify is lcwrap's side of the sd_notify protocol: the socket a
// child is given as NOTIFY_SOCKET, and the judgement of each datagram that
// arrives on it. What the messages mean for a lifecycle (READY=1 moves a
// child to running, STATUS= is activity, ...) is supervise's to decide.
//
// # What it promises
//
// The socket lives in a private 0700 directory and passes credentials:
// every datagram is attributed to its sender's pid, and one from a process
// that is not the child or one of its descendants is rejected with nothing
// of its content kept (its descriptors closed at once). A datagram longer
// than 4096 bytes is measured, never mistaken for a shorter one, and
// rejected as oversized; one that is not KEY=VALUE lines of UTF-8 is
// malformed. Excerpts quoted in diagnostics are redacted and cut to 64
// characters.
//
// # What it refuses to claim
//
// A message is what the child says about itself, attributed to the pid
// that sent it: never proof of readiness or health. Off Linux there is no
// socket (Open fails). See docs/design.md.
package notify
