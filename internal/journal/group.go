package journal

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// EnvGroup names the group that may read the journal, for a log shipper
// that runs as another user. With it, writers give the journal file (and
// so its sealed files, which are the same inodes) that group and mode
// 0640, and the journal's directory that group and mode 0750; nobody but
// the writing user may ever write them. Unset, everything is the user's
// alone (files 0600, directory 0700).
const EnvGroup = "LCWRAP_JOURNAL_GROUP"

// readGroup resolves the read group (Options.Group, else $LCWRAP_JOURNAL_GROUP):
// its gid, or -1 for none.
//
// Outcomes: the gid and nil; an error naming the setting when the group
// does not exist.
func readGroup(name string) (int, error) {
	from := "journal group"
	if name == "" {
		name, from = os.Getenv(EnvGroup), EnvGroup
	}
	if name == "" {
		return -1, nil
	}
	if gid, err := strconv.Atoi(name); err == nil && gid >= 0 {
		return gid, nil
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		return -1, fmt.Errorf("%s=%s: %w", from, name, err)
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil {
		return -1, fmt.Errorf("%s=%s: gid %q", from, name, g.Gid)
	}
	return gid, nil
}

// shareFile gives a journal file of ours the read group and group read
// (best effort: a shipper that cannot read says so itself).
func shareFile(f *os.File, fi fs.FileInfo, gid int) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if int(st.Gid) != gid {
		f.Chown(-1, gid)
	}
	if perm := fi.Mode().Perm(); perm&0o040 == 0 {
		f.Chmod(perm&^0o022 | 0o040)
	}
}

// shareDir gives the journal's directory, when it is ours, the read group
// and group read and search.
func shareDir(dir string, gid int) {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() {
		return
	}
	if int(st.Gid) != gid {
		os.Lchown(dir, -1, gid)
	}
	if perm := fi.Mode().Perm(); perm&0o050 != 0o050 {
		os.Chmod(dir, fi.Mode()&(fs.ModeSetgid|fs.ModeSticky)|perm&^0o022|0o050)
	}
}
