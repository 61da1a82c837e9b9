//go:build linux

package event

import (
	"bytes"
	"os"
	"strconv"
)

// convertStart expresses start time t, read in clock from, in clock to,
// through the boot time in /proc/stat (both backends read the same
// kernel: /proc directly, or gopsutil, which computes unix milliseconds
// from the same clock ticks and boot time). It reports false when the
// boot time cannot be read.
func convertStart(t uint64, from, to Clock) (uint64, bool) {
	btime, ok := bootTimeUnix()
	if !ok {
		return 0, false
	}
	base := btime * 1000
	switch {
	case from == ClockTicks && to == ClockUnixMs:
		return base + t*(1000/userHZ), true
	case from == ClockUnixMs && to == ClockTicks:
		if t < base {
			return 0, true
		}
		return (t - base) / (1000 / userHZ), true
	}
	return 0, false
}

// bootTimeUnix reads the boot time (unix seconds) from /proc/stat.
func bootTimeUnix() (uint64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
