// Command hookserver measures one hook request as the agent's HTTP hook
// pays for it, against lcwrap's hand-written server (internal/hookhttp)
// and against net/http's, in the same process, interleaved: recorded
// payloads (internal/agent/claudecode/testdata/hooks) posted to /hook with
// the token, the body queued for a recorder goroutine, an empty 200. Two
// clients: one keep-alive connection (as Claude Code's hooks post) and a
// new connection per request (as 'lcwrap hook claude-code --relay' does).
// It prints one markdown row per server and client: median and p99
// microseconds. It is a benchmark, not part of lcwrap.
package main

import (
	"bytes"
	"crypto/subtle"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/lcwrap/lcwrap/internal/hookhttp"
)

const token = "0123456789abcdef0123456789abcdef"

func main() {
	n := flag.Int("n", 3000, "requests per server and client")
	payloads := flag.String("payloads", "internal/agent/claudecode/testdata/hooks", "recorded payloads")
	flag.Parse()
	files, _ := filepath.Glob(filepath.Join(*payloads, "*.json"))
	sort.Strings(files)
	var recs [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fail(err)
		}
		recs = append(recs, b)
	}
	if len(recs) == 0 {
		fail(fmt.Errorf("no payloads in %s", *payloads))
	}
	queue := make(chan []byte, 1024)
	go func() {
		for range queue {
		}
	}()
	put := func(b []byte) { queue <- b }

	ln1, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	hand := hookhttp.Serve(ln1, token, put, nil)
	defer hand.Close(time.Second)

	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	std := stdServer(put)
	go std.Serve(ln2)
	defer std.Close()

	servers := []struct{ label, url string }{
		{"internal/hookhttp (hand-written)", "http://" + hand.Addr() + "/hook"},
		{"net/http (every timeout set, bounded sizes)", "http://" + ln2.Addr().String() + "/hook"},
	}
	clients := []struct {
		label string
		post  func(url string, body []byte) error
	}{
		{"keep-alive connection (Claude Code's HTTP hooks)", keepAlive()},
		{"new connection per request (lcwrap hook --relay)", func(url string, body []byte) error {
			return hookhttp.Post(url, token, body, 5*time.Second)
		}},
	}
	fmt.Println("| server | client | requests | median (µs) | p99 (µs) |")
	fmt.Println("|---|---|---|---|---|")
	for _, c := range clients {
		walls := make([][]float64, len(servers))
		for i := 0; i < *n+50; i++ { // interleaved; the first 50 warm up
			for s, srv := range servers {
				body := recs[i%len(recs)]
				start := time.Now()
				if err := c.post(srv.url, body); err != nil {
					fail(fmt.Errorf("%s, %s: %w", srv.label, c.label, err))
				}
				if i >= 50 {
					walls[s] = append(walls[s], float64(time.Since(start).Nanoseconds())/1000)
				}
			}
		}
		for s, srv := range servers {
			w := walls[s]
			slices.Sort(w)
			fmt.Printf("| %s | %s | %d | %.1f | %.1f |\n", srv.label, c.label, len(w), w[len(w)/2], w[min(len(w)-1, len(w)*99/100)])
		}
	}
}

// stdServer is the hook server written with net/http: the same answers
// (405, 403, 404, 413, 200 once the body is queued), every timeout set
// and the sizes bounded as internal/hookhttp bounds them.
func stdServer(put func([]byte)) *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method != http.MethodPost:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		case subtle.ConstantTimeCompare([]byte(r.Header.Get(hookhttp.TokenHeader)), []byte(token)) != 1:
			w.WriteHeader(http.StatusForbidden)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, hookhttp.MaxBody))
		if err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		put(body)
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	})
	return &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: hookhttp.ReadTimeout,
		ReadTimeout:       hookhttp.ReadTimeout,
		WriteTimeout:      hookhttp.ReadTimeout,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    hookhttp.MaxHeader,
	}
}

// keepAlive posts over one kept connection per server, as Node's fetch
// does with its default agent.
func keepAlive() func(url string, body []byte) error {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
	return func(url string, body []byte) error {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(hookhttp.TokenHeader, token)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %s", resp.Status)
		}
		return nil
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "hookserver:", err)
	os.Exit(2)
}
