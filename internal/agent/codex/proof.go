package codex

import (
	"errors"
	"path/filepath"
	"regexp"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/lazy"

	"github.com/lcwrap/lcwrap/internal/event"
)

// Proof says why a rollout file is the session of one process tree: the
// process lcwrap launched or adopted (Root), or a descendant of it
// (Holder, reached through Chain), holds the file open, the holder serves
// no client outside that tree, no other rollout is open in the tree, and
// the file's first line names the thread its file name names.
type Proof struct {
	Path     string
	ThreadID string
	Root     event.Identity
	Holder   event.Identity
	// Chain is the pids from Root down to Holder (just Root when Root
	// holds it).
	Chain []int
	// OwnSession is true when the holder runs in a session of its own
	// (setsid), as codex's app-server daemon does: it is then outside
	// the launched process's process group.
	OwnSession bool
	// Executable is the holder's executable path, when readable.
	Executable string
}

// Typed is the proof as the details shape lcwrap records.
func (p Proof) Typed() RolloutProof {
	return RolloutProof{
		Chain: p.Chain, Evidence: "open-file-descriptor", Holder: p.Holder, HolderExecutable: p.Executable,
		OwnSession: p.OwnSession, Rollout: p.Path, ThreadID: p.ThreadID,
	}
}

// Facts is the proof as facts of the session's created event.
func (p Proof) Facts() *agent.RolloutFacts {
	return &agent.RolloutFacts{
		Chain: append([]int{}, p.Chain...), Evidence: "open-file-descriptor",
		Holder:     agent.HolderFacts{PID: p.Holder.PID, StartTime: int64(p.Holder.StartTime)},
		OwnSession: p.OwnSession, Rollout: p.Path, ThreadID: p.ThreadID,
	}
}

// Why proving failed; NotYet is the ordinary answer before codex has
// opened its rollout (interactive codex opens it at the first prompt).
var (
	ErrNotYet      = errors.New("no process of the tree holds a rollout file open")
	ErrAmbiguous   = errors.New("more than one rollout file is open in the process tree")
	ErrShared      = errors.New("the process holding the rollout also serves processes outside the tree")
	ErrMismatch    = errors.New("the rollout's session_meta does not name the thread its file name names")
	ErrUnsupported = errors.New("open files cannot be inspected on this system")
	ErrRootGone    = errors.New("the root process is gone")
)

// rolloutName matches codex's rollout file names and captures the thread
// id (a UUID) at their end.
// (Both compile on first use: at package init they would cost every
// lcwrap process start-up time.)
var rolloutName = lazy.Value[*regexp.Regexp]{Make: func() *regexp.Regexp {
	return regexp.MustCompile(`^rollout-.*-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$`)
}}

// rolloutDir matches the sessions/YYYY/MM/DD directory a rollout lives in.
var rolloutDir = lazy.Value[*regexp.Regexp]{Make: func() *regexp.Regexp {
	return regexp.MustCompile(`/sessions/[0-9]{4}/[0-9]{2}/[0-9]{2}$`)
}}

// threadOf returns the thread id in a rollout path, or "" when the path is
// not one of codex's rollout files.
func threadOf(path string) string {
	if !rolloutDir.Get().MatchString(filepath.Dir(path)) {
		return ""
	}
	m := rolloutName.Get().FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return ""
	}
	return m[1]
}
