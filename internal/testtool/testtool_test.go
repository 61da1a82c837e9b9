package testtool

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

type recorder struct{ fatal, skip string }

func (r *recorder) Helper()                      {}
func (r *recorder) Fatalf(f string, args ...any) { r.fatal = fmt.Sprintf(f, args...) }
func (r *recorder) Skipf(f string, args ...any)  { r.skip = fmt.Sprintf(f, args...) }

func TestNeed(t *testing.T) {
	if p := Need(t, "sh", "it is POSIX"); p == "" {
		t.Fatal("sh not found")
	}
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		var r recorder
		Need(&r, "no-such-tool-lcwrap", "apt-get install no-such-tool")
		msg := r.skip
		if ci == "true" {
			msg = r.fatal
			if r.skip != "" {
				t.Errorf("CI=true: skipped: %q", r.skip)
			}
		} else if r.fatal != "" {
			t.Errorf("locally: failed: %q", r.fatal)
		}
		if !strings.Contains(msg, "no-such-tool-lcwrap is not installed (apt-get install no-such-tool)") {
			t.Errorf("CI=%q: message %q", ci, msg)
		}
	}
}

func TestEventually(t *testing.T) {
	n := 0
	Eventually(t, "the third look", func() bool { n++; return n >= 3 })
	if n != 3 {
		t.Errorf("looked %d times, want 3", n)
	}
	var f recorder
	EventuallyWithin(&f, 10*time.Millisecond, "nothing", func() bool { return false })
	if f.fatal != "timed out waiting for nothing" {
		t.Errorf("a condition that never holds: %q", f.fatal)
	}
	if Poll(0, func() bool { return false }) || !Poll(0, func() bool { return true }) {
		t.Error("Poll with no time left must still look once")
	}
}
