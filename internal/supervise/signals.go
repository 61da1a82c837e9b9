package supervise

import (
	"os"
	"os/signal"
	"syscall"
)

// cancelSignals are cancel requests meant for the whole job; mainSignals
// go to the main child only.
var (
	cancelSignals = []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM}
	mainSignals   = []syscall.Signal{syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}
)

// signalBuffer is sized for bursts: signal.Notify drops what does not fit.
const signalBuffer = 64

// Signals is lcwrap's subscription to the signals it handles. Subscribe
// before starting the child and Stop only after the last event has been
// written: a signal that arrives in between is then held, not fatal.
type Signals struct {
	c       chan os.Signal
	ignored map[syscall.Signal]bool // cancel/main signals lcwrap inherited as ignored
	drop    chan os.Signal
	ready   chan struct{} // closed once every handler is installed
}

// Subscribe starts receiving the signals Run forwards (HUP, INT, TERM,
// QUIT, USR1, USR2) and, when lcwrap has a controlling terminal, SIGCONT
// (job control) and SIGWINCH (a Config.PTY follows the window size). It
// also takes over SIGPIPE (a closed stdout becomes a
// write error, not lcwrap's death) and every signal lcwrap inherited as
// ignored, dropping what arrives: an ignored disposition would survive
// exec, a handled one is reset to the default in the child. A forwarded
// signal that lcwrap inherited as ignored is dropped too: lcwrap was told
// to ignore it.
//
// Installing each handler is a round trip with the Go runtime's signal
// thread, so Subscribe does it in the background and returns at once; Run
// waits until it is done before it starts the child.
func Subscribe() *Signals {
	s := &Signals{
		c:       make(chan os.Signal, signalBuffer),
		ignored: map[syscall.Signal]bool{},
		drop:    make(chan os.Signal, 1), // never read: Notify drops when full
		ready:   make(chan struct{}),
	}
	go s.subscribe()
	return s
}

func (s *Signals) subscribe() {
	defer close(s.ready)
	ignored := inheritedIgnored()
	var handled []os.Signal
	for _, sig := range append(append([]syscall.Signal(nil), cancelSignals...), mainSignals...) {
		handled = append(handled, sig)
		if ignored[sig] {
			s.ignored[sig] = true
		}
		delete(ignored, sig)
	}
	// SIGCONT and SIGWINCH matter with a terminal only.
	if t := openTerminal(); t != nil {
		t.close()
		handled = append(handled, syscall.SIGCONT, syscall.SIGWINCH)
		delete(ignored, syscall.SIGCONT)
		delete(ignored, syscall.SIGWINCH)
	}
	signal.Notify(s.c, handled...)
	dropSignals(s.drop, ignored)
}

// dropSignals takes over SIGPIPE and every signal in ignored (ones lcwrap
// inherited as ignored and does not handle), sending what arrives to drop,
// which is never read. An ignored disposition would survive exec; a
// handled one is reset to the default in every child started afterwards.
func dropSignals(drop chan os.Signal, ignored map[syscall.Signal]bool) {
	dropped := []os.Signal{syscall.SIGPIPE}
	for sig := range ignored {
		dropped = append(dropped, sig)
	}
	signal.Notify(drop, dropped...)
}

// wait returns once every handler is installed.
func (s *Signals) wait() {
	if s.ready != nil {
		<-s.ready
	}
}

// Stop ends the subscription.
func (s *Signals) Stop() {
	if s.ready == nil {
		return
	}
	s.wait()
	signal.Stop(s.c)
	signal.Stop(s.drop)
}
