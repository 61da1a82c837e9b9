package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/lcwrap/lcwrap/internal/fleet"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// streamQueue is how many messages a stream's reader may run ahead of
// its writer; past it the reader waits (it reads the journal at its
// client's pace, so a slow client holds nobody else back).
const streamQueue = 1024

// msg is one Server-Sent Event, encoded, and the cursor it carries ("":
// none, a message that is not a journal event).
type msg struct {
	b      []byte
	cursor string
}

// events is GET /v1/events: every journal line after the cursor
// (Last-Event-ID, else ?after, else 0) as an SSE message with id: the
// line's journalSequence, then live lines, with keep-alive comments.
func (s *Server) events(w http.ResponseWriter, r *http.Request, _ string) {
	after := r.Header.Get("Last-Event-ID")
	if after == "" {
		after = r.URL.Query().Get("after")
	}
	var start func(ctx context.Context, out chan<- msg) error
	if s.fl != nil {
		var c *fleet.Cursor
		if after != "" {
			fc, err := fleet.ParseCursor(after)
			if err != nil {
				writeError(w, http.StatusBadRequest, CodeBadCursor, fmt.Sprintf("cursor %q: %v (a fleet cursor: the id of an event of this stream)", after, err))
				return
			}
			c = &fc
		}
		start = func(ctx context.Context, out chan<- msg) error { return s.fleetLines(ctx, c, out) }
	} else {
		var n int64
		if after != "" {
			var err error
			n, err = strconv.ParseInt(after, 10, 64)
			if err != nil || n < 0 {
				writeError(w, http.StatusBadRequest, CodeBadCursor, fmt.Sprintf("cursor %q: give a journalSequence, 0 or more (the id of an event of this stream)", after))
				return
			}
		}
		start = func(ctx context.Context, out chan<- msg) error { return s.journalStream(ctx, n, out) }
	}
	if s.streams.Add(1) > int64(s.cfg.MaxStreams) {
		s.streams.Add(-1)
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, CodeTooManyStreams, fmt.Sprintf("%d event streams are open, the most this server keeps; try again later", s.cfg.MaxStreams))
		return
	}
	defer s.streams.Add(-1)

	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	bw := bufio.NewWriterSize(w, 32<<10)
	last := after      // the cursor of the last message written
	delivered := after // of the last one flushed: the client has it
	write := func(b []byte) error {
		rc.SetWriteDeadline(time.Now().Add(s.cfg.StreamStall))
		_, err := bw.Write(b)
		return err
	}
	flush := func() error {
		rc.SetWriteDeadline(time.Now().Add(s.cfg.StreamStall))
		if err := bw.Flush(); err != nil {
			return err
		}
		return rc.Flush()
	}
	if write([]byte("retry: 2000\n: lcwrap-serve event stream\n\n")) != nil || flush() != nil {
		return
	}

	ctx, stop := context.WithCancel(r.Context())
	defer stop()
	out := make(chan msg, streamQueue)
	done := make(chan error, 1)
	go func() { done <- start(ctx, out); close(out) }()
	ka := time.NewTicker(s.cfg.KeepAlive)
	defer ka.Stop()
	cut := func(err error) {
		s.logf("event stream to %s cut off, its client taking no write for %v (%v): it had every line up to cursor %q at least, and resumes from the last id it read (Last-Event-ID)", r.RemoteAddr, s.cfg.StreamStall, err, delivered)
	}
	for {
		select {
		case m, ok := <-out:
			if !ok {
				err := <-done
				if ctx.Err() == nil && err != nil {
					b, _ := json.Marshal(Error{Code: CodeJournal, Message: termtext.Line(err.Error()), Cursor: last})
					write(append(append([]byte("event: error\ndata: "), b...), "\n\n"...))
					flush()
				}
				return
			}
			// Take everything queued, then flush once.
			for more := true; more; {
				if err := write(m.b); err != nil {
					cut(err)
					return
				}
				if m.cursor != "" {
					last = m.cursor
				}
				select {
				case m, more = <-out: // a closed queue ends the batch; the loop above sees it
				default:
					more = false
				}
			}
			if err := flush(); err != nil {
				cut(err)
				return
			}
		case <-ka.C:
			if err := write([]byte(": keep-alive\n\n")); err != nil {
				cut(err)
				return
			}
			if err := flush(); err != nil {
				cut(err)
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// send queues m unless ctx ends first.
func send(ctx context.Context, out chan<- msg, m msg) error {
	select {
	case out <- m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sse encodes one message: event name (none for a journal line), id, and
// one data line (JSON has no raw newline).
func sse(name, id string, data []byte) []byte {
	b := make([]byte, 0, len(data)+len(id)+32)
	if name != "" {
		b = append(append(append(b, "event: "...), name...), '\n')
	}
	if id != "" {
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	b = append(append(b, "data: "...), data...)
	return append(b, "\n\n"...)
}

// Blocked is the data of a `blocked` message: the journal stops at a bad
// line no quarantine record covers, and the stream waits there (as
// tail --follow does) until a repair lets it read on.
type Blocked struct {
	Line   int64  `json:"line"`
	Offset int64  `json:"offset"`
	Class  string `json:"class"`
	Reason string `json:"reason"`
	Torn   bool   `json:"torn"`
}

// Notice is the data of a `notice` message: a rotation, a skipped
// (quarantined) range or a replaced journal, as the reader noticed it.
type Notice struct {
	Kind        string               `json:"kind"`
	Path        string               `json:"path"`
	Sequence    int64                `json:"sequence"`
	Quarantined *journal.Quarantined `json:"quarantined,omitempty"`
}

// FleetLine is the data of a fleet stream's message: the host, the
// cursor (also its id) and the journal line as the host wrote it, as
// `lcwrap tail --fleet` prints it.
type FleetLine struct {
	Host   string          `json:"host"`
	Cursor string          `json:"cursor"`
	Event  json.RawMessage `json:"event"`
}

// fleetLines follows the fleet's output after c into out. Damage (a part
// of the output that is not an event) is a `damage` message with no id.
func (s *Server) fleetLines(ctx context.Context, c *fleet.Cursor, out chan<- msg) error {
	r, err := fleet.NewReader(s.cfg.Fleet)
	if err != nil {
		return err
	}
	defer r.Close()
	if c != nil {
		r.After(*c)
	}
	f := fleet.New(fleet.Options{SilentAfter: s.fl.silent})
	err = r.Follow(ctx, FleetPoll, func(it *fleet.Item) error {
		o := f.Apply(it)
		if it.Before {
			return nil
		}
		if o.Damage && it.Damage != nil {
			b, _ := json.Marshal(it.Damage)
			return send(ctx, out, msg{b: sse("damage", "", b)})
		}
		if !o.Shown() {
			return nil
		}
		id := it.Cursor.String()
		b, _ := json.Marshal(FleetLine{Host: it.Host, Cursor: id, Event: json.RawMessage(termtext.Line(string(it.Body)))})
		return send(ctx, out, msg{b: sse("", id, b), cursor: id})
	}, nil)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
