//go:build linux

package journal

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

// watchOnly is Watch with every poll an hour away: a line these options
// follow was announced by the watch.
var watchOnly = ReadOptions{Watch: true, WatchPoll: time.Hour, MaxPoll: time.Hour}

// Under Watch a follower that waits (its safety poll an hour away) sees an
// append, a rotation and a replacement at once: each change is made only
// once it is waiting.
func TestFollowWatchWakesOnChange(t *testing.T) {
	path := tempJournal(t)
	opts := Options{LockTimeout: 5 * time.Second, MaxBytes: 2 << 10}
	appendN(t, path, 1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waiting := make(chan int64, 1000)
	notices := make(chan Notice, 100)
	recs := make(chan int64, 1000)
	o := watchOnly
	o.watching = func(seen int64) { waiting <- seen }
	o.OnNotice = func(n Notice) { notices <- n }
	done := make(chan error, 1)
	go func() {
		done <- FollowWith(ctx, path, o, func(rec event.Record, raw []byte) error {
			recs <- rec.JournalSequence
			return nil
		})
	}()
	deadline := time.After(20 * time.Second)
	// expect returns the next line followed, at want or past it (a
	// rotation's control record takes a position).
	expect := func(want int64) int64 {
		t.Helper()
		select {
		case got := <-recs:
			if got < want {
				t.Fatalf("followed %d, want %d", got, want)
			}
			return got
		case <-deadline:
			t.Fatalf("line %d not followed", want)
		}
		return 0
	}
	// waitIdle returns once the follower waits on its watch, past line n.
	waitIdle := func(n int64) {
		t.Helper()
		for {
			select {
			case seen := <-waiting:
				if seen >= n {
					return
				}
			case <-deadline:
				t.Fatalf("the follower never waited past line %d", n)
			}
		}
	}
	expect(1)
	waitIdle(1)
	j := openT(t, path, opts)
	if _, err := j.Append([][]byte{testEvent("w", 2)}, false); err != nil {
		t.Fatal(err)
	}
	expect(2)
	// Appends until the live file is sealed and a new one started.
	n := int64(2)
	for {
		waitIdle(n)
		if _, err := j.Append([][]byte{testEvent("w", n+1)}, false); err != nil {
			t.Fatal(err)
		}
		n = expect(n + 1)
		if s, _ := Sealed(path); len(s) > 0 {
			break
		}
	}
	waitIdle(n)
	// A file that does not continue the journal takes its place.
	other := path + ".new"
	if err := os.WriteFile(other, journalLine("x", 1, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	kinds := map[NoticeKind]int{}
	for kinds[NoticeReplaced] == 0 {
		select {
		case nt := <-notices:
			kinds[nt.Kind]++
		case <-deadline:
			t.Fatalf("the replacement was not noticed (notices %v)", kinds)
		}
	}
	if kinds[NoticeRotated] == 0 {
		t.Fatalf("the rotation was not noticed (notices %v)", kinds)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// A done context ends a follower waiting on its watch at once.
func TestFollowWatchEndsWithContext(t *testing.T) {
	path := tempJournal(t)
	appendN(t, path, 1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	waiting := make(chan int64, 100)
	o := watchOnly
	o.watching = func(seen int64) { waiting <- seen }
	done := make(chan error, 1)
	go func() { done <- FollowWith(ctx, path, o, func(event.Record, []byte) error { return nil }) }()
	select {
	case <-waiting:
	case <-time.After(20 * time.Second):
		t.Fatal("the follower never waited")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the follower did not end")
	}
}
