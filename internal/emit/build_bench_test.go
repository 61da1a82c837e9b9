package emit

import (
	"testing"

	"github.com/lcwrap/lcwrap/internal/event"
)

// outputDetails is an activity event's details as supervise writes them
// for output activity ({"output":"stdout"}).
type outputDetails struct {
	Output string `json:"output"`
}

// BenchmarkBuild builds the events of one short run (created, starting,
// running, an activity line, terminal), redaction and validation
// included: the build path every event lcwrap writes takes. "secrets"
// gives the strings something to redact.
func BenchmarkBuild(b *testing.B) {
	self := event.Identity{PID: 4242, StartTime: 123456789, BootID: "6f1c2d3e-1111-2222-3333-444455556666", Host: "build-host"}
	child := &event.Identity{PID: 4243, StartTime: 123456800}
	for _, tc := range []struct {
		name     string
		argv     []string
		activity string
	}{
		{"run", []string{"make", "-j8", "all"}, "cc -O2 -c main.c -o main.o"},
		{"secrets", []string{"curl", "-H", "Authorization: Bearer abcdefghijklmnop", "https://x"}, "export API_TOKEN=abcdef1234567890"},
	} {
		specs := []Spec{
			{Kind: event.KindCreated, State: event.StateCreated, Details: event.Created{Command: event.Command(tc.argv), HeartbeatIntervalMs: 10000, Wrapper: &self, Profile: "launched"}},
			{Kind: event.KindStateChanged, State: event.StateStarting, Details: event.StateChanged{Child: child}},
			{Kind: event.KindStateChanged, State: event.StateRunning, Details: event.StateChanged{Child: child}},
			{Kind: event.KindActivity, Activity: tc.activity, Details: outputDetails{"stdout"}},
			{Kind: event.KindTerminal, State: event.StateCompleted, Details: event.Terminal{Claim: event.ClaimExitStatusOnly, Exit: event.ExitCode(0)}},
		}
		b.Run(tc.name, func(b *testing.B) {
			c := New(Options{}).Child("make-k3x9qa2m", event.Lineage{}, event.Launched(true))
			for b.Loop() {
				for _, s := range specs {
					if _, _, err := c.Build(s); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
