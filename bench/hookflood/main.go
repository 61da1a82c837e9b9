// Command hookflood measures the hook server under a connection flood
// (issue 23 item 3): hooks recorded per second over new connections, with
// no idle connection open and then with -idle connections that never send
// a request. It is a benchmark, not part of lcwrap.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/internal/hookhttp"
)

// holder, in a child process (HOOKFLOOD_HOLD=ADDR N), opens N idle
// connections to ADDR, says "ready", and keeps them until its stdin ends:
// the flood's descriptors are its own, not the measuring process's.
func holder(spec string) {
	var addr string
	var n int
	fmt.Sscan(spec, &addr, &n)
	var conns []net.Conn
	for len(conns) < n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "hookflood: holder: %d connections opened, then: %v\n", len(conns), err)
			break
		}
		conns = append(conns, c)
	}
	fmt.Printf("ready %d\n", len(conns))
	bufio.NewReader(os.Stdin).ReadString('\n')
}

func main() {
	if spec := os.Getenv("HOOKFLOOD_HOLD"); spec != "" {
		holder(spec)
		return
	}
	idle := flag.Int("idle", 20000, "idle connections to open before the second measurement")
	dur := flag.Duration("d", 2*time.Second, "how long each measurement posts hooks")
	flag.Parse()
	// The idle connections are this process's descriptors (the server
	// holds at most hookhttp.MaxConns of its side): raise the soft limit
	// to the hard one.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			fmt.Fprintln(os.Stderr, "hookflood: raising the open-file limit:", err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hookflood:", err)
		os.Exit(1)
	}
	var recorded, rejected atomic.Int64
	s := hookhttp.Serve(ln, "tok", func([]byte) { recorded.Add(1) }, func(string) { rejected.Add(1) })
	defer s.Close(time.Second)
	addr := s.Addr()

	rate := func() float64 {
		start, n0 := time.Now(), recorded.Load()
		for time.Since(start) < *dur {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				continue
			}
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\n%s: tok\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", hookhttp.HookPath, hookhttp.TokenHeader)
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if !strings.Contains(line, "200") {
				fmt.Fprintf(os.Stderr, "hookflood: answered %q\n", line)
			}
		}
		return float64(recorded.Load()-n0) / time.Since(start).Seconds()
	}
	base := rate()
	// The idle connections come from child processes of 10,000 each.
	opened := 0
	var holders []*exec.Cmd
	for left := *idle; left > 0; left -= 10000 {
		h := exec.Command(os.Args[0])
		h.Env = append(os.Environ(), fmt.Sprintf("HOOKFLOOD_HOLD=%s %d", addr, min(left, 10000)))
		h.Stderr = os.Stderr
		in, _ := h.StdinPipe()
		out, _ := h.StdoutPipe()
		if err := h.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "hookflood:", err)
			break
		}
		holders = append(holders, h)
		defer func() { in.Close(); h.Wait() }()
		var n int
		fmt.Fscanf(bufio.NewReader(out), "ready %d\n", &n)
		opened += n
	}
	flood := rate()
	fmt.Printf("hooks recorded per second over new connections: %.0f with no idle connection, %.0f with %d idle connections open (%d connections refused or closed by the server, counted)\n",
		base, flood, opened, rejected.Load())
}
