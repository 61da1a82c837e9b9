// Package watch turns a journal, or a fleet's gateway output, followed
// from a cursor into transitions: a child moving into a state, or going
// stale. It reads the history first (the projection of every child, so a
// transition knows the state it left), then follows — inotify for a
// journal, through rotation, quarantine and replacement (journal.FollowWith);
// the fleet reader's passes for a fleet — and says when it has caught up
// with what was there at the start.
//
// It is what `lcwrap wait` and `lcwrap watch` share, and what a server
// of transitions builds on: a Follower (one goroutine applies every item,
// so a handler may read the projection without a lock), a Position (a
// journal line with its eventId, or a fleet cursor) that survives a
// restart, the cursor file that stores it (written the way every file a
// user names is, internal/outpath), and Wait, the conditions of `lcwrap
// wait`.
//
// `stale` has no event of its own: it is judged on the reader's clock
// (heartbeat deadlines; a silent fleet host) and given a synthetic id,
// "stale/CHILD/LAST-EVENT-ID", stable across restarts, so a receiver can
// drop a repeat of it as it drops a repeat of a real event.
//
// # What it refuses to claim
//
// A transition is what the events read so far say: a quiet journal is
// not a quiet world, stale is a judgement of silence (never an end), and
// a state an agent reported is the agent's report. Delivery is at least
// once: a Position names what was handed on, not what a receiver did
// with it.
package watch
