package opencode

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// FindServer looks for the server of the process tree under root: a
// socket that the kernel lists as listening on a loopback address (or on
// every address) and that root, or a descendant of root, holds open. port,
// when not 0, is the port its command line names: a socket on it is
// chosen among several. It returns ErrNoServer when none listens yet,
// ErrAmbiguous when several do and port names none of them.
func FindServer(root event.Identity, port int) (*ServerProof, string, error) {
	if v := event.CheckIdentity(event.System, root); v.Status != event.Alive {
		return nil, "", fmt.Errorf("%w: %s", ErrGone, v.Reason)
	}
	tree, err := processTree(root)
	if err != nil {
		return nil, "", err
	}
	held := map[uint64]int{} // socket inode → the pid holding it
	for pid := range tree {
		agent.FDLinks(pid, func(link string) {
			if s, ok := strings.CutPrefix(link, "socket:["); ok {
				if n, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
					held[n] = pid
				}
			}
		})
	}
	type found struct {
		l    Listener
		pid  int
		dial string
	}
	var all []found
	seen := map[uint64]bool{}
	for pid := range tree {
		for _, name := range []string{"tcp", "tcp6"} {
			// The holder's own network namespace lists its sockets.
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/net/" + name)
			if err != nil {
				continue
			}
			for _, l := range ParseListeners(b) {
				h, ok := held[l.Inode]
				if !ok || h != pid || seen[l.Inode] {
					continue
				}
				seen[l.Inode] = true
				if d := l.dialAddr(); d != "" {
					all = append(all, found{l, h, d})
				}
			}
		}
	}
	var pick *found
	for i := range all {
		if port != 0 && int(all[i].l.Addr.Port()) == port {
			pick = &all[i]
		}
	}
	switch {
	case pick != nil:
	case len(all) == 0:
		return nil, "", ErrNoServer
	case len(all) > 1:
		return nil, "", fmt.Errorf("%w (%d ports)", ErrAmbiguous, len(all))
	default:
		pick = &all[0]
	}
	id, _, err := event.IdentityOf(event.System, pick.pid)
	if err != nil || id.StartTime != tree[pick.pid].StartTime {
		return nil, "", fmt.Errorf("%w: the holder exited meanwhile", ErrNoServer)
	}
	p := &ServerProof{Evidence: "listening-socket-held", Holder: id, Port: int(pick.l.Addr.Port()), Inode: pick.l.Inode, Address: pick.l.Addr.Addr().String()}
	for pid := pick.pid; ; pid = tree[pid].PPID {
		p.Chain = append([]int{pid}, p.Chain...)
		if pid == root.PID {
			break
		}
	}
	return p, pick.dial, nil
}

// processTree is agent.ProcessTree with this package's errors.
func processTree(root event.Identity) (map[int]event.ProcInfo, error) {
	tree, err := agent.ProcessTree(root)
	switch {
	case errors.Is(err, agent.ErrRootGone):
		return nil, ErrGone
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return tree, nil
}
