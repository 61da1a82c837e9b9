package adopt

// The details shapes only adopt writes (docs/events.md); the shapes
// readers decode (AdoptedCreated, Terminal) are the event core's.

// LimitsDiagnostic states what a source cannot know (after an adopted
// child's created event).
type LimitsDiagnostic struct {
	Limits string `json:"limits"`
}

// ObservationEnded is the diagnostic of an observer that stopped before
// the process ended: its state is unknown.
type ObservationEnded struct {
	Observation  string `json:"observation"`
	ProcessState string `json:"processState"`
	Reason       string `json:"reason"`
}
