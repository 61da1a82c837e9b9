// Package gemini reads the Gemini CLI's own evidence of its sessions and
// maps it, once, into agent observations: the payloads of its command
// hooks (Normalize), relayed to the wrapper by `lcwrap hook gemini
// --relay`, and the lines of `gemini -p … -o stream-json` (ParseStreamLine),
// read as they pass through. Its agent.Driver registers the hooks for a run
// lcwrap launches in a settings file of that run's own
// (GEMINI_CLI_SYSTEM_DEFAULTS_PATH, merged with the system defaults
// already in force), never in the user's files — which Gemini CLI reads
// only when root owns the file and every directory above it, so a run by
// another user gets no hooks and says so.
//
// It promises that a payload it cannot read never panics and never becomes
// a state (it is counted), and that prompt text, model responses and tool
// output are never decoded. It refuses to claim more than Gemini said:
// headless runs never wait (tools that would ask are not offered); its
// sub-agents are children of their session only from their own transcript
// files and telemetry records (never guessed), while their tool hooks
// carry their parent's session id (they are the session's activity); its
// telemetry
// (OTLP logs set for the run by environment variables, read by
// ParseTelemetry) gives tokens as Gemini's own count but no cost, and
// decisions without who made them; a user's own telemetry configuration
// is left alone. docs/agents-gemini.md has the mapping and what stays
// unknown.
package gemini
