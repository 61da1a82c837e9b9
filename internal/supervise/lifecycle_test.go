package supervise

import (
	"errors"
	"slices"
	"testing"

	"github.com/lcwrap/lcwrap/internal/event"
)

// The edges lcwrap takes for a launched child are a subset of the
// contract's table, which the projection applies: every event lcwrap
// writes is one the projection accepts. The contract edges it leaves out
// are exactly these.
func TestLaunchedEdgesNarrowTheContract(t *testing.T) {
	notTaken := map[[2]event.State]bool{
		{event.StateCreated, event.StateCancelled}: true,
		{event.StateCreated, event.StateLost}:      true,
		{event.StateStarting, event.StateWaiting}:  true,
	}
	if got := launchedEdges(""); !slices.Equal(got, []event.State{event.StateCreated}) {
		t.Fatalf("first event: %v, want created only", got)
	}
	for _, from := range event.States {
		for _, to := range event.States {
			contract := event.Transition(from, to) == nil
			err := transition(from, to)
			switch {
			case err == nil && !contract:
				t.Errorf("lcwrap takes %s → %s, which the contract's table refuses", from, to)
			case err != nil && contract && !notTaken[[2]event.State{from, to}]:
				t.Errorf("lcwrap refuses %s → %s, a contract edge not listed as left out", from, to)
			case err == nil && notTaken[[2]event.State{from, to}]:
				t.Errorf("%s → %s is listed as left out but lcwrap takes it", from, to)
			}
			var te *event.TransitionError
			if err != nil && (!errors.As(err, &te) || te.From != from || te.To != to) {
				t.Errorf("%s → %s: %v, want a event.TransitionError naming both", from, to, err)
			}
		}
	}
	if err := transition("", event.StateRunning); err == nil || err.Error() != "illegal transition (none) → running" {
		t.Errorf("no event yet → running: %v", err)
	}
}
