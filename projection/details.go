package projection

import (
	"encoding/json"

	"github.com/lcwrap/lcwrap/internal/procid"
	"github.com/lcwrap/lcwrap/jsonl"
)

// facts are the parts of event details (docs/events.md) the projection
// reads. Details are additive: they feed identities, the command, the
// heartbeat interval, the exit and the omission count, never state, order
// or identity of the event itself. Details that do not decode are no
// facts at all.
type facts struct {
	Command             json.RawMessage  `json:"command"` // argv, or the string "unknown"
	HeartbeatIntervalMs int64            `json:"heartbeatIntervalMs"`
	Wrapper             *procid.Identity `json:"wrapper"`
	// An adopted process's identity is flat in its created details.
	PID         int    `json:"pid"`
	StartTime   uint64 `json:"startTime"`
	BootID      string `json:"bootId"`
	Host        string `json:"host"`
	Observation string `json:"observation"`

	Child        *procid.Identity `json:"child"`
	Exit         *Exit            `json:"exit"`
	ChildProcess *ProcessCheck    `json:"childProcess"`
	Omission     *OmissionRecord  `json:"omission"`
}

// Exit is how a process ended, as its terminal event reports it: a code, a
// signal, or a status ("unknown"). It says nothing about whether the task
// succeeded.
type Exit struct {
	Code   *int   `json:"code,omitempty"`
	Signal string `json:"signal,omitempty"`
	Status string `json:"status,omitempty"`
}

// ProcessCheck is one identity check: which process, and what the process
// table said about it.
type ProcessCheck struct {
	Identity procid.Identity `json:"identity"`
	Status   string          `json:"status"` // alive | gone | unknown
	Reason   string          `json:"reason"`
}

// OmissionRecord is a diagnostic's account of complete snapshots that
// left a non-terminal child out (docs/events.md): how many in a row, and
// whether that passed the grace count.
type OmissionRecord struct {
	SnapshotID        string `json:"snapshotId"`
	SnapshotSource    string `json:"snapshotSource"`
	SnapshotEpoch     string `json:"snapshotEpoch"`
	ConsecutiveMisses int    `json:"consecutiveMisses"`
	Grace             int    `json:"grace"`
	Intent            string `json:"intent,omitempty"` // IntentStaleUnknown once misses reach grace
}

// IntentStaleUnknown is what a child omitted by grace consecutive complete
// snapshots becomes: stale, its state unknown — never lost by omission
// alone.
const IntentStaleUnknown = "stale-unknown"

// readFacts decodes the details of the kinds whose details the projection
// uses. It returns nil for other kinds, for no details and for details
// that do not decode.
func readFacts(ev *jsonl.Event) *facts {
	if len(ev.Details) == 0 {
		return nil
	}
	switch ev.Kind {
	case jsonl.KindCreated, jsonl.KindStateChanged, jsonl.KindTerminal, jsonl.KindDiagnostic:
	default:
		return nil
	}
	var f facts
	if json.Unmarshal(ev.Details, &f) != nil {
		return nil
	}
	return &f
}

// command returns the recorded argv, or nil when it is unknown.
func (f *facts) command() []string {
	var argv []string
	if json.Unmarshal(f.Command, &argv) != nil {
		return nil
	}
	return argv
}

// process returns the adopted process's identity when the details hold
// one.
func (f *facts) process() *procid.Identity {
	if f.PID <= 0 {
		return nil
	}
	return &procid.Identity{PID: f.PID, StartTime: f.StartTime, BootID: f.BootID, Host: f.Host}
}
