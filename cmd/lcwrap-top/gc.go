package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// quietGC makes the collector run only when memory asks for it. The Go
// runtime otherwise collects at least every two minutes, and top holds the
// projection of every child it has seen (tens of MB for ten thousand):
// marking it costs more CPU than everything else an idle top does. Instead
// of GOGC's goal the collector gets a memory limit of twice the live heap
// (what GOGC=100 allows), set again after each collection, so that it
// follows the heap as the journal grows; without the percentage there is
// no forced collection. GOGC or GOMEMLIMIT in the environment are the
// user's choice and are left alone.
func quietGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	setGCLimit()
	debug.SetGCPercent(-1)
	armGC()
}

// gcLimitFloor is the least headroom above the live heap.
const gcLimitFloor = 16 << 20

var gcSample = []metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/heap/unused:bytes"},
	{Name: "/memory/classes/heap/free:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
}

// setGCLimit sets the memory limit to what the runtime holds besides the
// heap (stacks, metadata) plus twice the live heap (at least
// gcLimitFloor above it).
func setGCLimit() {
	metrics.Read(gcSample)
	var v [6]uint64
	for i, s := range gcSample {
		if s.Value.Kind() != metrics.KindUint64 {
			return
		}
		v[i] = s.Value.Uint64()
	}
	live, total := v[0], v[1]
	heap := v[2] + v[3] + v[4] + v[5]
	if heap > total {
		return
	}
	debug.SetMemoryLimit(int64(total - heap + live + max(live, gcLimitFloor)))
}

// gcSentinel is found unreachable by each collection: its finalizer sets
// the limit again and arms the next.
type gcSentinel struct{ _ *int }

func armGC() {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		setGCLimit()
		armGC()
	})
}
