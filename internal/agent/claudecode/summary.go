package claudecode

import (
	"cmp"
	"encoding/json"
	"strconv"
	"strings"
)

// MaxSummary is the length (in characters) a tool summary is cut to.
const MaxSummary = 120

// Summary says briefly what a tool call was asked to do, from its input:
// the Bash command's first line, a file path, a search pattern, a URL, a
// sub-agent's type and description. It reads only those fields and
// returns "" for tools it does not know (an MCP tool's input is never
// read). The caller's redaction still applies to what it returns.
func Summary(tool string, input json.RawMessage) string {
	if len(input) == 0 {
		return ""
	}
	var in struct {
		Command      string          `json:"command"`
		Description  string          `json:"description"`
		FilePath     string          `json:"file_path"`
		NotebookPath string          `json:"notebook_path"`
		Path         string          `json:"path"`
		Pattern      string          `json:"pattern"`
		URL          string          `json:"url"`
		Query        string          `json:"query"`
		SubagentType string          `json:"subagent_type"`
		Skill        string          `json:"skill"`
		Todos        json.RawMessage `json:"todos"`
		Background   bool            `json:"run_in_background"`
	}
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	var s string
	switch tool {
	case "Bash", "BashOutput", "PowerShell":
		s, _, _ = strings.Cut(strings.TrimSpace(in.Command), "\n")
		if in.Background {
			s += " (in the background)"
		}
	case "Read", "Write", "Edit", "MultiEdit":
		s = in.FilePath
	case "NotebookEdit", "NotebookRead":
		s = in.NotebookPath
	case "Glob", "Grep":
		s = in.Pattern
		if in.Path != "" {
			s += " in " + in.Path
		}
	case "LS":
		s = in.Path
	case "WebFetch":
		s = in.URL
	case "WebSearch":
		s = in.Query
	case "Agent", "Task":
		s = cmp.Or(in.SubagentType, "sub-agent")
		if in.Description != "" {
			s += ": " + in.Description
		}
	case "Skill":
		s = in.Skill
	case "TodoWrite":
		var todos []json.RawMessage
		if json.Unmarshal(in.Todos, &todos) == nil {
			s = strconv.Itoa(len(todos)) + " todos"
		}
	}
	return cut(s, MaxSummary)
}
