package event

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

// Tolerances for a start time converted from the other clock: the boot
// time both conversions rest on is kept in whole seconds, and gopsutil
// may derive it from the uptime instead (in containers), so two readings
// of one process may differ by a second or two. Within the tolerance the
// start times are taken to match; beyond it the process cannot be told
// apart, and Check answers ProcUnknown rather than Gone.
const (
	crossClockMs    = 2000
	crossClockTicks = crossClockMs / (1000 / userHZ)
)

// userHZ is the unit of start times in /proc/<pid>/stat: USER_HZ, 100 on
// every Linux architecture (and gopsutil's default).
const userHZ = 100

// sameStart compares a recorded identity's start time with the table's.
// Outcomes: (true, true) the same; (false, true) provably different;
// (_, false) the clocks differ and cannot be compared here.
func sameStart(id Identity, info ProcInfo) (same, comparable bool) {
	from := id.clock()
	if from == info.Clock {
		return id.StartTime == info.StartTime, true
	}
	t, ok := convertStart(id.StartTime, from, info.Clock)
	if !ok {
		return false, false
	}
	tol := uint64(crossClockTicks)
	if info.Clock == ClockUnixMs {
		tol = crossClockMs
	}
	d := max(t, info.StartTime) - min(t, info.StartTime)
	return d <= tol, d <= tol
}
