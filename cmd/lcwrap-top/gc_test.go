package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/testtool"
)

// quietGC turns the percentage off (no collection every two minutes) and
// keeps the memory limit twice the live heap as it grows.
func TestQuietGCFollowsTheHeap(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT set: quietGC leaves them alone")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	runtime.GC()
	quietGC()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("GC percent %d, want off", p)
	}
	before := debug.SetMemoryLimit(-1)
	if before == math.MaxInt64 {
		t.Fatal("no memory limit set")
	}
	live := make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	if !testtool.Poll(20*time.Second, func() bool {
		if debug.SetMemoryLimit(-1) >= 2*(64<<20) {
			return true
		}
		runtime.GC() // the finalizer runs after it, on its own goroutine
		return false
	}) {
		t.Fatalf("the limit stayed at %d MB with 64 MB more live (it was %d MB)", debug.SetMemoryLimit(-1)>>20, before>>20)
	}
	runtime.KeepAlive(live)
}
