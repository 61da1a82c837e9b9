package event

import (
	"bytes"
	"encoding/json"
)

// This file holds the details shapes the core's readers decode (the
// projection, the views, reconciliation; docs/events.md), one type per
// shape, each encoded member by member in the order the wire format has
// always had. An integration's own shapes live with it (internal/agent,
// internal/agent/codex, internal/supervise, internal/adopt); it adds
// members of its own to Created and Terminal through their Extra. See
// Details for how to add a shape.

// ClaimExitStatusOnly is the claim of every terminal event lcwrap writes:
// what it saw is a process exit status, nothing more.
const ClaimExitStatusOnly = "process-exit-status-only"

// Command is a recorded argv; nil means it could not be read and is
// written as the string "unknown".
type Command []string

// MarshalJSON implements json.Marshaler.
func (c Command) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte(`"unknown"`), nil
	}
	return json.Marshal([]string(c))
}

// UnmarshalJSON reads an argv, or the string "unknown" as nil.
func (c *Command) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte(`"unknown"`)) {
		*c = nil
		return nil
	}
	return json.Unmarshal(b, (*[]string)(c))
}

// Created is the created event of a launched child (lcwrap run).
type Created struct {
	Command             Command   `json:"command"`
	HeartbeatIntervalMs int64     `json:"heartbeatIntervalMs"`
	Profile             string    `json:"profile"`
	Wrapper             *Identity `json:"wrapper,omitempty"` // the lcwrap process: the lifecycle source
	// Extra are the members an integration adds (the agent member of an
	// agent run: internal/agent), written among these in key order.
	Extra Members `json:"-"`
}

// MarshalJSON encodes d with its Extra members among its own.
func (d Created) MarshalJSON() ([]byte, error) {
	type own Created
	return withMembers(own(d), d.Extra)
}

// AdoptedCreated is the created event of an adopted process: its
// identity, flat.
type AdoptedCreated struct {
	BootID      string  `json:"bootId,omitempty"`
	Command     Command `json:"command"`
	Executable  string  `json:"executable"`
	Host        string  `json:"host,omitempty"`
	Observation string  `json:"observation"`
	PID         int     `json:"pid"`
	StartClock  string  `json:"startClock,omitempty"`
	StartTime   uint64  `json:"startTime"`
}

// Identity returns the adopted process's identity (nil when no pid was
// recorded).
func (d AdoptedCreated) Identity() *Identity {
	if d.PID <= 0 {
		return nil
	}
	return &Identity{PID: d.PID, StartTime: d.StartTime, Clock: Clock(d.StartClock), BootID: d.BootID, Host: d.Host}
}

// StateChanged is a state_changed event of a launched child: the child's
// {pid, startTime}, and the notify message that moved it, if one did.
type StateChanged struct {
	Child *Identity `json:"child,omitempty"`
	NotifyOrigin
}

// NotifyOrigin names the sd_notify message behind an event: its text
// ("READY=1", "WATCHDOG=1", "STATUS", ...) and its sender.
type NotifyOrigin struct {
	Notify    string `json:"notify,omitempty"`
	SenderPid int    `json:"senderPid,omitempty"`
}

// Terminal is a terminal event's details, for every writer: lcwrap run
// (claim, exit, cancel, leftovers, error, ready), lcwrap adopt (claim,
// observation, exitStatus, check) and reconciliation (claim, exitStatus,
// reconciliation, childProcess).
type Terminal struct {
	Cancel         *Cancel         `json:"cancel,omitempty"`
	Check          string          `json:"check,omitempty"`
	ChildProcess   *ProcessCheck   `json:"childProcess,omitempty"`
	Claim          string          `json:"claim"`
	Error          string          `json:"error,omitempty"`
	Exit           *Exit           `json:"exit,omitempty"`
	ExitStatus     string          `json:"exitStatus,omitempty"`
	Leftovers      *Leftovers      `json:"leftovers,omitempty"`
	Observation    string          `json:"observation,omitempty"`
	Ready          *bool           `json:"ready,omitempty"`
	Reconciliation *Reconciliation `json:"reconciliation,omitempty"`
	// Extra are the members an integration adds (an agent's report and
	// sessions: internal/agent; codex's rollout: internal/agent/codex),
	// written among these in key order.
	Extra Members `json:"-"`
}

// MarshalJSON encodes d with its Extra members among its own.
func (d Terminal) MarshalJSON() ([]byte, error) {
	type own Terminal
	return withMembers(own(d), d.Extra)
}

// Exit is how a process ended: a code, a signal, or a status ("unknown")
// with the error that kept it unknown. It says nothing about whether the
// task succeeded.
type Exit struct {
	Code         *int   `json:"code,omitempty"`
	CoreDumped   bool   `json:"coreDumped,omitempty"`
	Error        string `json:"error,omitempty"`
	Signal       string `json:"signal,omitempty"`
	SignalNumber int    `json:"signalNumber,omitempty"`
	Status       string `json:"status,omitempty"`
}

// MarshalJSON encodes one of the three shapes of an exit: {code},
// {coreDumped, signal, signalNumber} or {error, status}.
func (e Exit) MarshalJSON() ([]byte, error) {
	switch {
	case e.Status != "":
		return json.Marshal(struct {
			Error  string `json:"error"`
			Status string `json:"status"`
		}{e.Error, e.Status})
	case e.Signal != "":
		return json.Marshal(struct {
			CoreDumped   bool   `json:"coreDumped"`
			Signal       string `json:"signal"`
			SignalNumber int    `json:"signalNumber"`
		}{e.CoreDumped, e.Signal, e.SignalNumber})
	}
	var code int
	if e.Code != nil {
		code = *e.Code
	}
	return json.Marshal(struct {
		Code int `json:"code"`
	}{code})
}

// ExitCode is the exit of a process that exited with code n.
func ExitCode(n int) *Exit { return &Exit{Code: &n} }

// Cancel is the cancel request lcwrap delivered: the signal, who made it
// ("signal", "timeout", "ready-timeout", "context") and when.
type Cancel struct {
	At     string `json:"at"`
	By     string `json:"by"`
	Signal string `json:"signal"`
}

// Who made a cancel request (Cancel.By).
const (
	CancelBySignal       = "signal"
	CancelByTimeout      = "timeout"
	CancelByReadyTimeout = "ready-timeout"
	CancelByContext      = "context" // the program running supervise cancelled it
)

// Leftovers are processes of the child's group that outlived it: Count
// is exact, Pids lists at most 64; Action is "reported" or "terminated".
type Leftovers struct {
	Action string `json:"action"`
	Count  int    `json:"count"`
	Pids   []int  `json:"pids"`
}

// ProcessCheck is one identity check: which process, and what the
// process table said about it (alive, gone or unknown, and why).
type ProcessCheck struct {
	Identity Identity `json:"identity"`
	Status   string   `json:"status"`
	Reason   string   `json:"reason"`
}

// Reconciliation is a lost event's account of the check that proved its
// lifecycle source gone.
type Reconciliation struct {
	Checked     string   `json:"checked"` // wrapper | process
	Identity    Identity `json:"identity"`
	Reason      string   `json:"reason"`
	Result      string   `json:"result"`
	StaleReason string   `json:"staleReason,omitempty"` // heartbeat-deadline | omitted-by-snapshot
}

// Correction is a reconciliation event's details: the state a complete
// snapshot corrected (Before "" when none was known) and the snapshot.
type Correction struct {
	After          string `json:"after"`
	Before         string `json:"before"`
	SnapshotEpoch  string `json:"snapshotEpoch"`
	SnapshotID     string `json:"snapshotId"`
	SnapshotSource string `json:"snapshotSource"`
}

// MarshalJSON encodes c with before null when no state was known.
func (c Correction) MarshalJSON() ([]byte, error) {
	type own Correction
	var before *string
	if c.Before != "" {
		before = &c.Before
	}
	return json.Marshal(struct {
		own
		Before *string `json:"before"`
	}{own(c), before})
}

// Omission is a diagnostic's account of complete snapshots that left a
// non-terminal child out: how many in a row, and whether that passed the
// grace count.
type Omission struct {
	SnapshotID        string `json:"snapshotId"`
	SnapshotSource    string `json:"snapshotSource"`
	SnapshotEpoch     string `json:"snapshotEpoch"`
	ConsecutiveMisses int    `json:"consecutiveMisses"`
	Grace             int    `json:"grace"`
	Intent            string `json:"intent,omitempty"` // IntentStaleUnknown once misses reach grace
}

// IntentStaleUnknown is what a child omitted by grace consecutive
// complete snapshots becomes: stale, its state unknown — never lost by
// omission alone.
const IntentStaleUnknown = "stale-unknown"

// OmissionDiagnostic carries an Omission.
type OmissionDiagnostic struct {
	Omission *Omission `json:"omission"`
}

// CancelRequested is the diagnostic lcwrap cancel writes before it sends
// the signal, once the wrapper's authority is verified.
type CancelRequested struct {
	Reason      string   `json:"reason,omitempty"`
	Request     string   `json:"request"` // "cancel"
	RequestedBy Identity `json:"requestedBy"`
	Signal      string   `json:"signal"`
	Wrapper     Identity `json:"wrapper"`
}

// CancelNotDelivered is the diagnostic for a recorded cancel request that
// did not reach the wrapper.
type CancelNotDelivered struct {
	Delivered bool   `json:"delivered"` // always false
	Error     string `json:"error"`
	Request   string `json:"request"` // "cancel"
}

// LifecycleSource names the source and epoch of a child's created event.
type LifecycleSource struct {
	Source      string `json:"source"`
	SourceEpoch string `json:"sourceEpoch"`
}

// SnapshotDetails are the details of one child of the snapshot lcwrap
// snapshot prints: what was checked and what it showed.
type SnapshotDetails struct {
	Checked         string           `json:"checked"` // none | wrapper | process
	ChildProcess    *ProcessCheck    `json:"childProcess,omitempty"`
	Identity        *Identity        `json:"identity,omitempty"`
	LifecycleSource *LifecycleSource `json:"lifecycleSource,omitempty"`
	Reason          string           `json:"reason"`
	Result          string           `json:"result"` // ended | alive | gone
}

// FreeDetails are details a caller of lcwrap emit supplied as one JSON
// object: not a shape of lcwrap's, written as given, keys sorted (emit
// redacts them as it redacts every shape: redact.Value).
type FreeDetails map[string]any
