// Package copilot reads GitHub Copilot CLI's own evidence of its sessions
// and sub-agents and maps it, once, into agent observations: the payloads
// of its command hooks (Normalize), relayed to the wrapper by `lcwrap hook
// copilot --relay --event NAME`, and the result line of `copilot -p …
// --output-format json` (its report), and each session's own file
// ($COPILOT_HOME/session-state/<id>/events.jsonl, ParseSessionLine),
// followed read-only from the session's start (its id comes from lcwrap's
// sessionStart hook) to the run's end for its permission requests, their
// answers and its usage records (tokens as Copilot counts them; its cost
// field is not read, so the cost stays unknown). Its agent.Driver adds the hooks for
// a run lcwrap launches as a plugin of that run's own (--plugin-dir, a
// private directory removed when the run ends), never in the user's
// files.
//
// It promises that a payload it cannot read never panics and never becomes
// a state (it is counted), that prompts, responses and tool output are
// never decoded, and that lcwrap never registers a hook whose failure
// would stop the agent: Copilot denies a tool whose preToolUse or
// permissionRequest hook fails (measured), so those are never lcwrap's,
// and a tool call is seen when it ends. A permission wait said by the
// notification hook and the session file is recorded once (the file's).
// docs/agents-copilot.md has the
// mapping and what stays unknown.
package copilot
