// Package serve is `lcwrap serve`: the lifecycle contract's adapter
// interface over HTTP (observe, status, cancel) and a live page, for
// programs in any language that would otherwise tail the journal and
// project it again. cmd/lcwrap-serve listens and wires it; this package
// holds the routes, the checks every request passes and the event stream.
//
// # What it promises
//
// Every data route needs the bearer token; only the page and its static
// assets (which carry no data) are open. Every request's Host must name
// the listening address (DNS rebinding), a POST's Origin must be the
// server's own or absent, bodies and headers are bounded, and errors are
// JSON with a stable code. GET /v1/children is what `lcwrap status --json`
// prints, kept current by internal/view/live's follower; GET /v1/snapshot
// is `lcwrap snapshot`; POST .../cancel is `lcwrap cancel` (internal/cancel
// decides, and its refusal is the answer). GET /v1/events streams every
// journal line after a cursor as Server-Sent Events with id set to the
// line's journalSequence (a fleet cursor under --fleet), so a reconnect or
// a restarted server resumes with no gap and no duplicate. One reader
// follows the journal for every stream and keeps its recent messages; a
// stream further back reads the journal itself until it joins them.
// Streams are bounded in number, and one whose client does not take a
// write in time is cut off at its last whole event, never slowing the
// others.
//
// # What it refuses to claim
//
// A stream shows what the journal says: a quiet stream is not a quiet
// world, and a line that is not an event is said as such (a blocked or
// notice event without an id), never passed off as one. A cancel answered
// 202 is a request sent, not a child ended. Under --fleet nothing is
// cancelled: a fleet is other hosts' shipped evidence.
package serve
