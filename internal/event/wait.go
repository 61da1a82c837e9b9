package event

// WaitReason is what a waiting child waits for: one vocabulary for every
// source that can say a child waits (an agent's hooks, its event stream,
// its own registry), written as details.waitingFor. docs/agents.md says
// which evidence gives each reason.
type WaitReason string

// The waiting reasons. The first three are the values journals have always
// carried; a reader meets the others only from newer writers.
const (
	// WaitPermission: a person must allow or deny something the agent
	// asked to do (a permission prompt for a tool call).
	WaitPermission WaitReason = "permission"
	// WaitInput: the agent asked a question and waits for the answer.
	WaitInput WaitReason = "input"
	// WaitUser: the turn ended; the next prompt is the user's.
	WaitUser WaitReason = "user"
	// WaitDialog: a dialog of the agent's own holds it (a trust prompt, a
	// login, a setting to confirm), not a question about the task.
	WaitDialog WaitReason = "dialog"
	// WaitOther: the source says the child waits, for something none of
	// the above names.
	WaitOther WaitReason = "other"
)

// ParseWaitReason reads a waitingFor value as a journal carries it. Its
// outcomes: a value of the vocabulary is that reason; "" (no reason
// recorded) is ""; anything else — a value a later or foreign writer used —
// is WaitOther. It only classifies: the raw value stays in the details it
// came from, for whoever wants it.
func ParseWaitReason(raw string) WaitReason {
	switch r := WaitReason(raw); r {
	case "", WaitPermission, WaitInput, WaitUser, WaitDialog, WaitOther:
		return r
	}
	return WaitOther
}
