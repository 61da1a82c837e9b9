package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lcwrap/lcwrap/internal/lazy"
)

// Environment of a run lcwrap launched with its hooks: where the command
// hook relays a payload to, and the token every hook must carry.
const (
	EnvHookURL   = "LCWRAP_HOOK_URL"
	EnvHookToken = "LCWRAP_HOOK_TOKEN"
)

// Events are the hook events lcwrap registers, in the order Claude Code
// documents them.
var Events = []string{
	"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest",
	"PostToolUse", "PostToolUseFailure", "Notification", "SubagentStart",
	"SubagentStop", "Stop", "StopFailure", "PreCompact", "SessionEnd",
}

// commandOnly are events whose HTTP hooks Claude Code does not run (seen
// with 2.1.332: an http SessionStart hook never fires); a command hook
// relays them.
var commandOnly = lazy.Value[map[string]bool]{Make: func() map[string]bool {
	return map[string]bool{"SessionStart": true}
}}

// offPath are the events a user-installed hook may run for in the
// background (async): frequent ones whose order against their neighbours
// is not what the lifecycle rests on. The others stay synchronous, so
// that a session's start, waits, turn ends and end are recorded in order.
var offPath = lazy.Value[map[string]bool]{Make: func() map[string]bool {
	return map[string]bool{"PreToolUse": true, "PostToolUse": true, "PostToolUseFailure": true, "PreCompact": true}
}}

type hook struct {
	Type           string            `json:"type"`
	Command        string            `json:"command,omitempty"`
	URL            string            `json:"url,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	AllowedEnvVars []string          `json:"allowedEnvVars,omitempty"`
	Timeout        int               `json:"timeout,omitempty"`
	Async          bool              `json:"async,omitempty"`
}

type matcher struct {
	Hooks []hook `json:"hooks"`
}

type settings struct {
	Hooks map[string][]matcher `json:"hooks"`
}

// shellQuote quotes s for the shell Claude Code runs command hooks with.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// InjectedSettings is the --settings JSON lcwrap adds to a run it
// launches: an HTTP hook to url carrying the token from $LCWRAP_HOOK_TOKEN
// for every event that runs HTTP hooks, and for the others a command hook
// (exe hook claude-code --relay) that hands the payload to url.
func InjectedSettings(url, exe string) string {
	s := settings{Hooks: map[string][]matcher{}}
	for _, ev := range Events {
		h := hook{Type: "http", URL: url, Headers: map[string]string{"X-Lcwrap-Token": "$" + EnvHookToken}, AllowedEnvVars: []string{EnvHookToken}, Timeout: 5}
		if commandOnly.Get()[ev] {
			h = hook{Type: "command", Command: shellQuote(exe) + " hook claude-code --relay", Timeout: 5}
		}
		s.Hooks[ev] = []matcher{{Hooks: []hook{h}}}
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// UserSettings is what `lcwrap hook claude-code --print-settings` prints
// for ~/.claude/settings.json: a command hook (exe hook claude-code) for
// every event, in the background where that keeps it off the agent's path.
func UserSettings(exe string) string {
	s := settings{Hooks: map[string][]matcher{}}
	for _, ev := range Events {
		s.Hooks[ev] = []matcher{{Hooks: []hook{{Type: "command", Command: shellQuote(exe) + " hook claude-code", Timeout: 10, Async: offPath.Get()[ev]}}}}
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	return string(b) + "\n"
}

// subcommands of claude that start no session: no hooks for them.
var subcommands = lazy.Value[map[string]bool]{Make: func() map[string]bool {
	return map[string]bool{
		"agents": true, "attach": true, "auth": true, "auto-mode": true, "doctor": true, "gateway": true,
		"import": true, "install": true, "logs": true, "mcp": true, "plugin": true, "plugins": true,
		"purge": true, "respawn": true, "rm": true, "setup-token": true, "stop": true, "kill": true,
		"ultrareview": true, "update": true, "upgrade": true, "config": true, "migrate-installer": true,
	}
}}

// Args is what lcwrap needs to know about a claude command line.
type Args struct {
	Settings   bool   // --settings is given already
	SkipsHooks string // --bare or --safe-mode: Claude Code runs no settings hooks
	Print      bool   // -p / --print
	StreamJSON bool   // --output-format stream-json
	Subcommand string // a subcommand that starts no session
	Background bool   // --bg / --background: the session outlives this process
	Info       bool   // --help / --version: no session
}

// Inspect reads a claude command line (without argv[0]).
func Inspect(args []string) Args {
	var a Args
	if len(args) > 0 && subcommands.Get()[args[0]] {
		a.Subcommand = args[0]
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			break
		}
		name, value, hasValue := strings.Cut(arg, "=")
		switch name {
		case "--settings":
			a.Settings = true
		case "--bare", "--safe-mode":
			a.SkipsHooks = name
		case "-p", "--print":
			a.Print = true
		case "--output-format":
			if !hasValue && i+1 < len(args) {
				value = args[i+1]
			}
			a.StreamJSON = value == "stream-json"
		case "--bg", "--background":
			a.Background = true
		case "-h", "--help", "-v", "--version":
			a.Info = true
		}
	}
	return a
}

// valueFlags are claude's options that take a value (2.1.332's help):
// 1 for one value (or an optional one, which takes the next argument
// that is not an option), -1 for a list (every argument up to the next
// option). promptFlags hold prompt text.
var valueFlags = lazy.Value[map[string]int]{Make: func() map[string]int {
	return map[string]int{
		"--add-dir": -1, "--agent": 1, "--agents": 1, "--allowedTools": -1, "--allowed-tools": -1,
		"--append-system-prompt": 1, "--autocompact": 1, "--betas": -1, "--cloud": 1, "-d": 1, "--debug": 1,
		"--debug-file": 1, "--disallowedTools": -1, "--disallowed-tools": -1, "--effort": 1, "--environment": 1,
		"--fallback-model": 1, "--file": -1, "--from-pr": 1, "--input-format": 1, "--json-schema": 1,
		"--max-budget-usd": 1, "--mcp-config": -1, "--model": 1, "-n": 1, "--name": 1, "--output-format": 1,
		"--permission-mode": 1, "--permission-prompts": 1, "--plugin-dir": 1, "--plugin-url": 1,
		"--prompt-suggestions": 1, "--remote-control": 1, "--remote-control-session-name-prefix": 1,
		"-r": 1, "--resume": 1, "--session-id": 1, "--setting-sources": 1, "--settings": 1,
		"--system-prompt": 1, "--system-prompt-snapshot": 1, "--teleport": 1, "--tools": -1, "-w": 1, "--worktree": 1,
		"--system-prompt-file": 1, "--append-system-prompt-file": 1,
	}
}}

var promptFlags = lazy.Value[map[string]bool]{Make: func() map[string]bool {
	return map[string]bool{"--append-system-prompt": true, "--system-prompt": true}
}}

// PromptElided is what stands for prompt text in a recorded command line.
const PromptElided = "[prompt]"

// RecordedArgv is a claude command line as lcwrap records it: the prompt
// (the arguments that are no option's value) and system prompt texts are
// replaced by PromptElided, everything else is kept in place.
func RecordedArgv(argv []string) []string {
	out := slices.Clone(argv)
	if len(out) < 2 || subcommands.Get()[out[1]] {
		return out
	}
	list := false
	for i := 1; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			for j := i + 1; j < len(out); j++ {
				out[j] = PromptElided
			}
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			name, _, inline := strings.Cut(a, "=")
			list = false
			if inline {
				if promptFlags.Get()[name] {
					out[i] = name + "=" + PromptElided
				}
				continue
			}
			switch valueFlags.Get()[name] {
			case 1:
				if i+1 < len(out) && !strings.HasPrefix(out[i+1], "-") {
					i++
					if promptFlags.Get()[name] {
						out[i] = PromptElided
					}
				}
			case -1:
				list = true
			}
			continue
		}
		if !list {
			out[i] = PromptElided
		}
	}
	return out
}

// ErrCannotMerge means the command's own --settings could not be read as
// one JSON object with a hooks object (or is given more than once): lcwrap
// then adds no hooks of its own.
var ErrCannotMerge = errors.New("its --settings cannot be merged")

// MergeSettings adds lcwrap's hooks (InjectedSettings' JSON) to the
// --settings a claude command line already passes (args without argv[0]):
// a JSON object inline, or the path of a file holding one (relative to
// dir). The user's hooks stay as they are; lcwrap's run after them. It
// returns the command line with that --settings value replaced by the
// merged settings, and the index of the value it replaced: inline JSON
// stays inline; a file's content is never put on the command line (where
// other users can read it) but written with save, whose path replaces the
// file's (save nil: only check that it merges). Outcomes: the new args and
// index; an error wrapping ErrCannotMerge (args unchanged).
func MergeSettings(args []string, injected, dir string, save func(merged []byte) (string, error)) ([]string, int, error) {
	at, inline := -1, false
	for i := 0; i < len(args) && args[i] != "--"; i++ {
		name, _, hasValue := strings.Cut(args[i], "=")
		if name != "--settings" {
			continue
		}
		if at >= 0 {
			return args, 0, fmt.Errorf("%w: it is given twice", ErrCannotMerge)
		}
		at, inline = i, hasValue
		if !hasValue {
			at = i + 1
		}
	}
	if at < 0 || at >= len(args) {
		return args, 0, fmt.Errorf("%w: no value", ErrCannotMerge)
	}
	value := args[at]
	if inline {
		_, value, _ = strings.Cut(value, "=")
	}
	raw := []byte(value)
	fromFile := !strings.HasPrefix(strings.TrimSpace(value), "{")
	if fromFile {
		path := value
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return args, 0, fmt.Errorf("%w: %v", ErrCannotMerge, err)
		}
		raw = b
	}
	user, err := decodeObject(raw)
	if err != nil {
		return args, 0, fmt.Errorf("%w: %v", ErrCannotMerge, err)
	}
	ours, _ := decodeObject([]byte(injected))
	hooks := map[string]any{}
	if h, ok := user["hooks"]; ok {
		if hooks, ok = h.(map[string]any); !ok {
			return args, 0, fmt.Errorf("%w: its hooks is not an object", ErrCannotMerge)
		}
	}
	for ev, groups := range ours["hooks"].(map[string]any) {
		mine, ok := hooks[ev].([]any)
		if _, present := hooks[ev]; present && !ok {
			return args, 0, fmt.Errorf("%w: its %s hooks are not a list", ErrCannotMerge, ev)
		}
		hooks[ev] = append(mine, groups.([]any)...)
	}
	user["hooks"] = hooks
	merged, err := json.Marshal(user)
	if err != nil {
		return args, 0, fmt.Errorf("%w: %v", ErrCannotMerge, err)
	}
	repl := string(merged)
	if fromFile && save != nil {
		if repl, err = save(merged); err != nil {
			return args, 0, fmt.Errorf("%w: %v", ErrCannotMerge, err)
		}
	}
	out := slices.Clone(args)
	if inline {
		out[at] = "--settings=" + repl
	} else {
		out[at] = repl
	}
	return out, at, nil
}

// decodeObject decodes one JSON object, keeping numbers as written.
func decodeObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("not a JSON object")
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return m, nil
}
