package chatmock

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Call is one tool call the model makes in a step.
type Call struct {
	// Name is the tool, e.g. "bash".
	Name string
	// Args are its arguments.
	Args map[string]any
}

// Step is one answer of the model: its tool calls, or, with none, a final
// text.
type Step struct {
	Calls []Call
	Text  string
}

// Script is the steps of a conversation whose user text contains Marker.
type Script struct {
	Marker string
	Steps  []Step
}

// FinalText is the answer past a script, and to a request that follows
// none.
const FinalText = "lcwrap mock: all done."

// Server is a running mock.
type Server struct {
	// URL is the base URL to give the CLI (ends in /v1).
	URL string

	scripts []Script
	srv     *http.Server

	mu       sync.Mutex
	requests int
	paths    []string
	tools    []string
}

// Start listens on 127.0.0.1 (a free port) and serves scripts.
func Start(scripts ...Script) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/v1", scripts: scripts}
	s.srv = &http.Server{Handler: s}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Requests returns how many chat completions were answered.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Paths returns every request's method and path, in order.
func (s *Server) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// Tools returns the tool names the first request with tools offered.
func (s *Server) Tools() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.tools...)
}

type request struct {
	Stream   bool `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// userText joins the text of the user messages.
func (r *request) userText() string {
	var b strings.Builder
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			b.WriteString(s)
			continue
		}
		var parts []struct {
			Text string `json:"text"`
		}
		json.Unmarshal(m.Content, &parts)
		for _, p := range parts {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.paths = append(s.paths, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"gpt-4.1","object":"model","owned_by":"lcwrap-mock"}]}`)
		return
	case r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions"):
		http.Error(w, `{"error":{"message":"not mocked"}}`, http.StatusNotFound)
		return
	}
	var req request
	json.Unmarshal(body, &req) // an unreadable request gets a text
	step := 0
	for _, m := range req.Messages {
		if m.Role == "tool" {
			step++
		}
	}
	s.mu.Lock()
	s.requests++
	n := s.requests
	if s.tools == nil && len(req.Tools) > 0 {
		for _, t := range req.Tools {
			s.tools = append(s.tools, t.Function.Name)
		}
	}
	s.mu.Unlock()
	st := Step{Text: FinalText}
	if len(req.Tools) > 0 {
		text := req.userText()
		for _, sc := range s.scripts {
			if strings.Contains(text, sc.Marker) {
				if step < len(sc.Steps) {
					st = sc.Steps[step]
				}
				break
			}
		}
	}
	var calls []map[string]any
	for i, c := range st.Calls {
		args, _ := json.Marshal(c.Args)
		calls = append(calls, map[string]any{"index": i, "id": fmt.Sprintf("call_%d_%d", n, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(args)}})
	}
	finish := "stop"
	msg := map[string]any{"role": "assistant"}
	if len(calls) > 0 {
		finish = "tool_calls"
		msg["tool_calls"] = calls
		msg["content"] = nil
	} else {
		msg["content"] = st.Text
	}
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
	id := fmt.Sprintf("chatcmpl-%d", n)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "created": 1, "model": "gpt-4.1",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(v map[string]any) {
		v["id"], v["object"], v["created"], v["model"] = id, "chat.completion.chunk", 1, "gpt-4.1"
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	send(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": msg, "finish_reason": nil}}})
	send(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}, "usage": usage})
	io.WriteString(w, "data: [DONE]\n\n")
}
