package agent

import (
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

// Kind is what an agent's evidence says happened, in lcwrap's words. Each
// source (Claude Code's hooks, its stream-json, Codex's events) maps its
// own payloads onto these once, at its edge.
type Kind string

// The observations a source can make. What each one proves, and the
// lifecycle event it becomes, is in docs/agents.md.
const (
	// SessionStarted: the agent says a session began (Source: startup,
	// resume, clear, compact, as the agent gave it).
	SessionStarted Kind = "session-started"
	// PromptSubmitted: a prompt was submitted (its text is never kept).
	PromptSubmitted Kind = "prompt-submitted"
	// ToolStarted, ToolEnded, ToolFailed: a tool call began, ended, or
	// ended with an error the agent reported (Tool, Summary).
	ToolStarted Kind = "tool-started"
	ToolEnded   Kind = "tool-ended"
	ToolFailed  Kind = "tool-failed"
	// Working: the agent says it is at work (a status it keeps): running,
	// with Summary as activity.
	Working Kind = "working"
	// Waiting: the agent says it waits for someone (WaitingFor: one of
	// event's wait reasons).
	Waiting Kind = "waiting"
	// TurnEnded: the agent finished a response and waits for the user.
	TurnEnded Kind = "turn-ended"
	// ErrorReported: the agent reported an error (Reason: its class); not
	// a state.
	ErrorReported Kind = "error-reported"
	// Note: something the agent said that is worth an activity line and
	// nothing more (Summary).
	Note Kind = "note"
	// SubagentStarted, SubagentStopped: a sub-agent (Agent, AgentType)
	// began or stopped.
	SubagentStarted Kind = "subagent-started"
	SubagentStopped Kind = "subagent-stopped"
	// SessionEnded: the agent says the session ended (Reason as given).
	SessionEnded Kind = "session-ended"
	// UsageReported: the agent's running totals of its model requests for
	// the session or sub-agent (Usage); a diagnostic, never a state, and
	// recorded after the child's end too (telemetry is flushed last).
	UsageReported Kind = "usage-reported"
)

// Observation is one fact from an agent's own evidence, already cut down
// to what lcwrap may keep: no prompt text, no tool output, no message.
// Summary and the Facts strings are redacted again before any sink.
type Observation struct {
	Kind Kind
	// Session is the agent's session id (required).
	Session string
	// Agent is the sub-agent id when the observation is about, or comes
	// from inside, a sub-agent; empty for the session itself.
	Agent string
	// AgentType is the sub-agent's type (Explore, general-purpose, ...).
	AgentType string
	// Native is the source's own name for what it saw ("PreToolUse",
	// "item.started"); recorded as evidence.
	Native string
	// Tool names the tool; Summary says briefly what it was asked to do
	// (a command, a path, a pattern), cut short.
	Tool    string
	Summary string
	// WaitingFor says what a Waiting observation waits for (a TurnEnded
	// one waits for the user).
	WaitingFor event.WaitReason
	// Source is how a session started; Reason how it ended, or the class
	// of a reported error. Both exactly as the agent gave them.
	Source string
	Reason string
	// EndState is the terminal state a SessionEnded observation reports
	// (failed, cancelled), as the agent said it; empty: completed.
	EndState event.State
	// Facts are further details the agent gave (cwd, model, transcript
	// path), recorded as its report.
	Facts Facts
	// Usage is an UsageReported observation's totals; Decision, on any
	// observation, a permission decision the agent reported.
	Usage    *AgentTotals
	Decision *AgentDecision
	// At is when the observation was made (zero: now).
	At time.Time
}

// Outcome is what a source made of one native payload, as the Fornax
// normalization policy has it: observations, or a payload recognised and
// deliberately ignored (Ignored: a short static reason), or one not
// recognised at all (Unrecognized: its own type tag, never its content).
// A source never panics and never returns an error for a payload.
type Outcome struct {
	Observations []Observation
	Ignored      string
	Unrecognized string
	// Session is the session an ignored or unrecognised payload names,
	// when it can be read, so that its count lands on that session.
	Session string
}

// Ignore returns an Outcome for a recognised payload that is deliberately
// not recorded.
func Ignore(session, reason string) Outcome { return Outcome{Ignored: reason, Session: session} }

// Unrecognize returns an Outcome for a payload nothing here knows;
// discriminator is its type tag ("" when it has none).
func Unrecognize(session, discriminator string) Outcome {
	if discriminator == "" {
		discriminator = "(none)"
	}
	return Outcome{Unrecognized: discriminator, Session: session}
}

// Observe returns an Outcome of observations.
func Observe(obs ...Observation) Outcome { return Outcome{Observations: obs} }
