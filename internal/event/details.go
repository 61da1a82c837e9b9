package event

import (
	"bytes"
	"encoding/json"
	"strconv"
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

func (o *Object) command(k string, c Command) {
	if c == nil {
		o.String(k, "unknown")
		return
	}
	o.Strings(k, c)
}

// Created is the created event of a launched child (lcwrap run).
type Created struct {
	Command             Command   `json:"command"`
	HeartbeatIntervalMs int64     `json:"heartbeatIntervalMs"`
	Profile             string    `json:"profile"`
	Wrapper             *Identity `json:"wrapper"` // the lcwrap process: the lifecycle source
	// Extra are the members an integration adds (the agent member of an
	// agent run: internal/agent), written among these in key order.
	Extra Members `json:"-"`
}

// AppendDetails implements Details.
func (d Created) AppendDetails(o *Object) {
	o.merge(d.Extra)
	o.command("command", d.Command)
	o.Int("heartbeatIntervalMs", d.HeartbeatIntervalMs)
	o.String("profile", d.Profile)
	if d.Wrapper != nil {
		o.Identity("wrapper", *d.Wrapper)
	}
	o.endMerge()
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

// AppendDetails implements Details.
func (d AdoptedCreated) AppendDetails(o *Object) {
	o.OptString("bootId", d.BootID)
	o.command("command", d.Command)
	o.String("executable", d.Executable)
	o.OptString("host", d.Host)
	o.String("observation", d.Observation)
	o.Int("pid", int64(d.PID))
	o.OptString("startClock", d.StartClock)
	o.key("startTime")
	o.b = strconv.AppendUint(o.b, d.StartTime, 10)
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

func (n NotifyOrigin) append(o *Object) {
	if n.Notify != "" {
		o.String("notify", n.Notify)
		o.Int("senderPid", int64(n.SenderPid))
	}
}

// AppendDetails implements Details (a heartbeat from WATCHDOG=1).
func (n NotifyOrigin) AppendDetails(o *Object) { n.append(o) }

// AppendDetails implements Details.
func (d StateChanged) AppendDetails(o *Object) {
	if d.Child != nil {
		o.Identity("child", *d.Child)
	}
	d.NotifyOrigin.append(o)
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

// AppendDetails implements Details.
func (d Terminal) AppendDetails(o *Object) {
	o.merge(d.Extra)
	if d.Cancel != nil {
		o.Object("cancel", d.Cancel)
	}
	o.OptString("check", d.Check)
	if d.ChildProcess != nil {
		o.Object("childProcess", d.ChildProcess)
	}
	o.String("claim", d.Claim)
	o.OptString("error", d.Error)
	if d.Exit != nil {
		o.Object("exit", d.Exit)
	}
	o.OptString("exitStatus", d.ExitStatus)
	if d.Leftovers != nil {
		o.Object("leftovers", d.Leftovers)
	}
	o.OptString("observation", d.Observation)
	if d.Ready != nil {
		o.Bool("ready", *d.Ready)
	}
	if d.Reconciliation != nil {
		o.Object("reconciliation", d.Reconciliation)
	}
	o.endMerge()
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

// ExitCode is the exit of a process that exited with code n.
func ExitCode(n int) *Exit { return &Exit{Code: &n} }

// AppendDetails implements Details: {code}, {coreDumped, signal,
// signalNumber} or {error, status}.
func (e *Exit) AppendDetails(o *Object) {
	switch {
	case e.Status != "":
		o.String("error", e.Error)
		o.String("status", e.Status)
	case e.Signal != "":
		o.Bool("coreDumped", e.CoreDumped)
		o.String("signal", e.Signal)
		o.Int("signalNumber", int64(e.SignalNumber))
	default:
		var n int
		if e.Code != nil {
			n = *e.Code
		}
		o.Int("code", int64(n))
	}
}

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

// AppendDetails implements Details.
func (c *Cancel) AppendDetails(o *Object) {
	o.String("at", c.At)
	o.String("by", c.By)
	o.String("signal", c.Signal)
}

// Leftovers are processes of the child's group that outlived it: Count
// is exact, Pids lists at most 64; Action is "reported" or "terminated".
type Leftovers struct {
	Action string `json:"action"`
	Count  int    `json:"count"`
	Pids   []int  `json:"pids"`
}

// AppendDetails implements Details.
func (l *Leftovers) AppendDetails(o *Object) {
	o.String("action", l.Action)
	o.Int("count", int64(l.Count))
	o.Ints("pids", l.Pids)
}

// ProcessCheck is one identity check: which process, and what the
// process table said about it (alive, gone or unknown, and why).
type ProcessCheck struct {
	Identity Identity `json:"identity"`
	Status   string   `json:"status"`
	Reason   string   `json:"reason"`
}

// AppendDetails implements Details.
func (c *ProcessCheck) AppendDetails(o *Object) {
	o.Identity("identity", c.Identity)
	o.key("status")
	o.b = AppendString(o.b, c.Status)
	o.key("reason")
	o.b = AppendString(o.b, c.Reason)
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

// AppendDetails implements Details.
func (r *Reconciliation) AppendDetails(o *Object) {
	o.String("checked", r.Checked)
	o.Identity("identity", r.Identity)
	o.String("reason", r.Reason)
	o.String("result", r.Result)
	o.OptString("staleReason", r.StaleReason)
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

// AppendDetails implements Details (before is null when empty).
func (c Correction) AppendDetails(o *Object) {
	o.String("after", c.After)
	if c.Before == "" {
		o.Null("before")
	} else {
		o.String("before", c.Before)
	}
	o.String("snapshotEpoch", c.SnapshotEpoch)
	o.String("snapshotId", c.SnapshotID)
	o.String("snapshotSource", c.SnapshotSource)
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

// AppendDetails implements Details (members in declaration order, as
// they have always been written).
func (m *Omission) AppendDetails(o *Object) {
	o.key("snapshotId")
	o.b = AppendString(o.b, m.SnapshotID)
	o.key("snapshotSource")
	o.b = AppendString(o.b, m.SnapshotSource)
	o.key("snapshotEpoch")
	o.b = AppendString(o.b, m.SnapshotEpoch)
	o.Int("consecutiveMisses", int64(m.ConsecutiveMisses))
	o.Int("grace", int64(m.Grace))
	if m.Intent != "" {
		o.key("intent")
		o.b = AppendString(o.b, m.Intent)
	}
}

// OmissionDiagnostic carries an Omission.
type OmissionDiagnostic struct {
	Omission *Omission `json:"omission"`
}

// AppendDetails implements Details.
func (d OmissionDiagnostic) AppendDetails(o *Object) { o.Object("omission", d.Omission) }

// CancelRequested is the diagnostic lcwrap cancel writes before it sends
// the signal, once the wrapper's authority is verified.
type CancelRequested struct {
	Reason      string   `json:"reason,omitempty"`
	Request     string   `json:"request"` // "cancel"
	RequestedBy Identity `json:"requestedBy"`
	Signal      string   `json:"signal"`
	Wrapper     Identity `json:"wrapper"`
}

// AppendDetails implements Details.
func (d CancelRequested) AppendDetails(o *Object) {
	o.OptString("reason", d.Reason)
	o.String("request", d.Request)
	o.Identity("requestedBy", d.RequestedBy)
	o.String("signal", d.Signal)
	o.Identity("wrapper", d.Wrapper)
}

// CancelNotDelivered is the diagnostic for a recorded cancel request that
// did not reach the wrapper.
type CancelNotDelivered struct {
	Error   string `json:"error"`
	Request string `json:"request"` // "cancel"
}

// AppendDetails implements Details (delivered is always false).
func (d CancelNotDelivered) AppendDetails(o *Object) {
	o.Bool("delivered", false)
	o.String("error", d.Error)
	o.String("request", d.Request)
}

// LifecycleSource names the source and epoch of a child's created event.
type LifecycleSource struct {
	Source      string `json:"source"`
	SourceEpoch string `json:"sourceEpoch"`
}

// AppendDetails implements Details.
func (l *LifecycleSource) AppendDetails(o *Object) {
	o.String("source", l.Source)
	o.String("sourceEpoch", l.SourceEpoch)
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

// AppendDetails implements Details.
func (d SnapshotDetails) AppendDetails(o *Object) {
	o.String("checked", d.Checked)
	if d.ChildProcess != nil {
		o.Object("childProcess", d.ChildProcess)
	}
	if d.Identity != nil {
		o.Identity("identity", *d.Identity)
	}
	if d.LifecycleSource != nil {
		o.Object("lifecycleSource", d.LifecycleSource)
	}
	o.String("reason", d.Reason)
	o.String("result", d.Result)
}

// FreeDetails are details a caller of lcwrap emit supplied as one JSON
// object: not a shape of lcwrap's, written as given, keys sorted (emit
// redacts them as a decoded value first: redact.Value). The text filter
// of AppendDetails does not apply to them.
type FreeDetails map[string]any

// AppendDetails implements Details.
func (d FreeDetails) AppendDetails(o *Object) {
	b, err := AppendValue(nil, map[string]any(d))
	if err != nil {
		o.fail(err)
		return
	}
	// b is {...}: splice its members into o.
	if inner := b[1 : len(b)-1]; len(inner) > 0 {
		if o.n > 0 {
			o.b = append(o.b, ',')
		}
		o.n++
		o.b = append(o.b, inner...)
	}
}
