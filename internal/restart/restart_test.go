package restart

import (
	"math"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	r := Restart{Backoff: 100 * time.Millisecond}
	for n, want := range map[int]time.Duration{1: 100, 2: 200, 3: 400, 5: 1600, 6: 3000, 40: 3000} {
		want *= time.Millisecond
		for i := 0; i < 50; i++ {
			if d := r.Delay(n); d < want/2 || d > want {
				t.Fatalf("backoff(%d) = %s, want %s to %s", n, d, want/2, want)
			}
		}
	}
	if d := (Restart{}).Delay(3); d != 0 {
		t.Fatalf("no backoff: %s", d)
	}
	huge := Restart{Backoff: math.MaxInt64 / 3}
	for n := 1; n < 70; n++ {
		if d := huge.Delay(n); d < huge.Backoff/2 {
			t.Fatalf("backoff(%d) of %s = %s", n, huge.Backoff, d)
		}
	}
}

func TestNext(t *testing.T) {
	for _, tc := range []struct {
		name   string
		r      Restart
		e      Ending
		n      int
		again  bool
		reason string
	}{
		{"no policy", Restart{Policy: No}, Ending{}, 1, false, ""},
		{"on-failure after completed", Restart{Policy: OnFailure}, Ending{Completed: true}, 1, false, ""},
		{"on-failure after failed", Restart{Policy: OnFailure}, Ending{}, 1, true, ""},
		{"always after completed", Restart{Policy: Always}, Ending{Completed: true}, 1, true, ""},
		{"cancel wins over the policy", Restart{Policy: Always}, Ending{CancelSignal: "SIGTERM"}, 1, false, "cancel-request"},
		{"start error", Restart{Policy: Always}, Ending{StartFailed: true}, 1, false, "start-error"},
		{"ctrl-c", Restart{Policy: OnFailure}, Ending{Interrupted: true}, 1, false, "interrupted"},
		{"last attempt", Restart{Policy: Always, MaxAttempts: 3}, Ending{}, 3, false, "max-attempts"},
		{"before the last", Restart{Policy: Always, MaxAttempts: 3}, Ending{}, 2, true, ""},
	} {
		again, stop := tc.r.Next(tc.e, tc.n)
		if again != tc.again || stop.Reason != tc.reason {
			t.Errorf("%s: again %v stop %q, want %v %q", tc.name, again, stop.Reason, tc.again, tc.reason)
		}
		if stop.Reason != "" && stop.Why == "" {
			t.Errorf("%s: a stop without a reason for people", tc.name)
		}
	}
}

func TestNextChild(t *testing.T) {
	if id, a := NextChild("build", 0, 1); id != "build-a1" || a != 1 {
		t.Fatalf("got %s %d", id, a)
	}
	if id, a := NextChild("build", 2, 3); id != "build-a5" || a != 5 {
		t.Fatalf("got %s %d", id, a)
	}
}
