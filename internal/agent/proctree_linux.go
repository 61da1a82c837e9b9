package agent

import (
	"errors"
	"os"
	"strconv"

	"github.com/lcwrap/lcwrap/internal/event"
)

// ErrRootGone is ProcessTree's answer when root is not in the process
// table with its start time.
var ErrRootGone = errors.New("the process is gone")

// ProcessTree returns root and every live descendant of it, read from
// /proc: the tree whose open files prove an agent's rollout (codex) or
// server socket (opencode). A process is a descendant when its chain of
// parents reaches root, each parent having started no later than its
// child: a reused pid breaks the chain rather than joining it. The error
// is ErrRootGone, or /proc's own when it cannot be listed.
func ProcessTree(root event.Identity) (map[int]event.ProcInfo, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	all := map[int]event.ProcInfo{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if info, err := event.System.Stat(pid); err == nil && !info.Zombie() {
			all[pid] = info
		}
	}
	if r, ok := all[root.PID]; !ok || r.StartTime != root.StartTime {
		return nil, ErrRootGone
	}
	memo := map[int]bool{root.PID: true}
	var in func(pid, depth int) bool
	in = func(pid, depth int) bool {
		if v, ok := memo[pid]; ok {
			return v
		}
		info := all[pid]
		parent, ok := all[info.PPID]
		v := ok && depth < 64 && parent.StartTime <= info.StartTime && in(info.PPID, depth+1)
		memo[pid] = v
		return v
	}
	tree := map[int]event.ProcInfo{}
	for pid, info := range all {
		if in(pid, 0) {
			tree[pid] = info
		}
	}
	return tree, nil
}

// FDLinks calls fn with what each open descriptor of pid points to (its
// /proc/PID/fd link: a path, "socket:[INODE]", "pipe:[INODE]", ...). A
// process that is gone, or whose descriptors are not ours to read, has
// none.
func FDLinks(pid int, fn func(link string)) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if link, err := os.Readlink(dir + e.Name()); err == nil {
			fn(link)
		}
	}
}
