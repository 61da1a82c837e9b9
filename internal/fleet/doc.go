// Package fleet reads many hosts' journals back from a gateway
// OpenTelemetry Collector's output: the OTLP-JSON lines its file exporter
// writes (one export request per line), in a file, a directory of rotated
// files, or a glob. Each log record's body is a journal line; its host is
// the resource's host.name (host.id is kept as a fact, and a host.name
// seen with another host.id is counted).
//
// Reader turns the files into items in the order they were written:
// rotated files by rotation time, then the live file, followed by inode
// across a rotation. A partly written last line of a live file is waited
// for (Pending), never read as damage; a line cut off in the middle (a
// gateway killed while writing) is damage with its file and offset, and
// the request appended after it is still read. Every record has a Cursor
// (file, line offset, index in the line, fingerprint of the file's first
// bytes) that survives the rotation renaming its file. Lines are decoded
// by a decoder specialised to the exporter's OTLP-JSON, which answers
// only where encoding/json would answer the same and leaves the rest
// (anything unusual, invalid or differently typed) to encoding/json; it
// reads each string once, unescaping a body into a buffer reused from
// line to line, so an Item (and its Body) is valid until its callback
// returns. Watch gives a follower the directory's inotify watch.
//
// Fleet keeps one projection per host, so a child is (host, childId) and
// the cost grows with the records read, not with hosts × records.
// Delivery is at least once: a record delivered again is a Duplicate of
// its host's projection (by the per-(source, epoch, child) sequence, not
// a set of every eventId) and is counted, shown once. Per host it keeps
// when it was last heard (the gateway's receive stamp), its clock skew
// (the least receive − observed over a window, observed being the host's
// own read time) and its shipping delay (the rest). A host silent past
// the threshold makes its open children stale with the reason "host
// silent since T"; a host's children are otherwise judged on the host's
// clock, so a host clock minutes off makes them neither stale nor fresh.
//
// NewModel and ApplyTo feed a live model (internal/view) beside the host
// projections, for top --fleet and report --fleet: a child is (host,
// childId) there too, judged on its host's clock, stale while its host is
// silent (HostClock).
//
// What it refuses to claim: everything rests on what was shipped. A
// silent host is not a dead one and its children are never lost or ended
// by silence; nothing is checked against a process table (no authority
// over another host's processes); a host without the gateway's receive
// stamp has no last-heard time, so its silence is not judged at all.
package fleet
