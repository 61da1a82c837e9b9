package serve

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// hubSize is how many recent messages the hub keeps: a stream whose
// cursor is among them reads them from memory; one further back, or one
// that falls that far behind, reads the journal itself until it is back
// among them.
const hubSize = 8192

// entry is one message the hub read: pos is the journalSequence of an
// event line, or, for a message that is not an event, the position the
// hub had reached (it goes to streams at or before it).
type entry struct {
	pos   int64
	event bool
	reset bool // a replaced journal: positions start again
	m     msg
}

// hub follows the journal once for every stream: each line is read,
// checked and encoded as an SSE message once, then written to each stream
// from memory.
type hub struct {
	mu      sync.Mutex
	ring    []entry // ring[n % hubSize] holds entry n, for first <= n < next
	first   int64
	next    int64
	dropped int64         // the position of the last event entry dropped (0: none)
	changed chan struct{} // closed and replaced when entries are added
	err     error         // why the hub stopped (nil while it runs)
}

func newHub() *hub {
	return &hub{ring: make([]entry, hubSize), changed: make(chan struct{})}
}

func (h *hub) add(e entry) {
	h.mu.Lock()
	if h.next-h.first == hubSize {
		old := h.ring[h.first%hubSize]
		if old.event {
			h.dropped = old.pos
		}
		if old.reset {
			h.dropped = 0
		}
		h.ring[h.first%hubSize] = entry{}
		h.first++
	}
	h.ring[h.next%hubSize] = e
	h.next++
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
}

// run follows the journal from its start until ctx is done.
func (h *hub) run(ctx context.Context, path string) {
	var pos int64
	for {
		o := journal.ReadOptions{After: pos, Watch: true, MaxPoll: time.Second,
			OnBlocked: func(be *journal.BlockedError) { h.add(entry{pos: pos, m: blockedMsg(be)}) },
			OnNotice: func(n journal.Notice) {
				e := entry{pos: pos, m: noticeMsg(n)}
				if n.Kind == journal.NoticeReplaced {
					e.reset, pos = true, 0
				}
				h.add(e)
			},
		}
		err := journal.FollowWith(ctx, path, o, func(rec event.Record, raw []byte) error {
			pos = rec.JournalSequence
			h.add(entry{pos: pos, event: true, m: lineMsg(rec.JournalSequence, raw)})
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		h.mu.Lock()
		h.err = err
		h.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func lineMsg(seq int64, raw []byte) msg {
	id := strconv.FormatInt(seq, 10)
	return msg{b: sse("", id, []byte(termtext.Line(string(raw)))), cursor: id}
}

func blockedMsg(be *journal.BlockedError) msg {
	b, _ := json.Marshal(Blocked{Line: be.Line, Offset: be.Offset, Class: string(be.Class), Reason: termtext.Line(be.Reason), Torn: be.Torn()})
	return msg{b: sse("blocked", "", b)}
}

func noticeMsg(n journal.Notice) msg {
	b, _ := json.Marshal(Notice{Kind: string(n.Kind), Path: n.Path, Sequence: n.Sequence, Quarantined: n.Quarantined})
	return msg{b: sse("notice", "", b)}
}

// errBehind says a stream's cursor is not among the hub's messages.
var errBehind = errors.New("behind the hub")

// from returns the index of the first entry a stream after cursor gets,
// or errBehind when entries it needs were dropped.
func (h *hub) from(cursor int64) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cursor < h.dropped {
		return 0, errBehind
	}
	n := h.first
	for n < h.next {
		e := &h.ring[n%hubSize]
		if e.event && e.pos > cursor || !e.event && e.pos >= cursor {
			break
		}
		n++
	}
	return n, nil
}

// usable reports whether the hub holds every message after cursor (or
// will: it has not dropped any of them).
func (h *hub) usable(cursor int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return cursor >= h.dropped
}

// since returns the entries from index n on (copied), the channel closed
// when more come, and errBehind when entry n was dropped.
func (h *hub) since(n int64, buf []entry) ([]entry, <-chan struct{}, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n < h.first {
		return buf, nil, errBehind
	}
	for ; n < h.next; n++ {
		buf = append(buf, h.ring[n%hubSize])
	}
	return buf, h.changed, nil
}

// journalStream feeds out from the hub after cursor: from memory while
// the cursor is among the hub's messages, else by reading the journal
// itself until it is.
func (s *Server) journalStream(ctx context.Context, after int64, out chan<- msg) error {
	cursor := after
	for {
		n, err := s.hub.from(cursor)
		if errors.Is(err, errBehind) {
			if cursor, err = s.catchUp(ctx, cursor, out); err != nil {
				return err
			}
			continue
		}
		var buf []entry
		for {
			var ch <-chan struct{}
			buf, ch, err = s.hub.since(n, buf[:0])
			if err != nil {
				break // fell behind: read the journal from the cursor
			}
			for _, e := range buf {
				// Entries added after from() are checked here: the hub
				// may not have reached the cursor when the stream began.
				if !e.reset && (e.event && e.pos <= cursor || !e.event && e.pos < cursor) {
					n++
					continue
				}
				if err := send(ctx, out, e.m); err != nil {
					return nil
				}
				switch {
				case e.reset:
					cursor = 0
				case e.event:
					cursor = e.pos
				}
				n++
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return nil
			}
		}
	}
}

// errJoin stops a catch-up read once the hub holds what follows it.
var errJoin = errors.New("join the hub")

// catchUp reads the journal after cursor into out until the cursor is
// among the hub's messages, and returns it.
func (s *Server) catchUp(ctx context.Context, cursor int64, out chan<- msg) (int64, error) {
	o := journal.ReadOptions{After: cursor, Watch: true, MaxPoll: time.Second,
		OnBlocked: func(be *journal.BlockedError) { send(ctx, out, blockedMsg(be)) },
		OnNotice: func(n journal.Notice) {
			if n.Kind == journal.NoticeReplaced {
				cursor = 0
			}
			send(ctx, out, noticeMsg(n))
		},
	}
	err := journal.FollowWith(ctx, s.cfg.Journal, o, func(rec event.Record, raw []byte) error {
		if err := send(ctx, out, lineMsg(rec.JournalSequence, raw)); err != nil {
			return err
		}
		cursor = rec.JournalSequence
		if s.hub.usable(cursor) {
			return errJoin
		}
		return nil
	})
	switch {
	case errors.Is(err, errJoin):
		return cursor, nil
	case ctx.Err() != nil:
		return cursor, ctx.Err()
	}
	return cursor, err
}
