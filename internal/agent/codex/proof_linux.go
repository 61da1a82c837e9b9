package codex

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// Prove looks for the rollout file of the process tree under root. It
// returns a Proof, or one of ErrNotYet, ErrAmbiguous, ErrShared,
// ErrMismatch, ErrRootGone (wrapped with the facts), or the error of
// reading the process table.
func Prove(root event.Identity) (Proof, error) {
	p, _, err := proveTree(root)
	return p, err
}

// proveTree is Prove, also returning the process tree it read (nil when
// it could read none).
func proveTree(root event.Identity) (Proof, map[int]event.ProcInfo, error) {
	if v := event.CheckIdentity(event.System, root); v.Status != event.Alive {
		return Proof{}, nil, fmt.Errorf("%w: %s", ErrRootGone, v.Reason)
	}
	tree, err := processTree(root)
	if err != nil {
		return Proof{}, nil, err
	}
	p, err := proveIn(root, tree)
	return p, tree, err
}

// proveIn looks for the rollout of tree, read by processTree for root.
func proveIn(root event.Identity, tree map[int]event.ProcInfo) (Proof, error) {
	type held struct {
		path   string
		holder int
	}
	var found []held
	seen := map[string]bool{}
	sockets := map[uint32]bool{} // socket inodes held in the tree
	fds := map[int][]uint32{}    // each process's socket inodes
	for pid := range tree {
		agent.FDLinks(pid, func(link string) {
			if ino, ok := socketInode(link); ok {
				sockets[ino] = true
				fds[pid] = append(fds[pid], ino)
				return
			}
			if threadOf(link) != "" && !seen[link] {
				seen[link] = true
				found = append(found, held{link, pid})
			}
		})
	}
	switch {
	case len(found) == 0:
		return Proof{}, ErrNotYet
	case len(found) > 1:
		return Proof{}, fmt.Errorf("%w (%d files)", ErrAmbiguous, len(found))
	}
	h := found[0]
	if len(fds[h.holder]) > 0 {
		socks, err := unixSockets()
		if err != nil {
			return Proof{}, fmt.Errorf("%w: cannot list unix sockets: %v", ErrShared, err)
		}
		for _, ino := range fds[h.holder] {
			s, ok := socks[ino]
			if ok && s.named && s.state == tcpEstablished && !sockets[s.peer] {
				return Proof{}, fmt.Errorf("%w (pid %d has a client connection from outside)", ErrShared, h.holder)
			}
		}
	}
	thread := threadOf(h.path)
	meta, err := firstLine(h.path)
	if err != nil {
		return Proof{}, err
	}
	if m, ok := ParseSessionMeta(meta); !ok || !strings.EqualFold(m.ID, thread) {
		return Proof{}, fmt.Errorf("%w: %s", ErrMismatch, h.path)
	}
	id, info, err := event.IdentityOf(event.System, h.holder)
	if err != nil || id.StartTime != tree[h.holder].StartTime {
		return Proof{}, fmt.Errorf("%w: the holder exited meanwhile", ErrNotYet)
	}
	rootInfo := tree[root.PID]
	p := Proof{Path: h.path, ThreadID: thread, Root: root, Holder: id, OwnSession: info.SID != rootInfo.SID && info.SID == info.PID}
	for pid := h.holder; ; pid = tree[pid].PPID {
		p.Chain = append([]int{pid}, p.Chain...)
		if pid == root.PID {
			break
		}
	}
	p.Executable, _ = event.Exe(h.holder)
	return p, nil
}

// processTree is agent.ProcessTree with this package's errors.
func processTree(root event.Identity) (map[int]event.ProcInfo, error) {
	tree, err := agent.ProcessTree(root)
	switch {
	case errors.Is(err, agent.ErrRootGone):
		return nil, ErrRootGone
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return tree, nil
}

// socketInode reads "socket:[1234]".
func socketInode(link string) (uint32, bool) {
	s, ok := strings.CutPrefix(link, "socket:[")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 32)
	return uint32(n), err == nil
}

// firstLine reads a file's first line (at most 1 MiB: a session_meta
// carries codex's base instructions).
func firstLine(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var line []byte
	for len(line) < maxLine {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if err != bufio.ErrBufferFull {
			break
		}
	}
	return line, nil
}
