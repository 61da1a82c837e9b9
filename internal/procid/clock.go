package procid

// Clock names the unit of a start time. The two backends read different
// clocks: /proc gives clock ticks since boot, gopsutil unix milliseconds.
// An identity carries its clock, so that one build never takes another
// build's start time for a different process.
type Clock string

// The clocks of the two backends. ClockTicks is the empty string: an
// identity without a startClock member is in clock ticks, as every
// identity was before the member existed (but see Identity.clock for
// start times too large to be ticks).
const (
	ClockTicks  Clock = ""        // clock ticks (USER_HZ) since boot, from /proc/<pid>/stat
	ClockUnixMs Clock = "unix-ms" // unix milliseconds, from gopsutil
)

// unixMsFloor is a start time no tick count reaches (a thousand years of
// uptime at 100 Hz is 3.2e12): 1e11 ms is 1973, before any recorded
// process.
const unixMsFloor = 100_000_000_000

// clock returns the identity's clock. Identities written by the gopsutil
// build before startClock existed carry unix milliseconds and no member:
// a start time from 1973 on is read as unix milliseconds.
func (id Identity) clock() Clock {
	if id.Clock == ClockTicks && id.StartTime >= unixMsFloor {
		return ClockUnixMs
	}
	return id.Clock
}

// String names the clock as the startClock member does ("ticks" for the
// default).
func (c Clock) String() string {
	if c == ClockTicks {
		return "ticks"
	}
	return string(c)
}
