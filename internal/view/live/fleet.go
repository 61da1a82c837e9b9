package live

import (
	"context"
	"time"

	"github.com/lcwrap/lcwrap/internal/fleet"
)

// The pace at which a fleet's gateway output is looked at: every
// fleetMinPoll while records arrive, then twice as long after each pass
// that found nothing, up to fleetMaxPoll (the gateway's files are read by
// polling: a directory of rotated files has no journal lock or watch of
// lcwrap's own).
const (
	fleetMinPoll = 100 * time.Millisecond
	fleetMaxPoll = time.Second
)

// FleetState is what a fleet follower knows besides the model.
type FleetState struct {
	// Hosts is every host heard from, by name (fleet.Fleet.HostViews).
	Hosts  []fleet.HostView
	Totals fleet.Totals
	// Pending counts the partly written lines waited for.
	Pending int
}

type fleetSource struct {
	path    string
	r       *fleet.Reader
	f       *fleet.Fleet
	hosts   []fleet.HostView
	pending int
	silent  map[string]bool
}

// NewFleet returns a live model of a fleet: the gateway Collector's
// output that r reads (internal/fleet), every host's children in one
// tree keyed by (host, childId), each judged on its host's clock and
// stale while its host is silent. Nothing is read until Run; r is the
// follower's from then on.
func NewFleet(path string, r *fleet.Reader, opts fleet.Options) *Follower {
	l := New(nil)
	l.fl = &fleetSource{path: path, r: r, f: fleet.New(opts), silent: map[string]bool{}}
	l.m = l.fl.f.NewModel()
	return l
}

// runFleet reads the gateway's output until ctx is done: one pass over
// every file now, then a pass after each pause (see fleetMinPoll). After
// each pass the hosts are judged again, and a host that fell silent or
// was heard again has its children judged again.
func (l *Follower) runFleet(ctx context.Context) error {
	fs := l.fl
	wait := fleetMinPoll
	for {
		n := 0
		err := fs.r.Pass(func(it *fleet.Item) error {
			l.mu.Lock()
			fs.f.ApplyTo(l.m, it)
			l.mu.Unlock()
			n++
			return nil
		})
		l.mu.Lock()
		l.err = err
		fs.f.SetPending(fs.r.Pending())
		fs.pending = len(fs.r.Pending())
		flipped := false
		if n == 0 {
			// Nothing new: only the clock can have made a host silent.
			now, after := fs.f.Now(), fs.f.SilentAfter()
			for _, h := range fs.hosts {
				if !h.LastHeard.IsZero() && now.Sub(h.LastHeard) > after != fs.silent[h.Host] {
					flipped = true
					break
				}
			}
		}
		if n > 0 || flipped || fs.hosts == nil {
			fs.hosts = fs.f.HostViews()
			flipped = false
			for _, h := range fs.hosts {
				if fs.silent[h.Host] != h.Silent {
					fs.silent[h.Host] = h.Silent
					l.m.TouchHost(h.Host)
					flipped = true
				}
			}
		}
		l.mu.Unlock()
		l.catchUp()
		if n > 0 || flipped || err != nil {
			l.signal()
			wait = fleetMinPoll
		} else {
			wait = min(2*wait, fleetMaxPoll)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}
