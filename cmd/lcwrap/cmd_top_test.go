package main

import (
	"testing"

	"github.com/lcwrap/lcwrap/internal/view/tui"
)

// lcwrap top passes its --interval to lcwrap-top: the default and the
// least value agree.
func TestTopIntervalIsTops(t *testing.T) {
	if topInterval != tui.DefaultInterval || minTopInterval != tui.MinInterval {
		t.Fatalf("lcwrap top --interval: default %v, least %v; lcwrap-top: %v, %v", topInterval, minTopInterval, tui.DefaultInterval, tui.MinInterval)
	}
}
