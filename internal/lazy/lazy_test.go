package lazy

import (
	"sync"
	"sync/atomic"
	"testing"
)

var calls atomic.Int32

var counted = Value[int]{Make: func() int { return int(calls.Add(1)) * 10 }}

func TestGetMakesOnce(t *testing.T) {
	var wg sync.WaitGroup
	got := make([]int, 16)
	for i := range got {
		wg.Go(func() { got[i] = counted.Get() })
	}
	wg.Wait()
	for i, v := range got {
		if v != 10 {
			t.Fatalf("Get %d = %d, want 10 (the first Make's value)", i, v)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("Make ran %d times, want once", n)
	}
}
