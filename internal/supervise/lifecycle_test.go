package supervise

import (
	"errors"
	"slices"
	"testing"

	"github.com/lcwrap/lcwrap/internal/jsonl"
)

// The edges lcwrap takes for a launched child are a subset of the
// contract's table, which the projection applies: every event lcwrap
// writes is one the projection accepts. The contract edges it leaves out
// are exactly these.
func TestLaunchedEdgesNarrowTheContract(t *testing.T) {
	notTaken := map[[2]jsonl.State]bool{
		{jsonl.StateCreated, jsonl.StateCancelled}: true,
		{jsonl.StateCreated, jsonl.StateLost}:      true,
		{jsonl.StateStarting, jsonl.StateWaiting}:  true,
	}
	if got := launchedEdges[""]; !slices.Equal(got, []jsonl.State{jsonl.StateCreated}) {
		t.Fatalf("first event: %v, want created only", got)
	}
	for _, from := range jsonl.States {
		for _, to := range jsonl.States {
			contract := jsonl.Transition(from, to) == nil
			err := transition(from, to)
			switch {
			case err == nil && !contract:
				t.Errorf("lcwrap takes %s → %s, which the contract's table refuses", from, to)
			case err != nil && contract && !notTaken[[2]jsonl.State{from, to}]:
				t.Errorf("lcwrap refuses %s → %s, a contract edge not listed as left out", from, to)
			case err == nil && notTaken[[2]jsonl.State{from, to}]:
				t.Errorf("%s → %s is listed as left out but lcwrap takes it", from, to)
			}
			var te *jsonl.TransitionError
			if err != nil && (!errors.As(err, &te) || te.From != from || te.To != to) {
				t.Errorf("%s → %s: %v, want a jsonl.TransitionError naming both", from, to, err)
			}
		}
	}
	if err := transition("", jsonl.StateRunning); err == nil || err.Error() != "illegal transition (none) → running" {
		t.Errorf("no event yet → running: %v", err)
	}
}
