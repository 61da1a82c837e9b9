package copilot

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Events are the hook events lcwrap registers: every one Copilot CLI
// 1.0.102 runs but preToolUse and permissionRequest, whose failure denies
// the tool (measured: a preToolUse command hook that exits 1 stops the
// call, "hook errored") — a hook of lcwrap's must never stop the agent.
var Events = []string{
	"sessionStart", "userPromptSubmitted", "postToolUse", "postToolUseFailure", "notification",
	"agentStop", "subagentStart", "subagentStop", "errorOccurred", "sessionEnd",
}

// HookTimeoutSec bounds one hook call, as Copilot CLI runs it.
const HookTimeoutSec = 5

type hookDef struct {
	Type       string `json:"type"`
	Bash       string `json:"bash"`
	TimeoutSec int    `json:"timeoutSec"`
}

type hooksFile struct {
	Version int                  `json:"version"`
	Hooks   map[string][]hookDef `json:"hooks"`
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// hooks is lcwrap's hooks file: one command hook per event, relaying
// (a run lcwrap launched) or not (a hook the user installs).
func hooks(exe string, relay bool) hooksFile {
	f := hooksFile{Version: 1, Hooks: map[string][]hookDef{}}
	for _, ev := range Events {
		cmd := shellQuote(exe) + " hook copilot --event " + ev
		if relay {
			cmd += " --relay"
		}
		f.Hooks[ev] = []hookDef{{Type: "command", Bash: cmd, TimeoutSec: HookTimeoutSec}}
	}
	return f
}

// UserSettings is what `lcwrap hook copilot --print-settings` prints: a
// hooks file to put in ~/.copilot/hooks/ for a copilot started without
// lcwrap.
func UserSettings(exe string) string {
	b, _ := json.MarshalIndent(hooks(exe, false), "", "  ")
	return string(b) + "\n"
}

// writePlugin makes the run's plugin: a private directory holding its
// manifest and hooks (no secret: the relay finds the wrapper's address
// and token in the agent's environment). On error nothing is left.
func writePlugin(exe string) (string, error) {
	dir, err := os.MkdirTemp("", "lcwrap-copilot-plugin-*") // 0700
	if err != nil {
		return "", err
	}
	manifest, _ := json.MarshalIndent(map[string]string{
		"name": "lcwrap", "description": "lcwrap: this run's lifecycle hooks (removed when the run ends)",
		"version": "1.0.0", "hooks": "hooks/hooks.json",
	}, "", "  ")
	h, _ := json.MarshalIndent(hooks(exe, true), "", "  ")
	err = errors.Join(
		os.MkdirAll(filepath.Join(dir, ".plugin"), 0o700),
		os.MkdirAll(filepath.Join(dir, "hooks"), 0o700),
	)
	if err == nil {
		err = errors.Join(
			os.WriteFile(filepath.Join(dir, ".plugin", "plugin.json"), manifest, 0o600),
			os.WriteFile(filepath.Join(dir, "hooks", "hooks.json"), h, 0o600),
		)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}
