package serve

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/termtext"
	"github.com/lcwrap/lcwrap/internal/view/live"
)

// Defaults of Config's bounds.
const (
	DefaultMaxStreams   = 256
	DefaultKeepAlive    = 15 * time.Second
	DefaultStreamStall  = 10 * time.Second
	DefaultMaxBodyBytes = 16 << 10
	// MaxHeaderBytes bounds a request's header (http.Server.MaxHeaderBytes).
	MaxHeaderBytes = 16 << 10
	// ReadHeaderTimeout, BodyTimeout, WriteTimeout and IdleTimeout bound
	// a slow or idle client (slowloris): the header must arrive within
	// ReadHeaderTimeout, a body within BodyTimeout, an answer but a
	// stream must be taken within WriteTimeout, and a keep-alive
	// connection idle past IdleTimeout is closed.
	ReadHeaderTimeout = 5 * time.Second
	BodyTimeout       = 10 * time.Second
	WriteTimeout      = 30 * time.Second
	IdleTimeout       = 60 * time.Second
)

// Config is what a server serves and how.
type Config struct {
	// Journal is the journal's path; Fleet, when set, is a gateway
	// Collector's output (internal/fleet) served instead.
	Journal string
	Fleet   string
	// SilentAfter is the fleet's silence threshold (0: fleet's default).
	SilentAfter time.Duration
	// JournalOptions are those cancel records its request with.
	JournalOptions journal.Options
	// Token is the bearer token every data route needs (never empty).
	Token string
	// Hosts are the Host header values accepted (host:port); nil accepts
	// any (a unix socket, which no browser reaches).
	Hosts []string
	// TLS says the server is behind TLS (the page's origin is https).
	TLS bool
	// ReadOnly refuses cancel.
	ReadOnly bool
	// MaxStreams bounds the event streams open at once (0: default).
	MaxStreams int
	// KeepAlive is how often a quiet stream sends a comment (0: default).
	KeepAlive time.Duration
	// StreamStall is how long a stream's client may leave a write untaken
	// before it is cut off (0: default).
	StreamStall time.Duration
	// Log receives one line per stream cut off and per error the server
	// itself met (nil: discarded). Never the token.
	Log io.Writer
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Server serves one journal or one fleet (see the package comment).
type Server struct {
	cfg     Config
	follow  *live.Follower // journal mode
	hub     *hub           // journal mode: the one reader of every stream
	fl      *fleetState    // fleet mode
	streams atomic.Int64
	logMu   sync.Mutex
	muxOnce sync.Once // requests are served concurrently: the table is made once
	mux     map[string]route
}

type route struct {
	methods string // "GET", "POST"
	open    bool   // no token needed
	h       func(w http.ResponseWriter, r *http.Request, arg string)
}

// New returns a server of cfg; Run must run for its picture to be kept.
func New(cfg Config) (*Server, error) {
	if cfg.Token == "" {
		return nil, errors.New("serve: no token")
	}
	if (cfg.Journal == "") == (cfg.Fleet == "") {
		return nil, errors.New("serve: name a journal or a fleet")
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	if cfg.StreamStall <= 0 {
		cfg.StreamStall = DefaultStreamStall
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	s := &Server{cfg: cfg}
	if cfg.Fleet != "" {
		fs, err := newFleetState(cfg.Fleet, cfg.SilentAfter)
		if err != nil {
			return nil, err
		}
		s.fl = fs
	} else {
		s.follow = live.New(live.JournalLines(cfg.Journal))
		s.hub = newHub()
	}
	return s, nil
}

// Run keeps the server's picture current until ctx is done.
func (s *Server) Run(ctx context.Context) error {
	if s.fl != nil {
		return s.fl.run(ctx, s.logf)
	}
	go s.hub.run(ctx, s.cfg.Journal)
	return s.follow.Run(ctx)
}

// HTTPServer returns an http.Server for h with every bound of the
// package set (header size and time, idle time, write time; bodies and
// streams are bounded by the handler).
func HTTPServer(h http.Handler, errLog io.Writer) *http.Server {
	srv := &http.Server{
		Handler:           h,
		MaxHeaderBytes:    MaxHeaderBytes,
		ReadHeaderTimeout: ReadHeaderTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
	}
	if errLog != nil {
		srv.ErrorLog = newLogger(errLog)
	}
	return srv
}

func (s *Server) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.Log, "lcwrap-serve: %s\n", termtext.Line(fmt.Sprintf(format, args...)))
}

// Error is the body of every error answer: {"error": {...}}.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Cursor is, for a stream refused or cut off, where to resume.
	Cursor string `json:"cursor,omitempty"`
}

// The error codes (stable: a client may switch on them; docs/serve.md).
const (
	CodeUnauthorized   = "unauthorized"
	CodeBadHost        = "bad_host"
	CodeBadOrigin      = "bad_origin"
	CodeNotFound       = "not_found"
	CodeMethod         = "method_not_allowed"
	CodeBadRequest     = "bad_request"
	CodeBadCursor      = "bad_cursor"
	CodeTooLarge       = "request_too_large"
	CodeTooManyStreams = "too_many_streams"
	CodeReadOnly       = "read_only"
	CodeUnknownChild   = "unknown_child"
	CodeNoJournal      = "no_journal"
	CodeJournal        = "journal_unreadable"
	CodeNoAuthority    = "no_authority"
	CodeNotRunning     = "not_running"
	CodeNotStarted     = "not_started"
	CodeWrapperGone    = "wrapper_gone"
	CodeNotRecorded    = "not_recorded"
	CodeNotDelivered   = "not_delivered"
	CodeInternal       = "internal"
)

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, struct {
		Error Error `json:"error"`
	}{Error{Code: code, Message: termtext.Line(msg)}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"cannot encode the answer"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	// The answer's own time to be taken starts now, not when the request
	// came (a first answer waits for the journal to be read).
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(WriteTimeout))
	w.WriteHeader(status)
	w.Write(b)
	w.Write([]byte{'\n'})
}

// securityHeaders are on every answer.
func securityHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// ServeHTTP checks Host, Origin and the token, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	if !s.hostOK(r.Host) {
		writeError(w, http.StatusMisdirectedRequest, CodeBadHost, fmt.Sprintf("Host %q is not this server's address: a page reaching it by another name is refused (DNS rebinding)", r.Host))
		return
	}
	if o := r.Header.Get("Origin"); o != "" && r.Method != http.MethodGet && r.Method != http.MethodHead && !s.originOK(o) {
		writeError(w, http.StatusForbidden, CodeBadOrigin, fmt.Sprintf("Origin %q is not this server's: a request from another page is refused", o))
		return
	}
	rt, arg, ok := s.match(r.URL.Path)
	if !ok {
		writeError(w, http.StatusNotFound, CodeNotFound, "no such route: "+r.URL.Path)
		return
	}
	if !strings.Contains(rt.methods, r.Method) && !(r.Method == http.MethodHead && strings.Contains(rt.methods, "GET")) {
		w.Header().Set("Allow", rt.methods)
		writeError(w, http.StatusMethodNotAllowed, CodeMethod, r.Method+" is not allowed here; use "+rt.methods)
		return
	}
	if !rt.open && !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="lcwrap"`)
		writeError(w, http.StatusUnauthorized, CodeUnauthorized, "this route needs the token: send it as Authorization: Bearer TOKEN (it is in the token file lcwrap serve names)")
		return
	}
	rt.h(w, r, arg)
}

func (s *Server) authorized(r *http.Request) bool {
	a := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(a, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) == 1
}

func (s *Server) hostOK(host string) bool {
	if s.cfg.Hosts == nil {
		return true
	}
	for _, h := range s.cfg.Hosts {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

func (s *Server) originOK(origin string) bool {
	scheme := "http://"
	if s.cfg.TLS {
		scheme = "https://"
	}
	host, ok := strings.CutPrefix(origin, scheme)
	return ok && host != "" && s.cfg.Hosts != nil && s.hostOK(host)
}

// Routes returns every route's path (with {id} for a child's id) and its
// method, for the API's documents and their tests.
func Routes() map[string]string {
	s := &Server{}
	s.match("/")
	out := map[string]string{}
	for p, rt := range s.mux {
		out[p] = rt.methods
	}
	return out
}

// match finds the route of path, with the child id of the child routes.
func (s *Server) match(path string) (route, string, bool) {
	s.muxOnce.Do(func() {
		s.mux = map[string]route{
			"/":                        {methods: "GET", open: true, h: s.page},
			"/app.js":                  {methods: "GET", open: true, h: s.page},
			"/app.css":                 {methods: "GET", open: true, h: s.page},
			"/v1/children":             {methods: "GET", h: s.children},
			"/v1/snapshot":             {methods: "GET", h: s.snapshot},
			"/v1/events":               {methods: "GET", h: s.events},
			"/v1/children/{id}":        {methods: "GET", h: s.child},
			"/v1/children/{id}/cancel": {methods: "POST", h: s.cancel},
		}
	})
	if rt, ok := s.mux[path]; ok {
		return rt, "", true
	}
	rest, ok := strings.CutPrefix(path, "/v1/children/")
	if !ok || rest == "" {
		return route{}, "", false
	}
	if id, ok := strings.CutSuffix(rest, "/cancel"); ok && id != "" && !strings.Contains(id, "/") {
		return s.mux["/v1/children/{id}/cancel"], id, true
	}
	if !strings.Contains(rest, "/") {
		return s.mux["/v1/children/{id}"], rest, true
	}
	return route{}, "", false
}

// Hosts returns the Host values a listener at addr answers to: the
// address itself and, for a loopback one, its other loopback names
// (localhost, 127.0.0.1, [::1]) at the same port; extra names are added
// as they are.
func Hosts(addr net.Addr, extra []string) []string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return nil
	}
	port := fmt.Sprint(tcp.Port)
	hosts := append([]string(nil), extra...)
	if !tcp.IP.IsUnspecified() {
		hosts = append(hosts, net.JoinHostPort(tcp.IP.String(), port))
	}
	if tcp.IP.IsLoopback() {
		hosts = append(hosts, net.JoinHostPort("localhost", port), net.JoinHostPort("127.0.0.1", port), net.JoinHostPort("::1", port))
	}
	return hosts
}
