package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// ErrUnsafe means a file a writer would use — the journal, its
// checkpoint, its kernel lock, its lock directory, or the name the next
// sealed file takes — is a symlink, belongs to another user, or is
// writable by group or others. Writers refuse it, as ssh refuses such
// files under StrictModes: whoever planted it could read every recorded
// command line, forge records, or hold every writer off.
var ErrUnsafe = errors.New("refusing a journal file someone else controls")

// ErrHardLinked means the journal has another name (a hard link): the
// lock is taken by name, so writers through the other name would not be
// excluded; writers refuse it.
var ErrHardLinked = errors.New("journal has another hard link")

// UnsafeError names the refused file and says why.
type UnsafeError struct {
	Path string // the file
	Role string // what it is to the journal ("journal", "checkpoint", "kernel lock", "lock directory", "next sealed file")
	Why  string // what is wrong: "a symlink to ...", "owned by uid 65534 (nobody), ...", "writable by group and others (mode 0666)"
	// Symlink is true for a symlink (the error then also wraps ErrSymlink).
	Symlink bool
}

func (e *UnsafeError) Error() string {
	what := "journal " + e.Path
	if e.Role != "journal" {
		what = "its " + e.Role + " " + e.Path
	}
	fix := "remove it, or keep the journal in a directory only you can write"
	switch {
	case e.Symlink:
		fix = "lcwrap never follows one: remove it"
	case e.Role == "journal" && e.Why != "" && e.Why[0] == 'w':
		fix = "chmod go-w it, or start a new journal"
	}
	return fmt.Sprintf("%v: %s is %s; %s (%s)", ErrUnsafe, what, e.Why, fix, SharedDirsDoc)
}

// Unwrap returns ErrUnsafe, and ErrSymlink for a symlink.
func (e *UnsafeError) Unwrap() []error {
	if e.Symlink {
		return []error{ErrUnsafe, ErrSymlink}
	}
	return []error{ErrUnsafe}
}

// SharedDirsDoc is where docs/journal.md explains these refusals.
const SharedDirsDoc = "docs/journal.md#journals-in-shared-directories"

// checkSafe judges a file a writer uses, described by fi (from Lstat, or
// Stat of an open descriptor): it must be no symlink, belong to the user
// writing (or root), and, when modes, be writable by nobody else. nil
// when it is safe.
func checkSafe(path, role string, fi fs.FileInfo, modes bool) *UnsafeError {
	if fi.Mode()&fs.ModeSymlink != 0 {
		why := "a symlink"
		if target, err := os.Readlink(path); err == nil {
			why += " to " + strconv.Quote(target)
		}
		return &UnsafeError{Path: path, Role: role, Why: why, Symlink: true}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if euid := os.Geteuid(); int(st.Uid) != euid && st.Uid != 0 {
		return &UnsafeError{Path: path, Role: role, Why: fmt.Sprintf("owned by %s, not by %s", userName(int(st.Uid)), userName(euid))}
	}
	if perm := fi.Mode().Perm(); modes && perm&0o022 != 0 {
		who := "group and others"
		switch perm & 0o022 {
		case 0o020:
			who = "its group"
		case 0o002:
			who = "everyone"
		}
		return &UnsafeError{Path: path, Role: role, Why: fmt.Sprintf("writable by %s (mode %04o)", who, perm)}
	}
	return nil
}

// checkSafeInfo is checkSafe of a Stat that may have failed (nil then).
func checkSafeInfo(path, role string, fi fs.FileInfo, err error) error {
	if err != nil {
		return nil
	}
	if ue := checkSafe(path, role, fi, true); ue != nil {
		return ue
	}
	return nil
}

// checkPath is checkSafe of whatever is at path; nil when nothing is.
func checkPath(path, role string, modes bool) *UnsafeError {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil
	}
	return checkSafe(path, role, fi, modes)
}

// explainOpen turns a failed open of a file a writer uses into what is
// wrong with it when something is: a symlink (open with O_CREAT and
// O_NOFOLLOW reports one as "permission denied" in a sticky directory),
// another user's file. Otherwise err as it is.
func explainOpen(path, role string, err error) error {
	if ue := checkPath(path, role, true); ue != nil {
		return ue
	}
	if errors.Is(err, syscall.ELOOP) {
		return &UnsafeError{Path: path, Role: role, Why: "a symlink", Symlink: true}
	}
	return err
}

// userName says "uid N (name)".
func userName(uid int) string {
	s := "uid " + strconv.Itoa(uid)
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		s += " (" + u.Username + ")"
	}
	return s
}

// CheckTrust says whether the journal at path is one a reader can trust
// not to have been written by someone else: nil when it belongs to the
// user reading (or root) and nobody else can write it; an *UnsafeError
// otherwise (readers read it anyway, with a warning). A file that cannot
// be looked at is left to the reader to report.
func CheckTrust(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if ue := checkSafe(path, "journal", fi, true); ue != nil {
		return ue
	}
	return nil
}
