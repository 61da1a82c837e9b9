// Package anthropicmock is a small stand-in for the Anthropic Messages API
// on 127.0.0.1, for tests that run the real Claude Code CLI offline
// (ANTHROPIC_BASE_URL pointing at it). It streams server-sent events the
// way the CLI expects and answers from a script chosen by a marker in the
// conversation's user text:
//
//   - "lcwrap-scenario:bash": a Bash tool call, then a short answer;
//   - "lcwrap-scenario:agent": an Agent tool call that starts an Explore
//     sub-agent (whose own requests carry "lcwrap-subagent-task" and get a
//     short answer), then a short answer;
//   - "lcwrap-scenario:both": Bash, then Agent, then a short answer;
//   - "lcwrap-scenario:sleep": a Bash call that sleeps a minute, then a
//     short answer;
//   - anything else, and every request without tools (titles, summaries):
//     a short answer.
//
// It never listens on anything but 127.0.0.1 and records nothing but the
// count of requests it served.
package anthropicmock
