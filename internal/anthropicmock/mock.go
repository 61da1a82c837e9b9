package anthropicmock

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// Markers the script reacts to.
const (
	ScenarioBash  = "lcwrap-scenario:bash"
	ScenarioAgent = "lcwrap-scenario:agent"
	ScenarioBoth  = "lcwrap-scenario:both"
	// ScenarioSleep is a Bash tool call that takes a minute (SleepCommand),
	// for a test that interrupts it.
	ScenarioSleep = "lcwrap-scenario:sleep"
	SubagentTask  = "lcwrap-subagent-task"
	// BashCommand is what the Bash tool call runs.
	BashCommand = "echo lcwrap-mock-ok > lcwrap-mock.txt"
	// SleepCommand is what the Bash call of ScenarioSleep runs.
	SleepCommand = "timeout 60 tail -f /dev/null"
	// InputTokens and OutputTokens are the usage every answer reports.
	InputTokens  = 12
	OutputTokens = 6
	// FinalText is the last answer of every scenario.
	FinalText = "lcwrap mock: all done."
)

// Server is a running mock.
type Server struct {
	URL      string // http://127.0.0.1:PORT
	srv      *http.Server
	ln       net.Listener
	requests atomic.Int64
	mu       sync.Mutex
	toolIDs  int
}

// Start listens on a free port of 127.0.0.1.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/messages", s.messages)
	mux.HandleFunc("/v1/messages/count_tokens", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":10}`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	})
	s.srv = &http.Server{Handler: mux}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Requests returns how many Messages requests were served.
func (s *Server) Requests() int64 { return s.requests.Load() }

type request struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Messages []message         `json:"messages"`
	Tools    []json.RawMessage `json:"tools"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type block struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// userText joins the text of every user message (tool results excluded).
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
		var blocks []block
		json.Unmarshal(m.Content, &blocks)
		for _, bl := range blocks {
			if bl.Type == "text" {
				b.WriteString(bl.Text)
			}
		}
	}
	return b.String()
}

// turns counts the assistant messages so far: the step of the script.
func (r *request) turns() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// step is one answer: text, or a tool call.
type step struct {
	text  string
	tool  string
	input string // JSON
}

var (
	bashStep  = step{tool: "Bash", input: `{"command":"` + BashCommand + `","description":"Print a marker"}`}
	agentStep = step{tool: "Agent", input: `{"subagent_type":"Explore","description":"Look around","prompt":"` + SubagentTask + `: say hello"}`}
	sleepStep = step{tool: "Bash", input: `{"command":"` + SleepCommand + `","description":"Wait a minute"}`}
	finalStep = step{text: FinalText}
)

func (s *Server) script(r *request) step {
	text := r.userText()
	if len(r.Tools) == 0 || strings.Contains(text, SubagentTask) {
		return step{text: "ok"}
	}
	var steps []step
	switch {
	case strings.Contains(text, ScenarioBoth):
		steps = []step{bashStep, agentStep}
	case strings.Contains(text, ScenarioSleep):
		steps = []step{sleepStep}
	case strings.Contains(text, ScenarioBash):
		steps = []step{bashStep}
	case strings.Contains(text, ScenarioAgent):
		steps = []step{agentStep}
	}
	if n := r.turns(); n < len(steps) {
		return steps[n]
	}
	return finalStep
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	s.requests.Add(1)
	st := s.script(&req)
	s.mu.Lock()
	s.toolIDs++
	id := s.toolIDs
	s.mu.Unlock()
	model := req.Model
	if model == "" {
		model = "claude-sonnet-4-5"
	}
	stop := "end_turn"
	var content string
	if st.tool != "" {
		stop = "tool_use"
		content = fmt.Sprintf(`{"type":"tool_use","id":"toolu_mock%04d","name":%q,"input":%s}`, id, st.tool, st.input)
	} else {
		b, _ := json.Marshal(st.text)
		content = `{"type":"text","text":` + string(b) + `}`
	}
	msgID := fmt.Sprintf("msg_mock%04d", id)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%q,"type":"message","role":"assistant","model":%q,"content":[%s],"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":%d}}`, msgID, model, content, stop, InputTokens, OutputTokens)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	ev := func(name, data string) {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
		if flusher != nil {
			flusher.Flush()
		}
	}
	ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":%q,"type":"message","role":"assistant","model":%q,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":1}}}`, msgID, model, InputTokens))
	if st.tool != "" {
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_mock%04d","name":%q,"input":{}}}`, id, st.tool))
		b, _ := json.Marshal(st.input)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+string(b)+`}}`)
	} else {
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		b, _ := json.Marshal(st.text)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(b)+`}}`)
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, OutputTokens))
	ev("message_stop", `{"type":"message_stop"}`)
}
