package supervise

import (
	"errors"
	"sync"
	"syscall"
)

// waitResult is one wait status of the main child: a stop (job control)
// or its end; err when its status could not be read.
type waitResult struct {
	status  syscall.WaitStatus
	stopped bool
	err     error
}

// reaper is the one wait4 loop of a Run, shared by all its attempts. It
// hands the registered child's statuses (its stops, then its end) to the
// channel it was registered with. With all (a subreaper, or pid 1) it
// waits for any child, wait4(-1), and discards every other child's
// status, so orphans leave no zombie; one loop serves every attempt,
// since a loop per attempt could run on while orphans live and take a
// later child's status. Without all it waits for the registered child
// alone. The loop ends when there is nothing to wait for (without all:
// the child ended; with all: lcwrap has no child left and none is
// registered), and register starts it again.
type reaper struct {
	all     bool
	mu      sync.Mutex
	running bool
	pid     int // the registered child (0: none)
	out     chan<- waitResult
	early   map[int]waitResult // statuses reaped while no child was registered (all)
}

// register hands pid's statuses to out from now on, including one reaped
// between its start and this call.
func (r *reaper) register(pid int, out chan<- waitResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pid, r.out = pid, out
	if w, ok := r.early[pid]; ok {
		r.deliver(w)
	}
	r.early = nil
	if !r.running && r.pid != 0 {
		r.running = true
		go r.loop()
	}
}

func (r *reaper) loop() {
	for {
		r.mu.Lock()
		target := -1
		if !r.all {
			target = r.pid
		}
		if target == 0 {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(target, &ws, syscall.WUNTRACED, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		r.mu.Lock()
		switch {
		case err != nil && r.pid == 0:
			r.running = false
			r.mu.Unlock()
			return
		case err != nil && (!r.all || syscall.Kill(r.pid, 0) == syscall.ESRCH):
			// Something else in this process reaped it.
			r.deliver(waitResult{err: err})
		case err != nil:
			// The child was registered after wait4 found no child:
			// waiting again finds it.
		case got == r.pid:
			r.deliver(waitResult{status: ws, stopped: ws.Stopped()})
		case r.pid == 0:
			if r.early == nil {
				r.early = map[int]waitResult{}
			}
			r.early[got] = waitResult{status: ws, stopped: ws.Stopped()}
		}
		r.mu.Unlock()
	}
}

// deliver passes one status of the registered child on; its end
// unregisters it. r.mu is held.
func (r *reaper) deliver(w waitResult) {
	r.out <- w
	if !w.stopped {
		r.pid, r.out = 0, nil
	}
}
