package projection

import (
	"github.com/lcwrap/lcwrap/internal/event"
)

// facts are the parts of event details (docs/events.md) the projection
// reads, decoded into the contract's own types (event), the ones every
// writer encodes. Details are additive: they feed identities, the command,
// the heartbeat interval, the exit and the omission count, never state,
// order or identity of the event itself. Details that do not decode as
// their kind's shape are no facts at all.
type facts struct {
	Command             []string // nil when unknown
	HeartbeatIntervalMs int64
	Wrapper             *event.Identity
	Process             *event.Identity // an adopted process's (flat in its created details)
	Observation         string

	Child        *event.Identity
	Wait         *waitFacts // a state change's waiting reason and evidence
	Exit         *event.Exit
	ChildProcess *ProcessCheck
	Omission     *OmissionRecord
	Usage        *Usage // an agent's running totals of its model requests
}

// usageFacts is the member of an agent's diagnostic that carries its
// running totals (details.agentUsage).
type usageFacts struct {
	Usage *Usage `json:"agentUsage"`
}

// Usage is an agent's own running totals of its model requests for a
// session or sub-agent, as its telemetry reported them: its estimate,
// attributed (ReportedBy, Via), never lcwrap's measurement. Dropped counts
// telemetry payloads lcwrap could not take, so the totals may be short.
type Usage struct {
	Requests      int64   `json:"requests"`
	Input         int64   `json:"input"`
	Output        int64   `json:"output"`
	CacheRead     int64   `json:"cacheRead"`
	CacheCreation int64   `json:"cacheCreation"`
	CostUSD       float64 `json:"costUsd"`
	CostUnknown   bool    `json:"costUnknown,omitempty"`
	Model         string  `json:"model,omitempty"`
	Dropped       int64   `json:"dropped,omitempty"`
	ReportedBy    string  `json:"reportedBy"`
	Via           string  `json:"via"`
	ObservedAt    string  `json:"observedAt"`
}

// Exit is how a process ended, as a view reports it: a code, a signal, or
// a status ("unknown"). It says nothing about whether the task succeeded.
type Exit struct {
	Code   *int   `json:"code,omitempty"`
	Signal string `json:"signal,omitempty"`
	Status string `json:"status,omitempty"`
}

func exitOf(e *event.Exit) *Exit {
	if e == nil {
		return nil
	}
	return &Exit{Code: e.Code, Signal: e.Signal, Status: e.Status}
}

// ProcessCheck is one identity check: which process, and what the process
// table said about it.
type ProcessCheck = event.ProcessCheck

// OmissionRecord is a diagnostic's account of complete snapshots that
// left a non-terminal child out (docs/events.md).
type OmissionRecord = event.Omission

// IntentStaleUnknown is what a child omitted by grace consecutive complete
// snapshots becomes: stale, its state unknown — never lost by omission
// alone.
const IntentStaleUnknown = event.IntentStaleUnknown

// readFacts decodes the details of the kinds whose details the projection
// uses. It returns nil for other kinds, for no details and for details
// that do not decode.
func readFacts(ev *event.Event) *facts {
	if len(ev.Details) == 0 {
		return nil
	}
	switch ev.Kind {
	case event.KindCreated:
		launched, ok := event.DecodeDetails[event.Created](ev.Details)
		adopted, ok2 := event.DecodeDetails[event.AdoptedCreated](ev.Details)
		if !ok || !ok2 {
			return nil
		}
		return &facts{Command: launched.Command, HeartbeatIntervalMs: launched.HeartbeatIntervalMs,
			Wrapper: launched.Wrapper, Process: adopted.Identity(), Observation: adopted.Observation}
	case event.KindStateChanged:
		if d, ok := event.DecodeDetails[event.StateChanged](ev.Details); ok {
			f := &facts{Child: d.Child}
			if ev.State == event.StateWaiting {
				if w, ok := event.DecodeDetails[waitFacts](ev.Details); ok {
					f.Wait = &w
				}
			}
			return f
		}
	case event.KindTerminal:
		if d, ok := event.DecodeDetails[event.Terminal](ev.Details); ok {
			return &facts{Exit: d.Exit, ChildProcess: d.ChildProcess}
		}
	case event.KindDiagnostic:
		if d, ok := event.DecodeDetails[event.OmissionDiagnostic](ev.Details); ok && d.Omission != nil {
			return &facts{Omission: d.Omission}
		}
		if d, ok := event.DecodeDetails[usageFacts](ev.Details); ok && d.Usage != nil {
			return &facts{Usage: d.Usage}
		}
	}
	return nil
}

// waitFacts are what a waiting state's details say of the wait: its
// reason (details.waitingFor, from the one vocabulary of event.WaitReason)
// and the evidence that opened it (details.evidence: an agent's hook, a
// transcript line). Both are read as written; neither is required.
type waitFacts struct {
	WaitingFor string `json:"waitingFor"`
	Evidence   string `json:"evidence"`
}
