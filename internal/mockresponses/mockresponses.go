package mockresponses

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Call is one function call the model makes in a step.
type Call struct {
	// Name is the tool, e.g. "exec_command".
	Name string
	// Arguments is the JSON object of its arguments.
	Arguments string
	// Namespace is the tool's namespace, when it has one
	// ("collaboration" for codex's sub-agent tools).
	Namespace string
}

// Spawn is a call of codex's spawn_agent (multi_agent_v2): a sub-agent
// named task, started without the parent's history.
func Spawn(task, message string) Call {
	b, _ := json.Marshal(map[string]string{"task_name": task, "message": message, "fork_turns": "none"})
	return Call{Name: "spawn_agent", Arguments: string(b), Namespace: "collaboration"}
}

// WaitAgent is a call of codex's wait_agent (multi_agent_v2).
func WaitAgent() Call {
	return Call{Name: "wait_agent", Arguments: `{"timeout_ms":30000}`, Namespace: "collaboration"}
}

// Exec is a call of codex's exec_command tool running cmd.
func Exec(cmd string) Call {
	b, _ := json.Marshal(map[string]string{"cmd": cmd})
	return Call{Name: "exec_command", Arguments: string(b)}
}

// Escalated is a call of exec_command running cmd outside the sandbox,
// which codex asks the user to approve (under -a on-request).
func Escalated(cmd, justification string) Call {
	b, _ := json.Marshal(map[string]string{"cmd": cmd, "sandbox_permissions": "require_escalated", "justification": justification})
	return Call{Name: "exec_command", Arguments: string(b)}
}

// Step is one answer of the model: its function calls, or, with none, a
// final assistant message Text; or, with Status set, an HTTP error of that
// status whose body carries Text as the error message.
type Step struct {
	Calls  []Call
	Text   string
	Status int
}

// Server answers POST /v1/responses. The answer to a request is the step
// whose index is the number of function-call outputs in the request's
// input (the first request has none); past the script it is a final
// message "done". So a retried request gets the same answer.
type Server struct {
	// URL is the base URL to give codex (ends in /v1).
	URL string

	script []Step
	sub    []Step // a sub-agent's requests (SubAgent)
	ln     net.Listener
	srv    *http.Server

	mu       sync.Mutex
	requests int
	paths    []string
}

// Start listens on 127.0.0.1 (a free port) and serves script.
func Start(script ...Step) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/v1", script: script, ln: ln}
	s.srv = &http.Server{Handler: s}
	go s.srv.Serve(ln)
	return s, nil
}

// SubAgent sets the script of requests a sub-agent makes (codex gives a
// sub-agent its task as an agent_message to a recipient under /root/),
// counted as the main script is; call it before codex starts.
func (s *Server) SubAgent(script ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sub = script
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Requests returns how many POST /v1/responses were answered.
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

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.paths = append(s.paths, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		http.Error(w, `{"error":{"message":"not mocked"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req struct {
		Input []struct {
			Type      string `json:"type"`
			Recipient string `json:"recipient"`
		} `json:"input"`
	}
	json.Unmarshal(body, &req) // an unreadable request gets step 0
	step, sub := 0, false
	for _, in := range req.Input {
		switch {
		case in.Type == "function_call_output":
			step++
		case in.Type == "agent_message" && strings.HasPrefix(in.Recipient, "/root/"):
			sub = true
		}
	}
	s.mu.Lock()
	s.requests++
	n := s.requests
	script := s.script
	if sub {
		script = s.sub
	}
	s.mu.Unlock()
	st := Step{Text: "done"}
	if step < len(script) {
		st = script[step]
	}
	if st.Status != 0 {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": st.Text, "type": "invalid_request_error"}})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(st.Status)
		w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	id := fmt.Sprintf("resp_%d", n)
	send := func(v map[string]any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
	}
	send(map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	var items []map[string]any
	for i, c := range st.Calls {
		it := map[string]any{
			"type": "function_call", "id": fmt.Sprintf("fc_%d_%d", n, i), "call_id": fmt.Sprintf("call_%d_%d", n, i),
			"name": c.Name, "arguments": c.Arguments,
		}
		if c.Namespace != "" {
			it["namespace"] = c.Namespace
		}
		items = append(items, it)
	}
	if len(st.Calls) == 0 {
		items = append(items, map[string]any{
			"type": "message", "id": fmt.Sprintf("msg_%d", n), "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": st.Text}},
		})
	}
	for i, it := range items {
		send(map[string]any{"type": "response.output_item.added", "output_index": i, "item": it})
		send(map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	send(map[string]any{"type": "response.completed", "response": map[string]any{
		"id": id,
		"usage": map[string]any{
			"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": 15,
		},
	}})
}

// Model is a model from codex 0.171.0's built-in list, so that codex
// neither warns about unknown metadata nor offers a migration.
const Model = "gpt-5.5"

// EnvKey is the environment variable codex reads the provider's key from.
const EnvKey = "LCWRAP_MOCK_API_KEY"

// WriteCodexHome writes dir/config.toml pointing codex at baseURL with
// zero retries, no update check and no model-migration prompt.
func WriteCodexHome(dir, baseURL string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	cfg := fmt.Sprintf(`model = %q
model_provider = "lcwrapmock"
check_for_update_on_startup = false

[model_providers.lcwrapmock]
name = "lcwrap mock"
base_url = %q
wire_api = "responses"
env_key = %q
request_max_retries = 0
stream_max_retries = 0

[notice.model_migrations]
%q = "gpt-6-sol"
`, Model, baseURL, EnvKey, Model)
	return os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o600)
}

// StopDaemons ends the processes whose executable lives under codexHome:
// the app-server daemons that the codex of one test (with that private
// CODEX_HOME) left running, and none other. SIGTERM first, so that they
// remove their sockets; SIGKILL for any still there after 3 seconds.
func StopDaemons(codexHome string) {
	var procs []*os.Process
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink("/proc/" + e.Name() + "/exe")
		if err != nil || !strings.HasPrefix(exe, codexHome+string(filepath.Separator)) {
			continue
		}
		if p, err := os.FindProcess(pid); err == nil && p.Signal(syscall.SIGTERM) == nil {
			procs = append(procs, p)
		}
	}
	deadline := time.Now().Add(3 * time.Second)
	for _, p := range procs {
		for time.Now().Before(deadline) {
			st, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid) + "/stat")
			if err != nil || strings.Contains(string(st), ") Z ") {
				break // gone, or a zombie its new parent has not reaped yet
			}
			time.Sleep(20 * time.Millisecond)
		}
		p.Kill()
	}
}
