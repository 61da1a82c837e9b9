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
