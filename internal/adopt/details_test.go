package adopt

import (
	"testing"

	"github.com/lcwrap/lcwrap/internal/event/eventtest"
)

// The details shapes adopt writes, held byte for byte to the maps their
// writer used to build (from the core's differential test, where these
// shapes lived), redaction included.
func TestDetailsMatchOldEncoding(t *testing.T) {
	for _, s := range []string{"make", "x\"y\\z\u2028\x01<>&", "", "api_key=sk-1234567890abcdef", "Bearer abcdefghijklmnop"} {
		eventtest.MatchOld(t, LimitsDiagnostic{Limits: s}, map[string]any{"limits": s})
		d := ObservationEnded{Observation: "ended", ProcessState: "unknown", Reason: s}
		eventtest.MatchOld(t, d, map[string]any{"observation": d.Observation, "processState": d.ProcessState, "reason": d.Reason})
	}
}
