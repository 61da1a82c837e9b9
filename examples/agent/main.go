// Command agent is a stand-in for an interactive coding agent, for
// running under lcwrap:
//
//	lcwrap --notify --activity output -- ./agent
//
// It speaks systemd's sd_notify protocol with a client of its own (no
// libsystemd, no go-systemd): STATUS= lines as it works, READY=1 once it
// has read its task, LCWRAP_STATE=waiting while it waits for input on
// stdin and LCWRAP_STATE=running once it has it, WATCHDOG=1 pings, and
// STOPPING=1 at the end. Without NOTIFY_SOCKET it runs the same and
// says nothing.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	step := fs.Duration("step", time.Second, "how long each step of the work takes")
	ping := fs.Duration("ping", 5*time.Second, "WATCHDOG=1 interval when WATCHDOG_USEC is not set")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	n := notifier{socket: os.Getenv("NOTIFY_SOCKET")}
	stop := n.pinger(*ping)
	defer stop()

	n.send("STATUS=reading the task")
	time.Sleep(*step)
	n.send("READY=1", "STATUS=planning")
	say("planning the change")
	time.Sleep(*step)
	for _, s := range []string{"editing main.go", "running the tests"} {
		n.send("STATUS=" + s)
		say(s)
		time.Sleep(*step)
	}

	n.send("STATUS=waiting for approval", "LCWRAP_STATE=waiting")
	say("apply the change? [y/n]")
	answer, err := bufio.NewReader(os.Stdin).ReadString('\n')
	answer = strings.TrimSpace(answer)
	n.send("LCWRAP_STATE=running", "STATUS=got "+strconv.Quote(answer))
	if err != nil && answer == "" {
		say("no answer: stopping")
		n.send("STOPPING=1")
		return 1
	}
	if answer != "y" {
		say("not applying the change")
		n.send("STOPPING=1")
		return 1
	}
	n.send("STATUS=applying the change")
	say("applying the change")
	time.Sleep(*step)
	n.send("STOPPING=1", "STATUS=done")
	say("done")
	return 0
}

// say prints one line of the agent's output.
func say(s string) { fmt.Println("agent:", s) }

// notifier sends sd_notify datagrams to socket (NOTIFY_SOCKET): a path,
// or a name in Linux's abstract namespace when it starts with '@'.
type notifier struct{ socket string }

// send sends the assignments as one datagram. Its outcomes, as
// sd_notify(3) has them: nothing to do without a socket, the datagram
// sent, or an error (reported on stderr once and then ignored: the work
// goes on whether anybody listens or not).
func (n *notifier) send(assignments ...string) {
	if n.socket == "" {
		return
	}
	if err := notify(n.socket, strings.Join(assignments, "\n")); err != nil {
		fmt.Fprintln(os.Stderr, "agent: sd_notify:", err)
		n.socket = ""
	}
}

// notify writes one datagram to the unix datagram socket named by
// socket.
func notify(socket, state string) error {
	addr, err := notifyAddr(socket)
	if err != nil {
		return err
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	syscall.CloseOnExec(fd)
	return syscall.Sendto(fd, []byte(state), 0, addr)
}

// notifyAddr is the address NOTIFY_SOCKET names: an absolute path, or
// '@' and a name in the abstract namespace (the kernel's form starts
// with a NUL byte; Go's SockaddrUnix writes one for a leading '@').
func notifyAddr(socket string) (*syscall.SockaddrUnix, error) {
	switch {
	case strings.HasPrefix(socket, "/"), strings.HasPrefix(socket, "@") && len(socket) > 1:
		return &syscall.SockaddrUnix{Name: socket}, nil
	}
	return nil, errors.New("NOTIFY_SOCKET must be an absolute path or start with '@': " + strconv.Quote(socket))
}

// pinger sends WATCHDOG=1 at half of WATCHDOG_USEC (sd_watchdog_enabled(3)
// asks for pings more often than that), or every fallback when it is not
// set, until the returned stop is called.
func (n *notifier) pinger(fallback time.Duration) (stop func()) {
	every := fallback
	if us, err := strconv.ParseInt(os.Getenv("WATCHDOG_USEC"), 10, 64); err == nil && us > 0 {
		every = time.Duration(us) * time.Microsecond / 2
	}
	if n.socket == "" || every <= 0 {
		return func() {}
	}
	socket := n.socket // the pinger's own copy: send may clear n.socket
	t := time.NewTicker(every)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-t.C:
				notify(socket, "WATCHDOG=1")
			case <-done:
				return
			}
		}
	}()
	return func() { t.Stop(); close(done) }
}
