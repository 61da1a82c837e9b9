// Package agent turns what an AI coding agent says about itself — its
// sessions, prompts, tool calls, permission prompts, turn ends,
// sub-agents — into lifecycle events, one child per session (its parent is
// the process that runs the agent) and one per sub-agent (its parent is
// the session).
//
// Each source (Claude Code's hooks and stream-json, Codex's events) maps
// its native payloads once into Observations, or says it ignored or did
// not recognise them (Outcome: the Fornax normalization policy). A Tracker
// applies the contract's edges to them: a session starts created, then
// starting; a prompt or tool call proves running; a permission prompt or a
// turn's end is waiting; a repeated state is activity, never a self-edge;
// a reported end is completed with the claim "agent-reported-end"; when
// the agent's process ends, every child still open becomes lost, once.
// Capabilities rise only with evidence: history is known only for a
// lifecycle whose start was seen.
//
// Each agent is a Driver. For a run lcwrap launches, Prepare returns a
// Run: what it changes in the command (arguments, environment, what the
// created event records) and its seams (stdout read as it passes, the
// started identity, close, the terminal event's report). For an agent
// lcwrap did not start, Adopt follows one of three shapes — a process by
// its pid, every session the agent's own registry lists, a running
// server's event stream — or says ErrNotSupported; it never pretends to
// follow what it cannot. A Driver whose agent calls lcwrap back as a
// command also implements Hooks. Waiting reasons are event.WaitReason.
// ProcessTree reads an adopted process's live descendants (Linux), the
// tree whose open files prove what belongs to it.
//
// It refuses to claim more: no event says a task succeeded, a guessed
// state is never written, and prompt text, tool output and messages never
// reach an Observation. What each source can never say is in
// docs/agents.md.
package agent
