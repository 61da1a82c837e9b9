package cancel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/wrapsig"
)

var (
	// ErrRead means the journal could not be read: nothing was sent.
	ErrRead = errors.New("cannot read the journal")
	// ErrRecord means the request could not be recorded: nothing was sent.
	ErrRecord = errors.New("cannot record the cancel request")
)

// SignalError is a wrapper that could not be signalled: its handle could
// not be opened or its identity did not check out (Recorded false:
// nothing was recorded or sent), or the signal failed after the request
// was recorded (Recorded true; NoteErr says why recording the
// non-delivery failed too, if it did). Err wraps wrapsig's sentinels
// (ErrGone, ErrUnverified, ErrPermission, ErrUnsupported).
type SignalError struct {
	ChildID  string
	Err      error
	Recorded bool
	NoteErr  error
}

func (e *SignalError) Error() string {
	return fmt.Sprintf("cannot signal the wrapper of %s: %v", e.ChildID, e.Err)
}

// Unwrap returns Err.
func (e *SignalError) Unwrap() error { return e.Err }

// Request is one cancel request.
type Request struct {
	Journal string          // the journal's path
	Options journal.Options // for recording the request
	ChildID string
	Reason  string // recorded redacted, cut to 512 characters
	// Table, Opener and Now default to event.System, wrapsig.Pidfd and
	// time.Now (tests replace them).
	Table  event.ProcTable
	Opener wrapsig.Opener
	Now    func() time.Time
}

// Sent is a request delivered to the child's wrapper.
type Sent struct {
	ChildID string
	Wrapper event.Identity
	tr      *projection.Tracker
}

// Send runs the protocol for r. Outcomes:
//
//   - the Sent request and nil: recorded, and SIGTERM delivered;
//   - an error wrapping ErrRead, or an *AuthorityError (no authority,
//     unknown child, not running, wrapper gone): nothing was recorded or
//     sent;
//   - a *SignalError with Recorded false (the wrapper's handle or
//     identity): nothing was recorded or sent; or an *AuthorityError
//     wrapping ErrEnded when the wrapper is gone because the child ended
//     meanwhile;
//   - an error wrapping ErrRecord: nothing was sent;
//   - a *SignalError with Recorded true: recorded, not delivered (or the
//     *AuthorityError of a child that ended meanwhile).
func Send(r Request) (*Sent, error) {
	if r.Table == nil {
		r.Table = event.System
	}
	if r.Opener == nil {
		r.Opener = wrapsig.Pidfd
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	tr := projection.NewTracker(r.Journal)
	if err := tr.Refresh(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRead, err)
	}
	a, err := CheckAuthority(tr, r.ChildID, r.Table)
	if err != nil {
		return nil, err
	}
	target, err := wrapsig.Open(r.Opener, r.Table, a.Wrapper)
	if err != nil {
		if ended := endedMeanwhile(tr, r, err); ended != nil {
			return nil, ended
		}
		return nil, &SignalError{ChildID: r.ChildID, Err: err}
	}
	defer target.Close()

	self, err := event.SelfIdentity()
	if err != nil {
		self = event.Identity{PID: os.Getpid(), Host: event.Host()}
	}
	rec := NewRecorder(tr, r.Options, r.Now, a)
	defer rec.Close()
	if err := rec.Requested(event.CutRunes(r.Reason, event.MaxActivity), self, "SIGTERM"); err != nil {
		return nil, fmt.Errorf("%w in %s: %v", ErrRecord, r.Journal, err)
	}
	if err := target.Signal(syscall.SIGTERM); err != nil {
		noteErr := rec.NotDelivered(err)
		if ended := endedMeanwhile(tr, r, err); ended != nil {
			return nil, ended
		}
		return nil, &SignalError{ChildID: r.ChildID, Err: err, Recorded: true, NoteErr: noteErr}
	}
	return &Sent{ChildID: r.ChildID, Wrapper: a.Wrapper, tr: tr}, nil
}

// endedMeanwhile reads the journal again when the wrapper turned out to be
// gone (err wraps wrapsig.ErrGone) after authority was granted: a child
// that ended meanwhile, its wrapper with it, is not lost. It returns the
// refusal saying how the child ended, or nil.
func endedMeanwhile(tr *projection.Tracker, r Request, err error) error {
	if !errors.Is(err, wrapsig.ErrGone) || tr.Refresh() != nil {
		return nil
	}
	if _, err := CheckAuthority(tr, r.ChildID, r.Table); errors.Is(err, ErrEnded) {
		return err
	}
	return nil
}

// Wait follows the journal until the child reaches a terminal state and
// returns its view then. Outcomes: the view; ctx's error when it ends
// first; the journal's errors.
func (s *Sent) Wait(ctx context.Context) (projection.ChildView, error) {
	return s.tr.WaitEnded(ctx, s.ChildID)
}
