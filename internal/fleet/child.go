package fleet

// Child returns one child as Report shows it now — judged on its host's
// clock, stale with SilentReason when its host is silent — and whether
// the host has shown it. A reader that follows the fleet (lcwrap wait,
// lcwrap watch) asks for the children an item touched instead of building
// a whole Report each time.
func (f *Fleet) Child(host, childID string) (Child, bool) {
	h := f.hosts[host]
	if h == nil {
		return Child{}, false
	}
	hv, hostNow := h.view(f.opts.Now(), f.opts.SilentAfter)
	v, ok := h.p.View(childID, hostNow)
	if !ok {
		return Child{}, false
	}
	if hv.Silent && !v.Ended() {
		v.Stale, v.StaleReason = true, SilentReason(hv.SilentSince)
	}
	return Child{Host: host, ChildView: v, hostNow: hostNow}, true
}
