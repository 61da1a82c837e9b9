package geminimock

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Call is one function call the model makes in a step.
type Call struct {
	// Name is the tool, e.g. "run_shell_command".
	Name string
	// Args are its arguments.
	Args map[string]any
}

// Shell is a call of the Gemini CLI's run_shell_command tool running cmd.
func Shell(cmd string) Call {
	return Call{Name: "run_shell_command", Args: map[string]any{"command": cmd, "description": "lcwrap mock"}}
}

// Step is one answer of the model: its function calls, or, with none, a
// final text.
type Step struct {
	Calls []Call
	Text  string
	// Hold, when not nil, holds the answer until it is closed (or the
	// request is given up): a test's way to order what the CLI does
	// meanwhile (its telemetry's export) before the answer.
	Hold <-chan struct{}
}

// FinalText is the answer past the script and to requests without tools.
const FinalText = "lcwrap mock: all done."

// Server is a running mock.
type Server struct {
	// URL is the base URL to give the CLI (GOOGLE_GEMINI_BASE_URL).
	URL string

	script []Step
	sub    []Step // for a sub-agent's conversation (SubagentScript)
	ln     net.Listener
	srv    *http.Server

	mu       sync.Mutex // guards sub (set while serving), requests and paths
	requests int
	paths    []string
}

// Start listens on 127.0.0.1 (a free port) and serves script.
func Start(script ...Step) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), script: script, ln: ln}
	s.srv = &http.Server{Handler: s}
	go s.srv.Serve(ln)
	return s, nil
}

// SubagentScript scripts the conversations of Gemini CLI's sub-agents:
// a request that offers the complete_task tool (a sub-agent's, never the
// session's) is answered from steps instead of the session's script, by
// the same rule. Call it before the CLI starts.
func (s *Server) SubagentScript(steps ...Step) {
	s.mu.Lock() // the CLI's requests are served on other goroutines
	defer s.mu.Unlock()
	s.sub = steps
}

// CompleteTask is a sub-agent's complete_task call, with output under
// name (the agent's output name: generalist's "result").
func CompleteTask(name string, output any) Call {
	return Call{Name: "complete_task", Args: map[string]any{name: output}}
}

// InvokeAgent is the session's invoke_agent call, which starts the
// sub-agent named (e.g. "generalist") with prompt.
func InvokeAgent(name, prompt string) Call {
	return Call{Name: "invoke_agent", Args: map[string]any{"agent_name": name, "prompt": prompt}}
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Requests returns how many generate requests were answered.
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

type part struct {
	Text             string          `json:"text,omitempty"`
	FunctionCall     json.RawMessage `json:"functionCall,omitempty"`
	FunctionResponse json.RawMessage `json:"functionResponse,omitempty"`
}

type request struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	} `json:"contents"`
	Tools []json.RawMessage `json:"tools"`
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.paths = append(s.paths, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	_, method, _ := strings.Cut(r.URL.Path, ":")
	switch {
	case r.Method != http.MethodPost:
		http.Error(w, `{"error":{"code":404,"message":"not mocked"}}`, http.StatusNotFound)
		return
	case method == "countTokens":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"totalTokens":10}`)
		return
	case method != "streamGenerateContent" && method != "generateContent":
		http.Error(w, `{"error":{"code":404,"message":"not mocked"}}`, http.StatusNotFound)
		return
	}
	var req request
	json.Unmarshal(body, &req) // an unreadable request gets step 0
	step := 0
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if len(p.FunctionResponse) > 0 {
				step++
			}
		}
	}
	s.mu.Lock()
	s.requests++
	script := s.script
	for _, t := range req.Tools {
		if strings.Contains(string(t), `"complete_task"`) {
			script = s.sub
		}
	}
	s.mu.Unlock()
	st := Step{Text: FinalText}
	if len(req.Tools) > 0 && step < len(script) {
		st = script[step]
	}
	if st.Hold != nil {
		select {
		case <-st.Hold:
		case <-r.Context().Done():
			return
		}
	}
	var parts []map[string]any
	for _, c := range st.Calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": c.Args}})
	}
	if len(st.Calls) == 0 {
		text := st.Text
		if len(req.Tools) == 0 && method == "generateContent" {
			// A routing or classifier question wants JSON back.
			text = `{"reasoning":"lcwrap mock","model_choice":"flash","complexity_reasoning":"simple","complexity_score":1,"next_speaker":"user"}`
		}
		parts = append(parts, map[string]any{"text": text})
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP", "index": 0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-2.5-flash",
	}
	b, _ := json.Marshal(resp)
	if method == "generateContent" {
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
}
