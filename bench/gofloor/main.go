// Command gofloor is the start-up floor of any Go wrapper, for the
// start-up benchmark: it subscribes the six signals lcwrap forwards,
// starts its arguments in a process group of their own, waits for them
// and exits with their code. Nothing else: no flags, no events, no
// journal. "gofloor -append FILE" is the floor of any Go appender, for
// the emit loop: it appends one line to FILE under flock(2). "gofloor
// -drain" reads its standard input to the end and exits 0: the floor of
// any command hook written in Go, for bench/hook.sh.
//
// Built with -tags nethttp (or hookhttp) it also links net/http's server
// (or lcwrap's own hook server) and starts none: the start-up cost of
// linking one, for bench/linkcost.sh. "gofloor -serve" starts it.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2)
	args := os.Args[1:]
	if len(args) == 0 {
		os.Exit(125)
	}
	if args[0] == "-drain" {
		os.Exit(drain())
	}
	if args[0] == "-append" && len(args) == 2 {
		os.Exit(appendLine(args[1]))
	}
	if args[0] == "-serve" && serve != nil {
		serve()
		os.Exit(0)
	}
	pid, err := syscall.ForkExec(args[0], args, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		os.Exit(127)
	}
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	os.Exit(ws.ExitStatus())
}

// serve starts the linked server (set by a tagged file; nil untagged).
var serve func()

func appendLine(name string) int {
	fd, err := syscall.Open(name, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return 1
	}
	defer syscall.Close(fd)
	if syscall.Flock(fd, syscall.LOCK_EX) != nil {
		return 1
	}
	if _, err := syscall.Write(fd, []byte(`{"kind":"heartbeat"}`+"\n")); err != nil {
		return 1
	}
	return 0
}

func drain() int {
	var buf [4096]byte
	for {
		n, err := syscall.Read(0, buf[:])
		if n <= 0 || err != nil {
			return 0
		}
	}
}
