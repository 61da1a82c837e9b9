package opencode

import "github.com/lcwrap/lcwrap/internal/event"

// The details shapes the adoption of an opencode server writes on the
// server's own child (docs/agents-opencode.md).

// ServerCreated is the created event of an adopted server's child.
type ServerCreated struct {
	Agent string `json:"agent"`
	// URL is where its /event is read (always 127.0.0.1 or [::1]).
	URL string `json:"url"`
	// Observation is "server-stream".
	Observation string `json:"observation"`
	// HeartbeatIntervalMs is the interval of server.heartbeat as measured
	// with opencode 1.18.33 (10 s): a stream silent for longer is stale.
	HeartbeatIntervalMs int64 `json:"heartbeatIntervalMs"`
	// Proof says why the server is the adopted process's (pid form only).
	Proof *ServerProof `json:"proof,omitempty"`
	// Limits is what the stream can never say.
	Limits string `json:"limits"`
}

// ServerProof is why a listening socket is the adopted process's server:
// the kernel lists the socket as listening on Port, and the process (or
// a descendant, Chain from it down to Holder) holds it open.
type ServerProof struct {
	Evidence string         `json:"evidence"`
	Holder   event.Identity `json:"holder"`
	Chain    []int          `json:"chain"`
	Port     int            `json:"port"`
	Inode    uint64         `json:"inode"`
	Address  string         `json:"address"`
}

// ServerNote is a diagnostic on the server's child: its heartbeat's
// origin, a stream taken up again, or the end of observation.
type ServerNote struct {
	From        string `json:"from,omitempty"`
	Observation string `json:"observation,omitempty"`
	Reason      string `json:"reason,omitempty"`
	State       string `json:"serverState,omitempty"`
}
