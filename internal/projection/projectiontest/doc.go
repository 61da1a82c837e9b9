// Package projectiontest builds the events and journals the tests of the
// projection, reconcile and cancel look at: one child's events in a
// sequence space of its own, a launched child up to running with its
// wrapper's identity, an adopted process, a journal written through the
// journal's own lock. It is test support, not part of lcwrap.
package projectiontest
