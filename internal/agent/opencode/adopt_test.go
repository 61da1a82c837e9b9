package opencode

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/eventcap"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

func TestLoopbackAddr(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:4096":  "127.0.0.1:4096",
		"http://localhost:4096/": "127.0.0.1:4096",
		"http://[::1]:4096":      "[::1]:4096",
		"http://127.0.0.2:80":    "127.0.0.2:80",
	} {
		if got, err := LoopbackAddr(in); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
	for in, says := range map[string]string{
		"https://127.0.0.1:4096":         "plain http",
		"http://10.0.0.1:4096":           "not a loopback",
		"http://example.com:4096":        "not a loopback",
		"http://127.0.0.1":               "port",
		"http://127.0.0.1:0":             "port",
		"http://127.0.0.1:4096/event":    "address only",
		"http://u:secret@127.0.0.1:4096": "password",
		"http://127.0.0.1:99999":         "port",
	} {
		if _, err := LoopbackAddr(in); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v, want it to say %q", in, err, says)
		}
	}
}

func TestParseListeners(t *testing.T) {
	tcp := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: 0100007F:1000 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0 100 0 0 10 0\n" +
		"   1: 0100007F:1001 0100007F:9999 01 00000000:00000000 00:00000000 00000000     0        0 112 1 0 100 0 0 10 0\n" +
		"   2: 00000000:1002 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 113 1 0 100 0 0 10 0\n" +
		"   3: 0101A8C0:1003 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 114 1 0 100 0 0 10 0\n" +
		"   4: garbage\n"
	tcp6 := "   0: 00000000000000000000000001000000:1004 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 115 1\n"
	got := append(ParseListeners([]byte(tcp)), ParseListeners([]byte(tcp6))...)
	var lines []string
	for _, l := range got {
		lines = append(lines, l.Addr.String()+" "+l.dialAddr())
	}
	// (the kernel's host byte order: these are little-endian's)
	want := "127.0.0.1:4096 127.0.0.1:4096|0.0.0.0:4098 127.0.0.1:4098|192.168.1.1:4099 |[::1]:4100 [::1]:4100"
	if s := strings.Join(lines, "|"); s != want {
		t.Errorf("listeners %s\nwant %s", s, want)
	}
}

// FuzzListeners: any text, never a panic, and every listener read has an
// address and an inode.
func FuzzListeners(f *testing.F) {
	f.Add([]byte("   0: 0100007F:1000 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1\n"))
	f.Add([]byte("   0: 00000000000000000000000001000000:1004 00000000000000000000000000000000:0000 0A 0 0 0 0 0 115\n"))
	if b, err := os.ReadFile("/proc/net/tcp"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, l := range ParseListeners(b) {
			if !l.Addr.IsValid() || l.Inode == 0 {
				t.Fatalf("%+v", l)
			}
			l.dialAddr()
		}
	})
}

// TestFindServer: this test process listens on loopback; FindServer
// proves that socket is its own, and picks the port named among several.
func TestFindServer(t *testing.T) {
	id, _, err := event.IdentityOf(event.System, os.Getpid())
	if err != nil {
		t.Skip(err)
	}
	if _, _, err := FindServer(id, 0); err != nil && errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	a, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	p, dial, err := FindServer(id, 0)
	if err != nil || dial != a.Addr().String() || p.Holder.PID != os.Getpid() || len(p.Chain) != 1 || p.Evidence != "listening-socket-held" {
		t.Fatalf("one listener: %+v %q %v", p, dial, err)
	}
	b, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, _, err := FindServer(id, 0); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("two listeners, no port named: %v", err)
	}
	port := b.Addr().(*net.TCPAddr).Port
	if p, dial, err := FindServer(id, port); err != nil || p.Port != port || dial != b.Addr().String() {
		t.Errorf("the port named: %+v %q %v", p, dial, err)
	}
	if _, _, err := FindServer(event.Identity{PID: id.PID, StartTime: id.StartTime + 1}, 0); !errors.Is(err, ErrGone) {
		t.Errorf("another start time: %v", err)
	}
}

// fakeServer serves body at /event to each connection, then closes it.
func fakeServer(t *testing.T, body string) (addr string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(body))
	})}
	go srv.Serve(ln)
	var once sync.Once
	stop = func() { once.Do(func() { srv.Close() }) }
	t.Cleanup(stop)
	return ln.Addr().String(), stop
}

func adoptReq(t *testing.T) (agent.AdoptRequest, *eventcap.Sink) {
	sink := &eventcap.Sink{}
	return agent.AdoptRequest{Emitter: emit.New(emit.Options{Source: "lcwrap"}, sink)}, sink
}

// TestAdoptServerFake: a server answering opencode's stream is adopted
// (its child, heartbeats, a session under it); the stream taken up again
// is said; when nothing listens any more the adoption is done and its
// end makes the session and the server lost. A server whose first event
// is not server.connected, or nothing listening, is refused and nothing
// is written.
func TestAdoptServerFake(t *testing.T) {
	stream := "data: {\"type\":\"server.connected\",\"properties\":{}}\n\n" +
		"data: {\"type\":\"server.heartbeat\",\"properties\":{}}\n\n" +
		"data: {\"type\":\"session.status\",\"properties\":{\"sessionID\":\"ses_1\",\"status\":{\"type\":\"busy\"}}}\n\n"
	addr, stop := fakeServer(t, stream)
	req, sink := adoptReq(t)
	a, err := Driver{}.Adopt(context.Background(), agent.AdoptRequest{Target: agent.ServerTarget{URL: "http://" + addr}, Emitter: req.Emitter})
	if err != nil {
		t.Fatal(err)
	}
	testtool.Eventually(t, "the stream taken up again", func() bool { return strings.Contains(sink.Summaries(), "diagnostic") })
	stop()
	select {
	case <-a.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("not done once nothing listens")
	}
	a.End(true)
	sink.Check(t)
	var server, session []string
	for _, ev := range sink.Events() {
		line := strings.TrimSpace(string(ev.Kind) + " " + string(ev.State))
		if strings.HasPrefix(ev.ChildID, "opencode-server-") {
			server = append(server, line)
			if ev.Kind == event.KindTerminal && !strings.Contains(string(ev.Details), `"agentReport":{"reportedBy":"opencode","via":"/event since adoption"}`) {
				t.Errorf("the server's end: %s", ev.Details)
			}
		} else {
			session = append(session, line)
			if !ev.Lineage.External || !strings.HasPrefix(ev.Lineage.ParentChildID, "opencode-server-") {
				t.Errorf("session lineage %+v", ev.Lineage)
			}
		}
	}
	if len(server) < 4 || server[0] != "created created" || server[1] != "heartbeat" || server[len(server)-1] != "terminal lost" {
		t.Errorf("server events %v", server)
	}
	if len(session) == 0 || session[len(session)-1] != "terminal lost" {
		t.Errorf("session events %v", session)
	}

	other, _ := fakeServer(t, "data: {\"hello\":1}\n\n")
	for _, u := range []string{"http://" + other, "http://" + addr} {
		req, sink := adoptReq(t)
		_, err := Driver{}.Adopt(context.Background(), agent.AdoptRequest{Target: agent.ServerTarget{URL: u}, Emitter: req.Emitter})
		if err == nil || len(sink.Events()) != 0 {
			t.Errorf("%s: %v, %d events", u, err, len(sink.Events()))
		}
	}
	if _, err := (Driver{}).Adopt(context.Background(), agent.AdoptRequest{Target: agent.RegistryTarget{}, Emitter: req.Emitter}); !errors.Is(err, agent.ErrNotSupported) {
		t.Errorf("registry: %v", err)
	}
}

// FuzzLoopbackAddr: any URL, never a panic; what is accepted is a
// loopback address with a port.
func FuzzLoopbackAddr(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:4096", "http://[::1]:1", "http://localhost:80/", "https://x", "http://%zz", "http://[::ffff:127.0.0.1]:5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		addr, err := LoopbackAddr(s)
		if err != nil {
			return
		}
		ap, perr := netip.ParseAddrPort(addr)
		if perr != nil || !ap.Addr().IsLoopback() || ap.Port() == 0 {
			t.Fatalf("%q accepted as %q", s, addr)
		}
	})
}

// TestAdoptServerStopped: observation stopped (^C) while the server still
// listens: a diagnostic says its state is unknown from now on; no
// terminal event, for it or its session.
func TestAdoptServerStopped(t *testing.T) {
	addr, _ := fakeServer(t, "data: {\"type\":\"server.connected\",\"properties\":{}}\n\n"+
		"data: {\"type\":\"session.status\",\"properties\":{\"sessionID\":\"ses_1\",\"status\":{\"type\":\"busy\"}}}\n\n")
	req, sink := adoptReq(t)
	a, err := Driver{}.Adopt(context.Background(), agent.AdoptRequest{Target: agent.ServerTarget{URL: "http://" + addr}, Emitter: req.Emitter})
	if err != nil {
		t.Fatal(err)
	}
	testtool.Eventually(t, "the session", func() bool { return strings.Contains(sink.Summaries(), "running") })
	a.End(false)
	sink.Check(t)
	evs := sink.Events()
	last := evs[len(evs)-1]
	for _, ev := range evs {
		if ev.Kind == event.KindTerminal {
			t.Errorf("a terminal event: %s %s", ev.ChildID, ev.Details)
		}
	}
	if !strings.HasPrefix(last.ChildID, "opencode-server-") || last.Kind != event.KindDiagnostic || !strings.Contains(string(last.Details), `"serverState":"unknown"`) {
		t.Errorf("last event %s %s %s", last.ChildID, last.Kind, last.Details)
	}
}
