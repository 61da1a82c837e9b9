package opencode

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
)

// Why a server cannot be found or followed.
var (
	ErrNoServer    = errors.New("no loopback socket it holds is listening")
	ErrAmbiguous   = errors.New("it holds more than one listening loopback socket and its command line names none of them (--port)")
	ErrGone        = errors.New("the process is gone")
	ErrUnsupported = errors.New("open sockets cannot be inspected on this system")
	ErrNotOpencode = errors.New("what answers there is not opencode's /event (its first event is not server.connected)")
)

// ClaimServerGone is the claim of an adopted server's lost: it stopped
// listening, or its process ended; how it ended is unknown.
const ClaimServerGone = "server-gone"

// ServerLimits is what an adopted server's stream can never say, in its
// child's created event.
const ServerLimits = "opencode's own /event stream, from the moment lcwrap connected: its sessions and what they do from then on (sessions quiet since are not seen), server.heartbeat as its liveness; not its history, not who answered a permission, nothing while lcwrap was not connected, no cancel authority"

// heartbeatMs is server.heartbeat's interval as measured with 1.18.33.
const heartbeatMs = 10_000

// serverProfile: the stream's heartbeat is known (server.heartbeat); the
// rest is not.
var serverProfile = event.Profile{Name: "opencode-server",
	Set: event.Capabilities{History: event.Unknown, Heartbeat: event.Known, Snapshot: event.Unknown, Cancel: event.Unknown, TerminalCause: event.Unknown},
	Why: "heartbeat: opencode's server sends server.heartbeat on /event every 10 s (measured with 1.18.33)"}

// readyWait bounds the wait for a server's first event when adopting by
// URL: the answer's head (headTimeout) and server.connected after it.
const readyWait = headTimeout + 5*time.Second

// Adopt implements agent.Driver. A running server named by its URL
// (agent.ServerTarget: http://127.0.0.1:PORT or http://[::1]:PORT;
// localhost is read as 127.0.0.1) is followed once its /event answers
// with server.connected: the server becomes a child of its own (its
// server.heartbeat that child's heartbeat), its sessions children of it,
// read from /event until it stops listening. A process (agent.PIDTarget)
// named opencode (or any, with --agent opencode) is followed once a
// listening loopback socket it or a descendant holds proves which server
// is its (FindServer); until then the adoption stays at the process.
// Other shapes: an *agent.UnsupportedError.
func (Driver) Adopt(ctx context.Context, req agent.AdoptRequest) (agent.Adoption, error) {
	switch t := req.Target.(type) {
	case agent.ServerTarget:
		addr, err := LoopbackAddr(t.URL)
		if err != nil {
			return nil, err
		}
		return adoptServer(ctx, req, addr, t.Lineage)
	case agent.PIDTarget:
		if !t.Named && t.Name != "opencode" {
			return nil, agent.ErrNotAgent
		}
		return adoptPID(req, t), nil
	}
	return nil, agent.NotSupported(Source, req.Target)
}

// LoopbackAddr reads a server URL a user gave: http, a loopback host, an
// explicit port, no path, user or query. It returns host:port.
func LoopbackAddr(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("not a URL: %v", err)
	}
	if u.Scheme != "http" {
		return "", fmt.Errorf("%s: lcwrap reads an opencode server on loopback over plain http (give http://127.0.0.1:PORT)", u.Scheme)
	}
	if u.User != nil {
		return "", errors.New("a password in the URL is not sent: lcwrap follows servers without one (OPENCODE_SERVER_PASSWORD unset)")
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("give the server's address only (http://127.0.0.1:PORT): lcwrap reads its /event")
	}
	host, port := u.Hostname(), u.Port()
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return "", errors.New("name the server's port (http://127.0.0.1:PORT; opencode serve --port says it)")
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !a.IsLoopback() {
		return "", fmt.Errorf("%s is not a loopback address: lcwrap follows an opencode server on this machine's loopback only", host)
	}
	return netip.AddrPortFrom(a, uint16(p)).String(), nil
}

// serverAdoption is one server followed: its child, its sessions'
// tracker and the follower of its /event.
type serverAdoption struct {
	req     agent.AdoptRequest
	server  *emit.Child
	tracker *agent.Tracker
	follow  *Follower
	cancel  context.CancelFunc
	done    chan struct{} // closed when the follower returned
	gone    string        // why the server is gone ("": not known to be)
	once    sync.Once
}

// start records the server's child (parent: lineage's) and follows its
// /event at addr; ready gets the first connection's verdict.
func startServer(req agent.AdoptRequest, addr string, lineage event.Lineage, proof *ServerProof, untilRefused bool) (*serverAdoption, <-chan error) {
	id := emit.NewChildID("opencode-server")
	lineage.External = true
	lineage.AdoptedAt = event.Timestamp(req.Emitter.Now())
	em := req.Emitter.WithSource(Source)
	a := &serverAdoption{req: req, server: em.Child(id, lineage, serverProfile), done: make(chan struct{})}
	a.tracker = agent.New(agent.Config{Source: Source, Prefix: ChildPrefix, Limits: ServerLimits, Emitter: em,
		Parent: id, Root: cmp.Or(a.server.Lineage().RootChildID, id), External: true, RunTag: agent.RunTag(id)})
	ready := make(chan error, 1)
	tell := func(err error) {
		select {
		case ready <- err:
		default: // told already
		}
	}
	created := false
	a.follow = &Follower{URL: "http://" + addr, Tracker: a.tracker, UntilRefused: untilRefused,
		OnConnect: func(n int64, first []byte) bool {
			if !isConnected(first) {
				if !created {
					tell(ErrNotOpencode)
				}
				return false
			}
			if !created {
				created = true
				a.server.Emit(emit.Spec{Kind: event.KindCreated, State: event.StateCreated, Details: ServerCreated{
					Agent: Source, URL: "http://" + addr, Observation: "server-stream", HeartbeatIntervalMs: heartbeatMs, Proof: proof, Limits: ServerLimits}})
				tell(nil)
				return true
			}
			a.server.Emit(emit.Spec{Kind: event.KindDiagnostic, Details: ServerNote{Observation: "reconnected",
				Reason: fmt.Sprintf("the stream was opened again (connection %d): what the server published meanwhile is not seen", n)}})
			return true
		},
		OnBeat: func() {
			a.server.Emit(emit.Spec{Kind: event.KindHeartbeat, Details: ServerNote{From: "opencode server.heartbeat"}})
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	go func() {
		defer close(a.done)
		a.gone = a.follow.Run(ctx)
		if !created {
			tell(fmt.Errorf("no opencode server answers at http://%s: %s", addr, cmp.Or(a.gone, "stopped")))
		}
	}()
	return a, ready
}

// isConnected reports whether an event is opencode's server.connected.
func isConnected(d []byte) bool {
	var e busEvent
	return jsonObject(d, &e) && e.Type == "server.connected"
}

// adoptServer follows the server at addr (by its URL).
func adoptServer(ctx context.Context, req agent.AdoptRequest, addr string, lineage event.Lineage) (agent.Adoption, error) {
	a, ready := startServer(req, addr, lineage, nil, true)
	var err error
	select {
	case err = <-ready:
	case <-time.After(readyWait):
		err = fmt.Errorf("http://%s answered no event within %v", addr, readyWait)
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	if err != nil {
		a.cancel()
		<-a.done
		return nil, err
	}
	req.Sayf("following opencode's server as %s: its sessions from now on, until it stops listening; ^C to stop", a.server.ID())
	return a, nil
}

// Done implements agent.Adoption: closed when the server stopped
// listening.
func (a *serverAdoption) Done() <-chan struct{} { return a.done }

// End implements agent.Adoption.
func (a *serverAdoption) End(gone bool) { a.end(gone, "") }

// end stops following; with the server gone (why: how lcwrap knows) its
// open sessions and itself end lost.
func (a *serverAdoption) end(gone bool, why string) {
	a.once.Do(func() {
		a.cancel()
		<-a.done
		if !gone {
			a.server.Emit(emit.Spec{Kind: event.KindDiagnostic, Details: ServerNote{Observation: "ended", State: "unknown",
				Reason: "observation stopped; the server's state and its sessions' are unknown from now on"}})
			return
		}
		a.tracker.End(agent.ProcessEnd{ChildID: a.server.ID(), Adopted: true})
		term := event.Terminal{Claim: ClaimServerGone, Observation: "server-stream", Check: cmp.Or(why, a.gone, "the server is gone")}
		// opencode's own figures for the messages it published while
		// followed: its report, not lcwrap's.
		event.SetPtr(&term.Extra, agent.KeyAgentReport, a.follow.Mapper.Report("/event since adoption"))
		a.server.Emit(emit.Spec{Kind: event.KindTerminal, State: event.StateLost, Details: term})
	})
}

// pidAdoption is an adopted process whose server is looked for until
// found, then followed under the process's child.
type pidAdoption struct {
	req    agent.AdoptRequest
	target agent.PIDTarget
	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	server *serverAdoption
	once   sync.Once
}

// provePoll is how often an adopted process's sockets are first looked
// at until its server listens; the wait doubles up to provePollMax (a
// look reads the process table).
const (
	provePoll    = 200 * time.Millisecond
	provePollMax = 5 * time.Second
)

func adoptPID(req agent.AdoptRequest, t agent.PIDTarget) *pidAdoption {
	a := &pidAdoption{req: req, target: t, stop: make(chan struct{}), done: make(chan struct{})}
	go a.prove()
	return a
}

// prove looks for the process's server until it is found, the process is
// gone or observation stops; then follows it.
func (a *pidAdoption) prove() {
	defer close(a.done)
	port := 0
	if p, err := strconv.Atoi(Inspect(a.target.Argv[min(1, len(a.target.Argv)):]).Port); err == nil {
		port = p
	}
	said, wait := false, provePoll
	for {
		proof, addr, err := FindServer(a.target.Identity, port)
		if err == nil {
			lin := a.target.Child.Lineage()
			s, ready := startServer(a.req, addr, event.Lineage{ParentChildID: a.target.Child.ID(), RootChildID: cmp.Or(lin.RootChildID, a.target.Child.ID())}, proof, false)
			var rerr error
			select {
			case rerr = <-ready:
			case <-a.stop:
				s.cancel()
				<-s.done
				return
			}
			if rerr == nil {
				a.mu.Lock()
				a.server = s
				a.mu.Unlock()
				a.req.Sayf("its server listens on %s (a socket pid %d holds): following its /event as %s", addr, proof.Holder.PID, s.server.ID())
				return
			}
			s.cancel()
			<-s.done
			err = rerr
		}
		if errors.Is(err, ErrGone) || errors.Is(err, ErrUnsupported) || errors.Is(err, ErrNotOpencode) {
			a.req.Sayf("opencode, but its server cannot be followed (%v); observing its presence only", err)
			return
		}
		if !said {
			said = true
			a.req.Sayf("opencode, but %v yet; looking again until it listens", err)
		}
		select {
		case <-a.stop:
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, provePollMax)
	}
}

// Done implements agent.Adoption: the caller watches the process.
func (a *pidAdoption) Done() <-chan struct{} { return nil }

// End implements agent.Adoption.
func (a *pidAdoption) End(gone bool) {
	a.once.Do(func() {
		close(a.stop)
		<-a.done
		a.mu.Lock()
		s := a.server
		a.mu.Unlock()
		if s != nil {
			s.end(gone, "the adopted process is gone")
		}
	})
}
