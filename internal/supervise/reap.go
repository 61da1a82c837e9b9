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

// reapOne waits for the main child alone: its stops, then its end.
func reapOne(pid int, out chan<- waitResult) {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			// Only when something else in this process reaped it.
			out <- waitResult{err: err}
			return
		}
		if ws.Stopped() {
			out <- waitResult{status: ws, stopped: true}
			continue
		}
		out <- waitResult{status: ws}
		return
	}
}

// reapAll is the subreaper's single wait4(-1) loop: it hands the main
// child's statuses over and discards every other child's, so orphans leave
// no zombie and the main child's status is never lost. It runs until
// lcwrap has no child left.
func reapAll(pid int, out chan<- waitResult) {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, syscall.WUNTRACED, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		if got != pid {
			continue
		}
		out <- waitResult{status: ws, stopped: ws.Stopped()}
	}
}

// sharedReaper is the subreaper's single wait4(-1) loop for all the
// attempts of one Run. One loop per attempt would not do: an earlier
// attempt's loop runs on while orphans live and could take a later
// child's status. The loop hands the registered child's statuses over
// and discards every other child's; it ends when lcwrap has no child left
// and none is registered, and register starts it again.
type sharedReaper struct {
	mu      sync.Mutex
	running bool
	pid     int // the registered child (0: none)
	out     chan<- waitResult
	early   map[int]waitResult // statuses reaped while no child was registered
}

// register hands pid's statuses to out from now on, including one reaped
// between its start and this call.
func (r *sharedReaper) register(pid int, out chan<- waitResult) {
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

func (r *sharedReaper) loop() {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, syscall.WUNTRACED, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		r.mu.Lock()
		switch {
		case err != nil && r.pid == 0:
			r.running = false
			r.mu.Unlock()
			return
		case err != nil && syscall.Kill(r.pid, 0) == syscall.ESRCH:
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
func (r *sharedReaper) deliver(w waitResult) {
	r.out <- w
	if !w.stopped {
		r.pid, r.out = 0, nil
	}
}
