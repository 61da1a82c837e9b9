package codex

import (
	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// The details shapes of the Codex source that are lcwrap's own findings,
// not codex's report: whether a session's rollout file was proven to be
// the observed process's, and the daemons seen. docs/agents-codex.md
// describes each member.

// KeyCodexRollout is the key of the member the codex integration adds to
// a launched process's terminal event (event.Terminal's Extra: a
// CodexRollout); readers decode it with TerminalMembers.
const KeyCodexRollout = "codexRollout"

// TerminalMembers is the codex member of a launched process's terminal
// event, as a reader decodes it (event.DecodeDetails).
type TerminalMembers struct {
	CodexHooks   *CodexHooks   `json:"codexHooks,omitempty"`
	CodexRollout *CodexRollout `json:"codexRollout,omitempty"`
}

// RolloutProof is why lcwrap holds a rollout file to be one process
// tree's session: the holder (the root, or a descendant reached through
// Chain) has it open and serves no one outside the tree.
type RolloutProof struct {
	Chain            []int          `json:"chain"`
	Evidence         string         `json:"evidence"`
	Holder           event.Identity `json:"holder"`
	HolderExecutable string         `json:"holderExecutable,omitempty"`
	OwnSession       bool           `json:"ownSession"`
	Rollout          string         `json:"rollout"`
	ThreadID         string         `json:"threadId"`
}

// CodexDaemon is a descendant of the observed process that led a session
// of its own (setsid) and was still alive when that process ended.
type CodexDaemon struct {
	Command    string         `json:"command"`
	Note       string         `json:"note"`
	OwnSession bool           `json:"ownSession"`
	Process    event.Identity `json:"process"`
}

// CodexRollout is the "codexRollout" member of a launched process's
// terminal event: whether the session's rollout was followed (Rollout
// "followed" with its Proof) or not (Rollout "not followed", with the
// last check and the refusals counted), and the daemons that outlived it.
type CodexRollout struct {
	Daemons   []CodexDaemon `json:"daemons,omitempty"`
	LastCheck string        `json:"lastCheck,omitempty"`
	Note      string        `json:"note,omitempty"`
	Proof     *RolloutProof `json:"proof,omitempty"`
	ReadError string        `json:"readError,omitempty"`
	Refusals  agent.IntMap  `json:"refusals,omitempty"`
	Rollout   string        `json:"rollout"`
}

// RolloutProven is the diagnostic on an adopted codex process once its
// session's rollout is proven (lcwrap adopt): the session is followed as
// a child of it.
type RolloutProven struct {
	Agent   string        `json:"agent"`
	Message string        `json:"message"`
	Proof   *RolloutProof `json:"proof"`
}

// KeyCodexHooks is the key of the member a launched codex's terminal
// event carries about the hooks lcwrap registered for it (a CodexHooks).
const KeyCodexHooks = "codexHooks"

// CodexHooks is the "codexHooks" member of a launched process's terminal
// event, lcwrap's own finding: the hooks it registered (session flags,
// this run only), those the user's codex config did not trust (codex
// does not run them), whether the command itself passed
// --dangerously-bypass-hook-trust, and the payloads that arrived or were
// refused.
type CodexHooks struct {
	BypassTrust bool         `json:"bypassTrust,omitempty"`
	Command     string       `json:"command"`
	NotTrusted  []string     `json:"notTrusted,omitempty"`
	Note        string       `json:"note,omitempty"`
	Payloads    int64        `json:"payloads"`
	Registered  []string     `json:"registered,omitempty"`
	Rejected    agent.IntMap `json:"rejected,omitempty"`
}
