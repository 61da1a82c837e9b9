package gemini

import (
	"cmp"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// MaxPayload bounds the bytes of one hook payload that are read; a larger
// one is counted, never read.
const MaxPayload = agent.MaxHookPayload

// payload is the part of a Gemini CLI hook payload lcwrap reads: the
// prompt, the model's response, tool output and the notification's
// details are never decoded.
type payload struct {
	SessionID        string          `json:"session_id"`
	TranscriptPath   string          `json:"transcript_path"`
	Cwd              string          `json:"cwd"`
	HookEventName    string          `json:"hook_event_name"`
	Source           string          `json:"source"`
	Reason           string          `json:"reason"`
	ToolName         string          `json:"tool_name"`
	ToolInput        json.RawMessage `json:"tool_input"`
	NotificationType string          `json:"notification_type"`
	Message          string          `json:"message"`
	ToolResponse     *struct {
		Error json.RawMessage `json:"error"`
	} `json:"tool_response"`
}

// Normalize maps one hook payload (as Gemini CLI 0.61.0 writes it on the
// hook's stdin) into observations. It never fails and never panics: a
// payload it cannot read, or an event it does not know, is counted.
func Normalize(raw []byte) agent.Outcome {
	var p payload
	if len(raw) > MaxPayload || !utf8.Valid(raw) || json.Unmarshal(raw, &p) != nil {
		return agent.Unrecognize("", "(payload that is not a JSON object)")
	}
	if p.HookEventName == "" {
		return agent.Unrecognize(p.SessionID, "(no hook_event_name)")
	}
	o := agent.Observation{Session: p.SessionID, Native: termtext.Cut(p.HookEventName, 64)}
	switch p.HookEventName {
	case "SessionStart":
		o.Kind, o.Source = agent.SessionStarted, termtext.Cut(p.Source, 32)
		o.Facts = agent.Facts{Cwd: fact(p.Cwd), Transcript: fact(p.TranscriptPath)}
	case "BeforeAgent":
		o.Kind = agent.PromptSubmitted
	case "AfterAgent":
		o.Kind = agent.TurnEnded
	case "BeforeTool":
		o.Kind, o.Tool, o.Summary = agent.ToolStarted, termtext.Cut(p.ToolName, 64), Summary(p.ToolName, p.ToolInput)
	case "AfterTool":
		o.Kind, o.Tool = agent.ToolEnded, termtext.Cut(p.ToolName, 64)
		if p.ToolResponse != nil && len(p.ToolResponse.Error) > 0 && string(p.ToolResponse.Error) != "null" {
			o.Kind = agent.ToolFailed
		}
	case "Notification":
		if p.NotificationType == "ToolPermission" {
			o.Kind, o.WaitingFor, o.Summary = agent.Waiting, event.WaitPermission, oneLine(p.Message)
		} else {
			o.Kind, o.Summary = agent.Note, "notification"+paren(termtext.Cut(p.NotificationType, 32))
		}
		o.Facts = agent.Facts{Notification: termtext.Cut(p.NotificationType, 64)}
	case "PreCompress":
		// Not registered by lcwrap: measured, it fires before every
		// model request whether or not anything is compressed.
		return agent.Ignore(p.SessionID, "PreCompress (fires at every compression check)")
	case "SessionEnd":
		o.Kind, o.Reason = agent.SessionEnded, termtext.Cut(p.Reason, 64)
	case "BeforeModel", "AfterModel", "BeforeToolSelection":
		// Not registered by lcwrap (one per model call or chunk, carrying
		// the whole request); a hook of the user's may still relay them.
		return agent.Ignore(p.SessionID, p.HookEventName)
	default:
		return agent.Unrecognize(p.SessionID, termtext.Cut(p.HookEventName, 64))
	}
	return agent.Observe(o)
}

// MaxSummary is the length (in characters) a tool summary is cut to.
const MaxSummary = 120

// Summary says briefly what a tool call was asked to do, from the few
// input fields of Gemini CLI's built-in tools that say it: the shell
// command's first line, a file or directory path, a pattern, a URL, a
// query. It returns "" for anything else (an MCP tool's input is never
// read). Redaction still applies to what it returns.
func Summary(tool string, input json.RawMessage) string {
	if len(input) == 0 {
		return ""
	}
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
		DirPath  string `json:"dir_path"`
		Path     string `json:"path"`
		Pattern  string `json:"pattern"`
		URL      string `json:"url"`
		Query    string `json:"query"`
	}
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	var s string
	switch tool {
	case "run_shell_command":
		s, _, _ = strings.Cut(strings.TrimSpace(in.Command), "\n")
	case "read_file", "write_file", "replace", "edit":
		s = in.FilePath
	case "list_directory", "read_many_files":
		s = cmp.Or(in.DirPath, in.Path)
	case "glob", "grep_search", "search_file_content":
		s = in.Pattern
		if p := cmp.Or(in.DirPath, in.Path); p != "" {
			s += " in " + p
		}
	case "web_fetch":
		s = in.URL
	case "google_web_search":
		s = in.Query
	}
	return termtext.Cut(s, MaxSummary)
}

func fact(s string) string { return termtext.Cut(s, 500) }

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// oneLine makes text one short line.
func oneLine(s string) string {
	return termtext.Cut(strings.Join(strings.Fields(s), " "), 160)
}
