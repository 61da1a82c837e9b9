package agent

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/hookhttp"
)

// Environment of a run lcwrap launched with its hooks: where a command
// hook relays a payload to, and the token every hook must carry. (Claude
// Code's integration uses the same names.)
const (
	EnvHookURL   = "LCWRAP_HOOK_URL"
	EnvHookToken = "LCWRAP_HOOK_TOKEN"
)

// HookServer is the wrapper's end of a run's hooks: a hookhttp server on
// 127.0.0.1 with a per-run token, whose payloads are normalized and
// applied to a Tracker in the order they arrived, on a goroutine of its
// own: a hook is answered as soon as its payload is queued.
type HookServer struct {
	// URL is where the hooks post (http://127.0.0.1:PORT/hook); Token is
	// the run's token.
	URL, Token string
	// Addr is the server's host:port.
	Addr string

	srv  *hookhttp.Server
	c    chan []byte
	done chan struct{}
	once sync.Once

	mu       sync.Mutex
	rejected map[string]int
}

// StartHookServer listens on 127.0.0.1 (a free port) for t's payloads,
// each made an Outcome by normalize (called for one payload at a time, in
// the order they arrived). extra are further routes of the same server
// and token (an agent's OTLP logs at OTLPLogsPath).
func StartHookServer(t *Tracker, normalize func([]byte) Outcome, extra ...hookhttp.Routes) (*HookServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("cannot listen for hooks on 127.0.0.1: %w", err)
	}
	token := make([]byte, 16)
	rand.Read(token)
	h := &HookServer{Token: hex.EncodeToString(token), c: make(chan []byte, 1024), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for b := range h.c {
			t.Apply(normalize(b))
		}
	}()
	routes := hookhttp.Routes{hookhttp.HookPath: h.put}
	for _, r := range extra {
		maps.Copy(routes, r)
	}
	h.srv = hookhttp.ServeRoutes(ln, h.Token, routes, h.reject)
	h.Addr = h.srv.Addr()
	h.URL = "http://" + h.Addr + hookhttp.HookPath
	return h, nil
}

// Env is the environment a relaying command hook needs.
func (h *HookServer) Env() []string {
	return []string{EnvHookURL + "=" + h.URL, EnvHookToken + "=" + h.Token}
}

func (h *HookServer) put(b []byte) { h.c <- b }

func (h *HookServer) reject(reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rejected == nil {
		h.rejected = map[string]int{}
	}
	h.rejected[reason]++
}

// Close stops the server (requests being read get a moment to finish) and
// returns once every payload taken is applied. Later calls do nothing.
func (h *HookServer) Close() {
	h.once.Do(func() {
		h.srv.Close(2 * time.Second)
		close(h.c)
		<-h.done
	})
}

// Report adds the refused hook requests, if any, to the terminal event.
func (h *HookServer) Report(term *event.Terminal) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.rejected) > 0 {
		term.Extra.Set(KeyHookRequestsRejected, IntMap(maps.Clone(h.rejected)))
	}
}

// MaxHookPayload bounds the bytes of one relayed hook payload.
const MaxHookPayload = 1 << 20

// RelayHook is a command hook's call under the lcwrap that launched the
// agent: with relay, the payload on in is handed to $LCWRAP_HOOK_URL;
// without, nothing is recorded (that lcwrap owns the events). handled is
// false when no lcwrap launched the agent (no $LCWRAP_HOOK_URL and no
// relay asked): the caller records the payload itself (raw). It returns
// what it could not do, as lines for stderr. wrap, when not nil, makes
// the body relayed from the payload.
func RelayHook(in io.Reader, relay bool, wait time.Duration, wrap func([]byte) []byte) (raw []byte, handled bool, warnings []string) {
	raw, err := io.ReadAll(io.LimitReader(in, MaxHookPayload+1))
	io.Copy(io.Discard, in) // the agent never writes into a closed pipe
	if err != nil {
		return nil, true, []string{fmt.Sprintf("cannot read the payload: %v", err)}
	}
	url := os.Getenv(EnvHookURL)
	switch {
	case relay:
		if url == "" {
			return raw, true, []string{"--relay without $" + EnvHookURL + ": nowhere to relay to; not recorded"}
		}
		body := raw
		if wrap != nil {
			body = wrap(raw)
		}
		if err := hookhttp.Post(url, os.Getenv(EnvHookToken), body, wait*4); err != nil {
			return raw, true, []string{fmt.Sprintf("the launching lcwrap did not take the payload; not recorded: %v", err)}
		}
		return raw, true, nil
	case url != "":
		return raw, true, nil // the lcwrap that launched the agent owns its events
	}
	return raw, false, nil
}
