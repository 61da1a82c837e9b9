package live

import (
	"context"
	"time"

	"github.com/lcwrap/lcwrap/internal/fleet"
	"github.com/lcwrap/lcwrap/internal/journal"
)

// The pace at which a fleet's gateway output is looked at. Where its
// directory can be watched (inotify: fleet.Reader.Watch), it is looked
// at when the directory says a file changed — no two looks closer than
// fleetMinPoll, so that a gateway writing steadily costs one look per
// fleetMinPoll — and every fleetWatchPoll in case a change went unsaid.
// Elsewhere it is polled: every fleetMinPoll while records arrive, then
// twice as long after each look that found nothing, up to fleetMaxPoll.
// Either way, while a host could fall silent with nothing arriving, the
// hosts are judged again at least every fleetMaxPoll (on the fleet's
// clock, which need not be the wall clock), without a look.
const (
	fleetMinPoll   = 100 * time.Millisecond
	fleetMaxPoll   = time.Second
	fleetWatchPoll = 30 * time.Second
)

// FleetState is what a fleet follower knows besides the model.
type FleetState struct {
	// Hosts is every host heard from, by name (fleet.Fleet.HostViews),
	// as of the follower's last look: shared with the follower, which
	// replaces it rather than change it; read it, do not modify it.
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
	// wall says the fleet judges silence on the wall clock (Options.Now
	// nil): the instant a host falls silent is then known in advance.
	wall bool
}

// NewFleet returns a live model of a fleet: the gateway Collector's
// output that r reads (internal/fleet), every host's children in one
// tree keyed by (host, childId), each judged on its host's clock and
// stale while its host is silent. Nothing is read until Run; r is the
// follower's from then on.
func NewFleet(path string, r *fleet.Reader, opts fleet.Options) *Follower {
	l := New(nil)
	r.ReuseEvent = true // the model keeps what it needs of each event
	l.fl = &fleetSource{path: path, r: r, f: fleet.New(opts), silent: map[string]bool{}, wall: opts.Now == nil}
	l.m = l.fl.f.NewModel()
	return l
}

// runFleet reads the gateway's output until ctx is done: one pass over
// every file now, then a pass each time the output changes (see
// fleetMinPoll). After each pass the hosts are judged again, and a host
// that fell silent or was heard again has its children judged again.
func (l *Follower) runFleet(ctx context.Context) error {
	fs := l.fl
	var w *journal.DirWatch
	defer func() {
		if w != nil {
			w.Close()
		}
	}()
	wait := fleetMinPoll
	look := true
	var looked time.Time
	for {
		if w == nil {
			w = fs.r.Watch(ctx) // before the pass: no change is missed
		}
		n := 0
		var err error
		if look {
			if w != nil {
				w.Drain()
			}
			looked = time.Now()
			err = fs.r.Pass(func(it *fleet.Item) error {
				l.mu.Lock()
				fs.f.ApplyTo(l.m, it)
				l.mu.Unlock()
				n++
				return nil
			})
		}
		l.mu.Lock()
		if look {
			l.err = err
			fs.f.SetPending(fs.r.Pending())
			fs.pending = len(fs.r.Pending())
		}
		flipped := false
		now, after := fs.f.Now(), fs.f.SilentAfter()
		if n == 0 {
			// Nothing new: only the clock can have made a host silent.
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
		// The first host heard from that can still fall silent with
		// nothing arriving is judged again then: at that instant on the
		// wall clock, within fleetMaxPoll on a clock of the caller's.
		limit := fleetWatchPoll
		for _, h := range fs.hosts {
			if !h.LastHeard.IsZero() && !h.Silent {
				d := fleetMaxPoll
				if fs.wall {
					d = max(h.LastHeard.Add(after).Sub(now), 0) + time.Millisecond
				}
				limit = min(limit, d)
			}
		}
		l.mu.Unlock()
		l.catchUp()
		changed := n > 0 || flipped || err != nil
		if changed {
			l.signal()
		}
		if w != nil && err == nil { // after an error, look again soon (below)
			look = w.Wait(ctx, limit) || time.Since(looked) >= fleetWatchPoll
			if w.Broken() {
				w.Close()
				w, look = nil, true
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if d := fleetMinPoll - time.Since(looked); look && d > 0 {
				// A gateway writing steadily: gather its writes.
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(d):
				}
			}
			continue
		}
		if changed {
			wait = fleetMinPoll
		} else {
			wait = min(2*wait, fleetMaxPoll, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		look = true
	}
}
