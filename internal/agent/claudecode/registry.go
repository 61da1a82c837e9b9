package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/lcwrap/lcwrap/internal/agent"
)

// Registry is Claude Code's own record of one running process:
// <config dir>/sessions/<pid>.json, written by claude itself while it
// runs (seen with 2.1.332). It names the process (pid, procStart: its
// start time in clock ticks, as /proc/<pid>/stat has it) and the session
// it is running, and keeps a status.
type Registry struct {
	PID       int    `json:"pid"`
	SessionID string `json:"sessionId"`
	ProcStart string `json:"procStart"`
	Cwd       string `json:"cwd"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Status    string `json:"status"`
	// WaitingFor is what a waiting session waits for, in Claude Code's
	// words ("permission prompt", "dialog open").
	WaitingFor string `json:"waitingFor"`
	// Path is the file it was read from.
	Path string `json:"-"`
}

// RegistryLimits is what an adopted claude's pid registry can never say.
const RegistryLimits = "Claude Code's own pid registry of an adopted process: which session it runs and the status it keeps (busy, idle, waiting and what for), read again when the file changes (a status that changes and changes back before it is read is missed); nothing before adoption, no tool calls, no sub-agents, no cancel authority"

// ErrNoRegistry means no registry file proves which session the process
// runs.
var ErrNoRegistry = errors.New("claude-code: no pid registry of Claude Code's names this process")

// RegistryDirs are where a process's registry can be: the config
// directory its environment names ($CLAUDE_CONFIG_DIR, else
// $HOME/.claude), when /proc lets lcwrap read it, then lcwrap's own.
func RegistryDirs(pid int) []string {
	var dirs []string
	add := func(d string) {
		if d != "" && !slices.Contains(dirs, filepath.Join(d, "sessions")) {
			dirs = append(dirs, filepath.Join(d, "sessions"))
		}
	}
	if env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ"); err == nil {
		var home, cfg string
		for _, kv := range bytes.Split(env, []byte{0}) {
			k, v, _ := strings.Cut(string(kv), "=")
			switch k {
			case "HOME":
				home = v
			case "CLAUDE_CONFIG_DIR":
				cfg = v
			}
		}
		add(cfg)
		if home != "" {
			add(filepath.Join(home, ".claude"))
		}
	}
	add(os.Getenv("CLAUDE_CONFIG_DIR"))
	if home, err := os.UserHomeDir(); err == nil {
		add(filepath.Join(home, ".claude"))
	}
	return dirs
}

// FindRegistry returns the registry that proves which session the process
// (pid, started at startTicks) runs: a file whose pid and procStart are
// that process's, naming a session. Outcomes: the Registry; an error
// wrapping ErrNoRegistry (none there, or none that matches: a file left
// by an earlier process with the same pid does not).
func FindRegistry(pid int, startTicks uint64, dirs []string) (*Registry, error) {
	var seen []string
	for _, d := range dirs {
		path := filepath.Join(d, strconv.Itoa(pid)+".json")
		r, err := ReadRegistry(path)
		if err != nil {
			continue
		}
		seen = append(seen, path)
		if r.PID == pid && r.ProcStart == strconv.FormatUint(startTicks, 10) && r.SessionID != "" {
			return r, nil
		}
	}
	if len(seen) > 0 {
		return nil, fmt.Errorf("%w (%s names another process or no session)", ErrNoRegistry, strings.Join(seen, ", "))
	}
	return nil, ErrNoRegistry
}

// ReadRegistry reads one registry file (at most 64 KiB).
func ReadRegistry(path string) (*Registry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 64<<10)
	n, _ := f.Read(b)
	var r Registry
	if err := json.Unmarshal(b[:n], &r); err != nil {
		return nil, err
	}
	r.Path = path
	return &r, nil
}

// RegistryObservations is what a registry (re)read shows: the session
// first (a first sight, so what came before is unknown), then its status
// as Claude Code keeps it — "busy" is running, "idle" (its turn is over)
// is waiting for the user, "waiting" (a permission prompt, a question, a
// dialog is open) is waiting for what its waitingFor says (waitReason;
// the words kept raw in the evidence), anything else only activity.
func RegistryObservations(r *Registry, first bool) []agent.Observation {
	var obs []agent.Observation
	native := "pid registry " + filepath.Base(r.Path)
	if first {
		obs = append(obs, agent.Observation{Kind: agent.Note, Session: r.SessionID, Native: native,
			Summary: "adopted: Claude Code's pid registry names this session",
			Facts:   agent.Facts{Cwd: fact(r.Cwd), Version: fact(r.Version), Kind: fact(r.Kind), Registry: fact(r.Path)}})
	}
	o := agent.Observation{Session: r.SessionID, Native: native + " status " + cut(r.Status, 32) + waitingEvidence(r.WaitingFor)}
	switch r.Status {
	case "busy":
		o.Kind, o.Summary = agent.Working, "Claude Code's status: busy"
	case "idle", "waiting":
		o.Kind, o.WaitingFor, o.Summary = agent.Waiting, waitReason(r.Status, r.WaitingFor), "Claude Code's status: "+r.Status
		if r.WaitingFor != "" {
			o.Summary += ", waiting for " + cut(r.WaitingFor, 40)
		}
	case "":
		return obs
	default:
		o.Kind, o.Summary = agent.Note, "Claude Code's status: "+cut(r.Status, 32)
	}
	return append(obs, o)
}
