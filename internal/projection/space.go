package projection

import "slices"

// window is how many recent sequences of each space keep a hash of their
// record, so that a repeat can be told apart as a duplicate or a conflict.
// An older repeat is a duplicate by identity alone.
const window = 32

// maxSpans bounds the gaps remembered per space. Past it the oldest gap
// is forgotten and the space stays provisional for good: a late event in a
// forgotten gap can no longer be told from a duplicate.
const maxSpans = 64

// span is a run of missing sequences, lo..hi inclusive.
type span struct{ lo, hi int64 }

// space is one sequence space, (source, sourceEpoch) of one child: what
// was seen of it, what is missing, and how recent its evidence is.
type space struct {
	source, epoch string
	lastAt        int64 // latest observedAt of its events, unix ms
	sequenced     bool  // it has carried a sequence
	low, high     int64 // lowest and highest sequence seen
	missing       []span
	overflow      bool  // gaps were forgotten (maxSpans)
	hasState      bool  // it has set the child's state
	stateSeq      int64 // sequence of the last state it set
	ring          [window]uint64
}

// admission is how a sequenced event relates to what its space has seen.
type admission int

const (
	admitNext     admission = iota // the first, or the one after the highest
	admitGap                       // beyond the next: sequences are missing before it
	admitOld                       // older than the highest, never seen: fills a gap
	admitDup                       // seen before with the same record (or too old to compare)
	admitConflict                  // seen before with a different record
)

func (s *space) admit(seq int64, h uint64) admission {
	if !s.sequenced {
		s.sequenced = true
		s.low, s.high = seq, seq
		s.remember(seq, h)
		return admitNext
	}
	switch {
	case seq == s.high+1:
		s.high = seq
		s.remember(seq, h)
		return admitNext
	case seq > s.high:
		s.addMissing(span{s.high + 1, seq - 1}, false)
		s.high = seq
		s.remember(seq, h)
		return admitGap
	case seq < s.low:
		if seq+1 <= s.low-1 {
			s.addMissing(span{seq + 1, s.low - 1}, true)
		}
		s.low = seq
		s.remember(seq, h)
		return admitOld
	case s.takeMissing(seq):
		s.remember(seq, h)
		return admitOld
	}
	if s.inWindow(seq) && s.ring[seq%window] != h {
		return admitConflict
	}
	return admitDup
}

func (s *space) inWindow(seq int64) bool { return seq > s.high-window }

// remember keeps the record hash of a sequence inside the window. A slot
// is written only by the newest sequence it can stand for.
func (s *space) remember(seq int64, h uint64) {
	if s.inWindow(seq) {
		s.ring[seq%window] = h
	}
}

func (s *space) addMissing(sp span, front bool) {
	if front {
		s.missing = slices.Insert(s.missing, 0, sp)
	} else {
		s.missing = append(s.missing, sp)
	}
	s.bound()
}

// bound forgets the oldest gaps beyond maxSpans.
func (s *space) bound() {
	if n := len(s.missing) - maxSpans; n > 0 {
		s.missing = slices.Delete(s.missing, 0, n)
		s.overflow = true
	}
}

// takeMissing removes seq from the missing spans and reports whether it
// was missing.
func (s *space) takeMissing(seq int64) bool {
	for i, m := range s.missing {
		if seq < m.lo || seq > m.hi {
			continue
		}
		switch {
		case m.lo == m.hi:
			s.missing = slices.Delete(s.missing, i, i+1)
		case seq == m.lo:
			s.missing[i].lo++
		case seq == m.hi:
			s.missing[i].hi--
		default:
			s.missing = slices.Insert(s.missing, i+1, span{seq + 1, m.hi})
			s.missing[i].hi = seq - 1
			s.bound()
		}
		return true
	}
	return false
}

// gapFree reports whether no sequence between the last state this space
// set and seq is missing, so that a state at seq follows that state
// directly.
func (s *space) gapFree(seq int64) bool {
	if !s.hasState || s.overflow {
		return false
	}
	for _, m := range s.missing {
		if m.hi > s.stateSeq && m.lo < seq {
			return false
		}
	}
	return true
}

// provisional reports whether sequences of this space are missing.
func (s *space) provisional() bool { return len(s.missing) > 0 || s.overflow }
