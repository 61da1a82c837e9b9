//go:build linux

package supervise

import (
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/testtool"

	"github.com/lcwrap/lcwrap/internal/lastline"
)

// newTestStream returns a stream whose timers only fire when the test
// calls onHold or onWait itself.
func TestStreamFollowsAPtyToItsEIO(t *testing.T) {
	p, err := OpenPTY(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	out := &testtool.Buffer{}
	s, err := NewStream("test", out)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := newOutputActivity()
	s.Watch(&lastline.Tap{From: "pty", Offer: a.offer})
	s.Follow(p.Master())
	stdio, err := p.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	defer p.StopInputCopy()
	slave := stdio[0]
	// The terminal's own ONLCR turns "\n" into "\r\n".
	if _, err := slave.WriteString("first\nsecond line\nunfinished"); err != nil {
		t.Fatal(err)
	}
	slave.Close() // the last copy of the slave: the master reads EIO
	select {
	case <-s.Done():
	case <-time.After(waitLimit):
		t.Fatal("the copy did not end at the master's EIO")
	}
	if got, want := out.String(), "first\r\nsecond line\r\nunfinished"; got != want {
		t.Fatalf("copied %q, want %q", got, want)
	}
	if a.text != "unfinished" || a.from != "pty" {
		t.Fatalf("latest line %q from %q", a.text, a.from)
	}
}
