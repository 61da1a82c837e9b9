package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/lcwrap/lcwrap/internal/cancel"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/fleet"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/view"
	"github.com/lcwrap/lcwrap/internal/wrapsig"
)

func newLogger(w io.Writer) *log.Logger { return log.New(w, "lcwrap-serve: http: ", 0) }

// CursorHeader names the cursor a picture is as of: a stream started
// after it misses nothing and repeats nothing of it.
const CursorHeader = "Lcwrap-Cursor"

// caughtUp waits until the follower has read what the journal held at the
// start, so the first answer is never a half-read picture.
func (s *Server) caughtUp(ctx context.Context) bool {
	var c <-chan struct{}
	if s.fl != nil {
		c = s.fl.caught
	} else {
		c = s.follow.CaughtUp()
	}
	select {
	case <-c:
		return true
	case <-ctx.Done():
		return false
	}
}

// children is GET /v1/children: status --json, ?all=1, ?state=S[,S].
func (s *Server) children(w http.ResponseWriter, r *http.Request, _ string) {
	q := r.URL.Query()
	all, err := boolParam(q.Get("all"))
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeBadRequest, "all: "+err.Error())
		return
	}
	var states []string
	if v := q.Get("state"); v != "" {
		states = strings.Split(v, ",")
	}
	var atLeast int64
	if v := q.Get("cursor"); v != "" && s.fl == nil {
		if atLeast, err = strconv.ParseInt(v, 10, 64); err != nil || atLeast < 0 {
			writeError(w, http.StatusBadRequest, CodeBadCursor, fmt.Sprintf("cursor %q: give a journalSequence, 0 or more", v))
			return
		}
	}
	if !s.caughtUp(r.Context()) || !s.reached(r.Context(), atLeast) {
		return
	}
	keep := func(v *projection.ChildView) bool { return states == nil || slices.Contains(states, v.Display) }
	if s.fl != nil {
		rep, cur := s.fl.report(all)
		rep.Children = slices.DeleteFunc(rep.Children, func(c fleet.Child) bool { return !keep(&c.ChildView) })
		w.Header().Set(CursorHeader, cur)
		writeJSON(w, http.StatusOK, rep)
		return
	}
	var rep projection.Report
	var cur int64
	s.follow.With(func(m *view.Model) {
		rep = m.Report(s.cfg.Now(), all)
		cur = m.Cursor()
	})
	st := s.follow.State()
	rep.Input = s.cfg.Journal
	if be := st.Blocked; be != nil {
		rep.Blocked = &projection.Blocked{Line: be.Line, Offset: be.Offset, Class: string(be.Class), Reason: be.Reason}
	}
	rep.Children = slices.DeleteFunc(rep.Children, func(c projection.ChildView) bool { return !keep(&c) })
	w.Header().Set(CursorHeader, strconv.FormatInt(cur, 10))
	writeJSON(w, http.StatusOK, rep)
}

// CursorWait is how long GET /v1/children?cursor=N waits for the picture
// to take in line N; past it the answer is as of an earlier cursor (its
// Lcwrap-Cursor header says which).
const CursorWait = 5 * time.Second

// reached waits (up to CursorWait) until the picture has taken in every
// line up to cursor: a client that read line N from the stream then gets
// a picture that has it. It reports false when the request ended.
func (s *Server) reached(ctx context.Context, cursor int64) bool {
	if cursor == 0 || s.fl != nil {
		return true
	}
	deadline := time.Now().Add(CursorWait)
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		var at int64
		s.follow.With(func(m *view.Model) { at = m.Cursor() })
		if at >= cursor || time.Now().After(deadline) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}

func boolParam(v string) (bool, error) {
	switch v {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	}
	return false, fmt.Errorf("give 1 or 0, not %q", v)
}

// ChildEvent is one journal line of a child, with its cursor.
type ChildEvent struct {
	Cursor int64           `json:"cursor"`
	Event  json.RawMessage `json:"event"`
}

// ChildAnswer is GET /v1/children/{id}.
type ChildAnswer struct {
	Child projection.ChildView `json:"child"`
	// Events are the child's journal lines, oldest first: the last
	// ?limit (default 1000) of them; Omitted counts those left out.
	Events  []ChildEvent `json:"events"`
	Omitted int64        `json:"omitted"`
}

// DefaultEventLimit is GET /v1/children/{id}'s default ?limit.
const DefaultEventLimit = 1000

// child is GET /v1/children/{id}.
func (s *Server) child(w http.ResponseWriter, r *http.Request, id string) {
	limit := DefaultEventLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 100000 {
			writeError(w, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("limit: give 0 to 100000, not %q", v))
			return
		}
		limit = n
	}
	if s.fl != nil {
		writeError(w, http.StatusNotFound, CodeNotFound, "under --fleet a child is (host, childId): read GET /v1/children and GET /v1/events")
		return
	}
	if !s.caughtUp(r.Context()) {
		return
	}
	var v projection.ChildView
	var ok bool
	var cur int64
	s.follow.With(func(m *view.Model) {
		v, ok = m.View(id, s.cfg.Now())
		cur = m.Cursor()
	})
	if !ok {
		writeError(w, http.StatusNotFound, CodeUnknownChild, fmt.Sprintf("no child %q in the journal %s", id, s.cfg.Journal))
		return
	}
	ans := ChildAnswer{Child: v, Events: []ChildEvent{}}
	err := journal.Read(s.cfg.Journal, journal.ReadOptions{}, func(rec event.Record, raw []byte) error {
		if rec.JournalSequence > cur {
			return errStop
		}
		if rec.Event.ChildID != id {
			return nil
		}
		if limit == 0 {
			ans.Omitted++
			return nil
		}
		if len(ans.Events) == limit {
			ans.Events = ans.Events[1:]
			ans.Omitted++
		}
		ans.Events = append(ans.Events, ChildEvent{Cursor: rec.JournalSequence, Event: slices.Clone(raw)})
		return nil
	})
	var be *journal.BlockedError
	if err != nil && !errors.Is(err, errStop) && !errors.As(err, &be) {
		writeError(w, http.StatusServiceUnavailable, CodeJournal, fmt.Sprintf("cannot read the journal %s: %v", s.cfg.Journal, err))
		return
	}
	w.Header().Set(CursorHeader, strconv.FormatInt(cur, 10))
	writeJSON(w, http.StatusOK, ans)
}

var errStop = errors.New("stop")

// snapshot is GET /v1/snapshot: `lcwrap snapshot` (?reason=).
func (s *Server) snapshot(w http.ResponseWriter, r *http.Request, _ string) {
	reason := r.URL.Query().Get("reason")
	if reason == "" {
		reason = "periodic"
	}
	if !slices.Contains(projection.SnapshotReasons, reason) {
		writeError(w, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("reason must be one of %s, not %q", strings.Join(projection.SnapshotReasons, ", "), reason))
		return
	}
	if s.fl != nil {
		if !s.caughtUp(r.Context()) {
			return
		}
		rep, _ := s.fl.report(true)
		writeJSON(w, http.StatusOK, fleet.BuildSnapshot(rep, reason))
		return
	}
	if _, err := os.Lstat(s.cfg.Journal); errors.Is(err, fs.ErrNotExist) {
		// No evidence is not an empty world: a complete snapshot of no
		// children would say nothing runs.
		writeError(w, http.StatusNotFound, CodeNoJournal, "no journal at "+s.cfg.Journal+": a snapshot of nothing would say nothing runs")
		return
	}
	tr := projection.NewTracker(s.cfg.Journal)
	err := tr.Refresh()
	var be *journal.BlockedError
	if err != nil && !errors.As(err, &be) {
		writeError(w, http.StatusServiceUnavailable, CodeJournal, fmt.Sprintf("cannot read the journal: %v", err))
		return
	}
	snap, _ := tr.BuildSnapshot(event.System, s.cfg.Now(), emit.NewEpoch(), reason)
	writeJSON(w, http.StatusOK, snap)
}

// CancelRequest is POST /v1/children/{id}/cancel's optional body.
type CancelRequest struct {
	Reason string `json:"reason"`
}

// CancelAnswer is a cancel request sent (202).
type CancelAnswer struct {
	ChildID    string `json:"childId"`
	Signal     string `json:"signal"`
	WrapperPID int    `json:"wrapperPid"`
	Recorded   bool   `json:"recorded"`
	Note       string `json:"note"`
}

// checkID is lcwrap cancel's rule for a CHILD_ID.
func checkID(id string) error {
	if len(id) > 128 {
		return errors.New("longer than 128 bytes")
	}
	for _, r := range id {
		if r == unicode.ReplacementChar || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return errors.New("use printable characters without spaces")
		}
	}
	return nil
}

// cancel is POST /v1/children/{id}/cancel: lcwrap cancel's protocol.
func (s *Server) cancel(w http.ResponseWriter, r *http.Request, id string) {
	if s.cfg.ReadOnly {
		writeError(w, http.StatusForbidden, CodeReadOnly, "this server is --read-only: cancel is off; nothing was sent")
		return
	}
	if s.fl != nil {
		writeError(w, http.StatusForbidden, CodeNoAuthority, "cancel refused: a fleet is other hosts' shipped evidence, and lcwrap holds no authority over another host's processes; run 'lcwrap cancel' on the child's own host")
		return
	}
	if err := checkID(id); err != nil {
		writeError(w, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("child id %q: %v", id, err))
		return
	}
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(BodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, DefaultMaxBodyBytes))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, CodeTooLarge, fmt.Sprintf("the body is larger than %d bytes; nothing was sent", mbe.Limit))
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("cannot read the body: %v; nothing was sent", err))
		return
	}
	var req CancelRequest
	if len(strings.TrimSpace(string(body))) > 0 {
		d := json.NewDecoder(strings.NewReader(string(body)))
		d.DisallowUnknownFields()
		if err := d.Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("the body is not {\"reason\": \"...\"}: %v; nothing was sent", err))
			return
		}
	}
	sent, err := cancel.Send(cancel.Request{Journal: s.cfg.Journal, Options: s.cfg.JournalOptions, ChildID: id, Reason: req.Reason})
	if err != nil {
		status, code, msg := cancelRefusal(s.cfg.Journal, id, err)
		writeError(w, status, code, msg)
		return
	}
	writeJSON(w, http.StatusAccepted, CancelAnswer{ChildID: id, Signal: "SIGTERM", WrapperPID: sent.Wrapper.PID, Recorded: true,
		Note: "a request sent to the child's wrapper, not an end: the child's terminal event in the journal (GET /v1/events) says how it ended"})
}

// cancelRefusal is lcwrap cancel's refusal as an HTTP status and code.
func cancelRefusal(path, id string, err error) (int, string, string) {
	var se *cancel.SignalError
	var ae *cancel.AuthorityError
	switch {
	case errors.Is(err, cancel.ErrRead):
		return http.StatusServiceUnavailable, CodeJournal, err.Error() + "; nothing was sent"
	case errors.Is(err, cancel.ErrRecord):
		return http.StatusServiceUnavailable, CodeNotRecorded, err.Error() + "; nothing was sent"
	case errors.As(err, &se):
		note := "nothing was sent"
		code := CodeNoAuthority
		status := http.StatusForbidden
		if se.Recorded {
			note, code, status = "the recorded request was not delivered", CodeNotDelivered, http.StatusBadGateway
		}
		if errors.Is(se.Err, wrapsig.ErrGone) {
			return http.StatusConflict, CodeWrapperGone, fmt.Sprintf("cannot cancel %s: its wrapper is gone (%v); the child may be lost: see lcwrap status --reconcile; %s", id, se.Err, note)
		}
		return status, code, fmt.Sprintf("cannot cancel %s: its wrapper cannot be signalled from here: %v; %s", id, se.Err, note)
	case errors.As(err, &ae):
		switch {
		case errors.Is(err, cancel.ErrUnknownChild):
			return http.StatusNotFound, CodeUnknownChild, fmt.Sprintf("no child %s in the journal %s; nothing was sent", id, path)
		case errors.Is(err, cancel.ErrEnded):
			return http.StatusConflict, CodeNotRunning, fmt.Sprintf("%s has already ended: %s; nothing was sent", id, ae.State)
		case errors.Is(err, cancel.ErrNotStarted):
			return http.StatusConflict, CodeNotStarted, fmt.Sprintf("%s has not started yet (state created); nothing was sent: try again once it is running", id)
		case errors.Is(err, cancel.ErrWrapperGone):
			return http.StatusConflict, CodeWrapperGone, fmt.Sprintf("cannot cancel %s: %s; the child may be lost: see lcwrap status --reconcile; nothing was sent", id, ae.Reason)
		}
		return http.StatusForbidden, CodeNoAuthority, fmt.Sprintf("cannot cancel %s: %s; nothing was sent", id, ae.Reason)
	}
	return http.StatusServiceUnavailable, CodeJournal, err.Error() + "; nothing was sent"
}

// fleetState is a fleet kept current by one reader.
type fleetState struct {
	path   string
	mu     sync.Mutex
	r      *fleet.Reader
	f      *fleet.Fleet
	cursor fleet.Cursor
	caught chan struct{}
	once   sync.Once
	silent time.Duration
}

func newFleetState(path string, silent time.Duration) (*fleetState, error) {
	r, err := fleet.NewReader(path)
	if err != nil {
		return nil, err
	}
	if silent <= 0 {
		silent = fleet.DefaultSilentAfter
	}
	return &fleetState{path: path, r: r, f: fleet.New(fleet.Options{SilentAfter: silent}), caught: make(chan struct{}), silent: silent}, nil
}

// FleetPoll is how often a fleet's output is looked at.
const FleetPoll = 200 * time.Millisecond

func (fs *fleetState) run(ctx context.Context, logf func(string, ...any)) error {
	defer fs.r.Close()
	for {
		err := fs.r.Follow(ctx, FleetPoll, func(it *fleet.Item) error {
			fs.mu.Lock()
			fs.f.Apply(it)
			if !it.Cursor.IsZero() {
				fs.cursor = it.Cursor
			}
			fs.mu.Unlock()
			return nil
		}, func() error {
			fs.mu.Lock()
			fs.f.SetPending(fs.r.Pending())
			fs.mu.Unlock()
			fs.once.Do(func() { close(fs.caught) })
			return nil
		})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		logf("reading the fleet at %s: %v; trying again", fs.path, err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (fs *fleetState) report(all bool) (fleet.Report, string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	rep := fs.f.Report(all)
	rep.Input = fs.path
	cur := ""
	if !fs.cursor.IsZero() {
		cur = fs.cursor.String()
	}
	return rep, cur
}
