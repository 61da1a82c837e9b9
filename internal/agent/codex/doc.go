// Package codex reads OpenAI Codex's own evidence of its sessions and
// maps it, once, into agent observations: the events `codex exec --json`
// prints on stdout (ExecReader), and the rollout file an interactive
// session writes under $CODEX_HOME/sessions (RolloutReader), which it
// follows only once Prove has shown that the observed process, or a
// descendant serving no one else, holds that very file open, and the
// payloads of codex's command hooks (NormalizeHook), which a run lcwrap
// launches registers for itself as config overrides (HookArgs: nothing is
// written) and which codex runs only once the user has trusted them
// (Untrusted, TrustConfig). Its agent.Driver reads them for a run lcwrap
// launches (Prepare) and for an adopted codex process (Adopt, rollout
// only; its other shapes say they are not supported).
//
// It promises that a payload it cannot read never panics and never becomes
// a state (it is counted: agent.Unrecognize), that prompt text, messages,
// reasoning and command output never reach an observation, and that a
// rollout of another session is never attached, and that lcwrap never
// trusts its own hooks for the user nor passes
// --dangerously-bypass-hook-trust. It refuses to claim more
// than codex said: codex reports no end of a session, and exec never
// says it waits for anyone. docs/agents-codex.md has the mapping table
// and what this source can never say.
package codex
