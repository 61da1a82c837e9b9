package event

import (
	"fmt"
	"slices"
	"sort"
)

// CapValue is one capability's status: Known or Unknown.
type CapValue string

const (
	// Known means the source produces this kind of evidence.
	Known CapValue = "known"
	// Unknown means it does not, or lcwrap cannot tell. It is the default.
	Unknown CapValue = "unknown"
)

// Valid reports whether v is one of the two contract values.
func (v CapValue) Valid() bool { return v == Known || v == Unknown }

// CapabilityNames lists the five capability keys in contract order.
var CapabilityNames = [5]string{"history", "heartbeat", "snapshot", "cancel", "terminalCause"}

// Capabilities is the contract's capabilities object.
type Capabilities struct {
	History       CapValue `json:"history"`
	Heartbeat     CapValue `json:"heartbeat"`
	Snapshot      CapValue `json:"snapshot"`
	Cancel        CapValue `json:"cancel"`
	TerminalCause CapValue `json:"terminalCause"`
}

// AllUnknown is the honest default: nothing is claimed.
func AllUnknown() Capabilities {
	return Capabilities{Unknown, Unknown, Unknown, Unknown, Unknown}
}

// Normalize turns every empty value into Unknown; it never produces Known.
func (s Capabilities) Normalize() Capabilities {
	for _, p := range s.fields() {
		if *p == "" {
			*p = Unknown
		}
	}
	return s
}

// Get returns the value of a capability by its contract name.
func (s Capabilities) Get(name string) (CapValue, bool) {
	switch name {
	case "history":
		return s.History, true
	case "heartbeat":
		return s.Heartbeat, true
	case "snapshot":
		return s.Snapshot, true
	case "cancel":
		return s.Cancel, true
	case "terminalCause":
		return s.TerminalCause, true
	}
	return "", false
}

func (s *Capabilities) fields() [5]*CapValue {
	return [5]*CapValue{&s.History, &s.Heartbeat, &s.Snapshot, &s.Cancel, &s.TerminalCause}
}

// Profile is a named, documented capability set.
type Profile struct {
	// Name is how the profile is chosen on the command line (emit --profile).
	Name string
	// Set is what the profile declares.
	Set Capabilities
	// Why says in one sentence what evidence justifies each known value.
	Why string
}

// profiles are the named profiles. A slice of constants,
// not a map: package initialisation is on every process's start-up path.
var profiles = []Profile{
	{
		Name: "launched",
		Set:  Capabilities{History: Known, Heartbeat: Known, Snapshot: Unknown, Cancel: Known, TerminalCause: Known},
		Why:  "lcwrap started the process: it saw every transition, emits heartbeats, can signal the process group it created and reads the exit status from wait.",
	},
	{
		Name: "launched-no-heartbeat",
		Set:  Capabilities{History: Known, Heartbeat: Unknown, Snapshot: Unknown, Cancel: Known, TerminalCause: Known},
		Why:  "as launched, but with --heartbeat 0 there is no liveness evidence between transitions.",
	},
	{
		Name: "launched-watchdog",
		Set:  Capabilities{History: Known, Heartbeat: Known, Snapshot: Unknown, Cancel: Known, TerminalCause: Known},
		Why:  "as launched, but the heartbeats are the child's own sd_notify WATCHDOG=1 pings (--watchdog): lcwrap writes none, so a child that falls silent goes stale.",
	},
	{
		Name: "adopted-pid-only",
		Set:  AllUnknown(),
		Why:  "only process presence is visible: history, state, heartbeat, exit cause and cancel authority are unknown.",
	},
	{
		Name: "external",
		Set:  AllUnknown(),
		Why:  "events relayed by a stateless producer (a hook script): what happened before or between its calls is unknown.",
	},
}

// Launched is the profile of a child lcwrap started itself.
func Launched(heartbeat bool) Profile {
	if heartbeat {
		return profile("launched")
	}
	return profile("launched-no-heartbeat")
}

// LaunchedWatchdog is the profile of a child lcwrap started whose
// heartbeats are its own watchdog pings.
func LaunchedWatchdog() Profile { return profile("launched-watchdog") }

// AdoptedPIDOnly is the profile of a process observed by pid alone.
func AdoptedPIDOnly() Profile { return profile("adopted-pid-only") }

// External is the profile of events relayed by a stateless producer.
func External() Profile { return profile("external") }

// Lookup finds a profile by name. It returns an error naming the choices
// when the name is unknown.
func Lookup(name string) (Profile, error) {
	i := slices.IndexFunc(profiles, func(p Profile) bool { return p.Name == name })
	if i < 0 {
		return Profile{}, fmt.Errorf("unknown capability profile %q (choose one of %v)", name, ProfileNames())
	}
	return profiles[i], nil
}

// profile is the named profile, which exists.
func profile(name string) Profile {
	p, err := Lookup(name)
	if err != nil {
		panic(err)
	}
	return p
}

// ProfileNames lists the profile names, sorted.
func ProfileNames() []string {
	names := make([]string, 0, len(profiles))
	for _, p := range profiles {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}
