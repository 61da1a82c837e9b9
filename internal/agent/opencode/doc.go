// Package opencode reads opencode's own evidence of its sessions: the
// Server-Sent Events its server publishes at /event (ReadSSE), mapped once
// into agent observations (Mapper): a session per top-level opencode
// session, a sub-agent per child session (parentID), tool parts as
// activity with their states, permission.asked … permission.replied as a
// wait for permission (session.status stays busy through it, so the wait
// comes from permission.asked alone), session.idle as waiting for the
// user, and the cost and tokens of its messages as its report. Its
// agent.Driver gives the TUI a --port on loopback and follows that
// server's /event (Follower, over HTTP/1.1 written by hand), reads `opencode
// run --format json` as it passes through (RunStream), and for a plain
// `opencode run` records that only the process is seen. Adopt follows a
// running server by its loopback URL, or by its process once a listening
// loopback socket the process (or a descendant) holds proves which server
// is its (FindServer): the server is a child of its own whose heartbeat is
// its server.heartbeat, its sessions children of it.
//
// It promises that an event it cannot read never panics and never becomes
// a state (it is counted), that an oversized event is skipped and
// counted, and that prompt text, model output and tool input and output
// are never decoded. It refuses to claim more than opencode said: who
// answered a permission is not in the event, a child session's idle is
// read as its stop, what passed while it was not connected (before an
// adoption too) is not seen, and no task success is ever inferred; it
// connects to loopback only and sends nothing but GET /event.
// docs/agents-opencode.md has the mapping and what stays unknown.
package opencode

// Source is the source of opencode's session events, and the --agent
// value.
const Source = "opencode"

// ChildPrefix starts the child id of every opencode session.
const ChildPrefix = "oc"

// Limits is what opencode's event stream can never say, recorded in every
// created event of its sessions and sub-agents.
const Limits = "opencode's own /event stream: when a session or child session was created, was busy, called a tool (pending, running, completed, error), asked for a permission and had it answered, went idle, or errored; not who answered a permission, not whether its work was done, nothing while lcwrap was not connected, no cancel authority"
