package fleet

import (
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
)

// SnapshotSource is the source of the snapshots `lcwrap snapshot --fleet`
// builds.
const SnapshotSource = "lcwrap-fleet-snapshot"

// Snapshot is a fleet's snapshot: the contract's AuthoritativeSnapshot
// fields, never complete, with a coverage of hosts instead of child ids.
// It vouches for nothing beyond what was shipped: no process was checked,
// and a host's children are as of its last-heard time. Its coverage is
// not the contract's shape, so `lcwrap reconcile` refuses it whole.
type Snapshot struct {
	Source      string          `json:"source"`
	SourceEpoch string          `json:"sourceEpoch"`
	SnapshotID  string          `json:"snapshotId"`
	ObservedAt  string          `json:"observedAt"`
	Complete    bool            `json:"complete"` // always false
	Basis       string          `json:"basis"`
	Coverage    SnapshotCover   `json:"coverage"`
	Children    []SnapshotChild `json:"children"`
}

// SnapshotCover lists the hosts heard from, with when.
type SnapshotCover struct {
	Hosts []SnapshotHost `json:"hosts"`
}

// SnapshotHost is one host of a fleet snapshot's coverage.
type SnapshotHost struct {
	Host        string `json:"host"`
	HostID      string `json:"hostId,omitempty"`
	LastHeardAt string `json:"lastHeardAt,omitempty"` // "" when no record carried the gateway's stamp
	Silent      bool   `json:"silent"`
}

// SnapshotChild is one child of a fleet snapshot.
type SnapshotChild struct {
	Host        string      `json:"host"`
	ChildID     string      `json:"childId"`
	State       event.State `json:"state"`
	Stale       bool        `json:"stale"`
	StaleReason string      `json:"staleReason,omitempty"`
	Provisional bool        `json:"provisional"`
}

// BuildSnapshot turns a report (built with all set) into a snapshot of
// every child whose state an event has said, for the reason given
// (part of the snapshotId).
func BuildSnapshot(rep Report, reason string) Snapshot {
	epoch := emit.NewEpoch()
	s := Snapshot{Source: SnapshotSource, SourceEpoch: epoch, SnapshotID: epoch + "/" + reason, ObservedAt: rep.GeneratedAt,
		Basis: Basis, Coverage: SnapshotCover{Hosts: []SnapshotHost{}}, Children: []SnapshotChild{}}
	for _, h := range rep.Hosts {
		s.Coverage.Hosts = append(s.Coverage.Hosts, SnapshotHost{Host: h.Host, HostID: h.HostID, LastHeardAt: h.LastHeardAt, Silent: h.Silent})
	}
	for _, c := range rep.Children {
		if c.State == nil {
			continue
		}
		s.Children = append(s.Children, SnapshotChild{Host: c.Host, ChildID: c.ChildID, State: *c.State,
			Stale: c.Stale, StaleReason: c.StaleReason, Provisional: c.Provisional})
	}
	return s
}
