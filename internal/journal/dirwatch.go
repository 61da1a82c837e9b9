package journal

import (
	"context"
	"time"
)

// DirWatch is the watch FollowWith uses (ReadOptions.Watch), for a reader
// of other files: it says when files of one directory may have changed
// (written, created, renamed, removed), so that a quiet reader need not
// look. Where the system has no such watch (or the directory cannot be
// watched) WatchDir returns nil and the reader polls.
type DirWatch struct{ w *dirWatch }

// WatchDir watches dir for changes to the files whose names concerns
// accepts, until ctx is done or Close; nil when no watch can be set up.
func WatchDir(ctx context.Context, dir string, concerns func(name string) bool) *DirWatch {
	w := watchDirWith(ctx, dir, "", concerns)
	if w == nil {
		return nil
	}
	return &DirWatch{w}
}

// Drain drops the changes said so far: call it just before a look, which
// sees what they announced.
func (d *DirWatch) Drain() { d.w.drain() }

// Wait returns once a file may have changed since the last Drain or
// Wait, or after at most max, or when ctx is done, and says whether the
// watch saw a change (or lost track: look then).
func (d *DirWatch) Wait(ctx context.Context, max time.Duration) bool {
	d.w.said = false
	d.w.wait(ctx, max)
	return d.w.said || d.w.broken
}

// Broken says the watch stopped working (its directory went away): close
// it, and watch again or poll.
func (d *DirWatch) Broken() bool { return d.w.broken }

// Close ends the watch.
func (d *DirWatch) Close() { d.w.close() }
