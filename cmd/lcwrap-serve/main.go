// Command lcwrap-serve is `lcwrap serve`: the lifecycle API over HTTP and
// the live page (internal/serve). `lcwrap serve` runs it (it is looked
// for beside lcwrap, then in $PATH); it is a program of its own so that
// net/http's server never costs `lcwrap -- CMD` its start-up
// (docs/design.md, "A second binary").
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/internal/fleet"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/serve"
)

// Exit codes, as lcwrap's own.
const (
	exitFailed = 1
	exitUsage  = 125
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

type hostList []string

func (h *hostList) String() string     { return strings.Join(*h, ",") }
func (h *hostList) Set(v string) error { *h = append(*h, v); return nil }

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("lcwrap serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	path := fs.String("journal", "", "the journal (default: $LCWRAP_JOURNAL, else the state directory's)")
	fleetPath := fs.String("fleet", "", "a gateway Collector's OTLP-JSON output, served instead of a journal")
	silent := fs.Duration("silent-after", fleet.DefaultSilentAfter, "with --fleet: a host unheard this long is silent")
	listen := fs.String("listen", serve.DefaultListen, "HOST:PORT or a unix socket path")
	tokenFile := fs.String("token-file", "", "the token file (default: serve.token in the state directory)")
	cert := fs.String("tls-cert", "", "TLS certificate file")
	key := fs.String("tls-key", "", "TLS key file")
	readOnly := fs.Bool("read-only", false, "refuse cancel")
	maxStreams := fs.Int("max-streams", serve.DefaultMaxStreams, "event streams open at once")
	stall := fs.Duration("stream-stall", serve.DefaultStreamStall, "a stream whose client takes no write for this long is cut off")
	keepAlive := fs.Duration("keep-alive", serve.DefaultKeepAlive, "a quiet stream's comment interval")
	var hosts hostList
	fs.Var(&hosts, "allow-host", "another accepted Host header value (repeatable)")
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lcwrap: "+format+" (see 'lcwrap serve --help')\n", a...)
		return exitUsage
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "lcwrap-serve is run by 'lcwrap serve': see 'lcwrap serve --help' and docs/serve.md")
			return 0
		}
		return usage("%v", err)
	}
	switch {
	case fs.NArg() > 0:
		return usage("serve takes no arguments, not %q", fs.Arg(0))
	case *path != "" && *fleetPath != "":
		return usage("--fleet and --journal name two inputs; choose one")
	case (*cert == "") != (*key == ""):
		return usage("--tls-cert and --tls-key go together")
	case *maxStreams < 1:
		return usage("--max-streams must be 1 or more, not %d", *maxStreams)
	case *silent <= 0:
		return usage("--silent-after must be positive, not %s", *silent)
	case *stall <= 0 || *keepAlive <= 0:
		return usage("--stream-stall and --keep-alive must be positive")
	}
	if *path == "" && *fleetPath == "" {
		p, err := journal.DefaultPath()
		if err != nil {
			fmt.Fprintf(stderr, "lcwrap: %v\n", err)
			return exitFailed
		}
		*path = p
	}
	if *tokenFile == "" {
		p, err := serve.DefaultTokenFile()
		if err != nil {
			fmt.Fprintf(stderr, "lcwrap: %v\n", err)
			return exitFailed
		}
		*tokenFile = p
	}
	token, created, err := serve.Token(*tokenFile)
	if err != nil {
		fmt.Fprintf(stderr, "lcwrap: serve: %v\n", err)
		return exitFailed
	}
	if created {
		fmt.Fprintf(stderr, "lcwrap: serve: made the token file %s (mode 0600)\n", *tokenFile)
	}
	var tlsCert *[2]string
	if *cert != "" {
		tlsCert = &[2]string{*cert, *key}
		if _, err := loadPair(*cert, *key); err != nil {
			fmt.Fprintf(stderr, "lcwrap: serve: --tls-cert/--tls-key: %v\n", err)
			return exitFailed
		}
	}
	if !serve.IsUnix(*listen) {
		if h, _, err := net.SplitHostPort(*listen); err == nil {
			if ip := net.ParseIP(h); (h == "" || ip != nil && ip.IsUnspecified()) && len(hosts) == 0 {
				return usage("--listen %s answers on every address: name the host clients use with --allow-host NAME:PORT (the Host header is checked against it)", *listen)
			}
		}
	}
	l, loopback, err := serve.Listen(*listen)
	if err != nil {
		fmt.Fprintf(stderr, "lcwrap: serve: cannot listen on %s: %v\n", *listen, err)
		return exitFailed
	}
	if serve.IsUnix(*listen) {
		defer os.Remove(*listen)
	}
	if !loopback {
		if tlsCert == nil {
			fmt.Fprintf(stderr, "lcwrap: serve: warning: %s is reachable from other hosts and this server speaks plain HTTP: the token travels in clear text; put a TLS front before it, or give --tls-cert and --tls-key\n", l.Addr())
		} else {
			fmt.Fprintf(stderr, "lcwrap: serve: note: %s is reachable from other hosts (TLS)\n", l.Addr())
		}
	}
	cfg := serve.Config{Journal: *path, Fleet: *fleetPath, SilentAfter: *silent, Token: token, ReadOnly: *readOnly,
		Hosts: serve.Hosts(l.Addr(), hosts), TLS: tlsCert != nil, MaxStreams: *maxStreams, StreamStall: *stall, KeepAlive: *keepAlive, Log: stderr}
	if *fleetPath != "" {
		cfg.Journal = ""
	}
	s, err := serve.New(cfg)
	if err != nil {
		l.Close()
		fmt.Fprintf(stderr, "lcwrap: serve: %v\n", err)
		return exitFailed
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go s.Run(ctx)
	srv := serve.HTTPServer(s, stderr)
	srv.BaseContext = func(net.Listener) context.Context { return ctx }
	scheme := "http"
	if tlsCert != nil {
		scheme = "https"
	}
	what := *path
	if *fleetPath != "" {
		what = "the fleet at " + *fleetPath
	}
	if serve.IsUnix(*listen) {
		fmt.Fprintf(stderr, "lcwrap: serve: serving %s on the unix socket %s (token in %s)\n", what, *listen, *tokenFile)
	} else {
		base := fmt.Sprintf("%s://%s/", scheme, l.Addr())
		fmt.Fprintf(stderr, "lcwrap: serve: serving %s on %s (token in %s; the page: %s#token=TOKEN)\n", what, base, *tokenFile, base)
	}
	errc := make(chan error, 1)
	go func() {
		if tlsCert != nil {
			errc <- srv.ServeTLS(l, tlsCert[0], tlsCert[1])
		} else {
			errc <- srv.Serve(l)
		}
	}()
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "lcwrap: serve: %v\n", err)
		return exitFailed
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "lcwrap: serve: %v\n", err)
		return exitFailed
	}
	return 0
}
