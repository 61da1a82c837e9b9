package emit

// WithSource returns an Emitter for another source (with a sourceEpoch of
// its own, new) that writes to the same sinks, e.g. an agent's sessions
// beside the process that runs it. Each line still goes out whole and in
// the order it was written; a sink that fails is dropped by each emitter
// on its own. Closing the returned Emitter closes nothing: the sinks
// belong to e.
func (e *Emitter) WithSource(source string) *Emitter {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := &Emitter{source: source, epoch: NewEpoch(), onError: e.onError, now: e.now, borrowed: true}
	if s.source == "" {
		s.source = DefaultSource
	}
	for _, st := range e.sinks {
		s.sinks = append(s.sinks, &sinkState{Sink: st.Sink, disabled: st.disabled})
	}
	return s
}
