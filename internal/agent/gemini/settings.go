package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Events are the hook events lcwrap registers: every one Gemini CLI
// 0.61.0 has but BeforeModel, AfterModel and BeforeToolSelection (one call
// per model request or streamed chunk, each carrying the whole request:
// a process per chunk would slow the agent, and they show nothing of the
// lifecycle the others do not) and PreCompress (measured: it fires before
// every model request, whether or not anything is compressed, so it says
// nothing).
var Events = []string{
	"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "Notification",
	"AfterAgent", "SessionEnd",
}

// EnvSystemDefaults names the system-defaults settings file Gemini CLI
// reads (lowest precedence; hooks of every file are concatenated).
const EnvSystemDefaults = "GEMINI_CLI_SYSTEM_DEFAULTS_PATH"

// defaultSystemDefaults is that file's place when the variable is unset
// (Linux).
const defaultSystemDefaults = "/etc/gemini-cli/system-defaults.json"

// HookTimeoutMs bounds one hook call, as Gemini CLI runs it.
const HookTimeoutMs = 5000

type hookDef struct {
	Type    string            `json:"type"`
	Name    string            `json:"name,omitempty"`
	Command string            `json:"command"`
	Timeout int               `json:"timeout,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

type hookGroup struct {
	Matcher string    `json:"matcher,omitempty"`
	Hooks   []hookDef `json:"hooks"`
}

// shellQuote quotes s for the shell Gemini CLI runs command hooks with.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// hookCommand is lcwrap's command hook: relay (a run lcwrap launched) or
// not (a hook the user installs). It ends with `|| exit 1`: Gemini CLI
// 0.61.0 takes a hook's exit code other than 0 and 1 with any output as
// "deny" — measured: a BeforeTool hook whose command is not there (bash's
// 127 and its message) blocks the tool — and exit 1 as a warning, so a
// hook of lcwrap's that cannot run (its binary gone, a crash: Go exits 2)
// never stops the agent.
func hookCommand(exe string, relay bool) hookDef {
	h := hookDef{Type: "command", Name: "lcwrap", Command: shellQuote(exe) + " hook gemini", Timeout: HookTimeoutMs}
	if relay {
		h.Command += " --relay"
		// Gemini CLI may run hooks with an environment cleared of names
		// like *TOKEN* (security.environmentVariableRedaction, or
		// always under GitHub Actions): the hook's own env brings them
		// back, expanded from the agent's environment when the settings
		// are read, so that the file holds neither.
		h.Env = map[string]string{"LCWRAP_HOOK_URL": "${LCWRAP_HOOK_URL}", "LCWRAP_HOOK_TOKEN": "${LCWRAP_HOOK_TOKEN}"}
	}
	h.Command += " || exit 1"
	return h
}

// hooks is lcwrap's hooks object: one command hook per event.
func hooks(exe string, relay bool) map[string][]hookGroup {
	m := map[string][]hookGroup{}
	for _, ev := range Events {
		m[ev] = []hookGroup{{Hooks: []hookDef{hookCommand(exe, relay)}}}
	}
	return m
}

// UserSettings is what `lcwrap hook gemini --print-settings` prints: the
// hooks to merge into ~/.gemini/settings.json for a gemini started
// without lcwrap.
func UserSettings(exe string) string {
	b, _ := json.MarshalIndent(map[string]any{"hooks": hooks(exe, false)}, "", "  ")
	return string(b) + "\n"
}

// RunSettings is the content of the system-defaults file of one run: the
// defaults in force (base: that file's JSON object, nil when there is
// none) with lcwrap's relaying hooks added after their own, event by
// event. It fails when base is not one JSON object, or its hooks are not
// what Gemini CLI reads.
func RunSettings(base []byte, exe string) ([]byte, error) {
	s := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(base)) > 0 {
		if err := json.Unmarshal(base, &s); err != nil || s == nil {
			return nil, errors.New("it is not one JSON object (comments are not read)")
		}
	}
	own := map[string][]json.RawMessage{}
	if h, ok := s["hooks"]; ok {
		if err := json.Unmarshal(h, &own); err != nil {
			return nil, errors.New("its hooks are not an object of arrays")
		}
	}
	if own == nil {
		own = map[string][]json.RawMessage{}
	}
	for ev, groups := range hooks(exe, true) {
		for _, g := range groups {
			b, _ := json.Marshal(g)
			own[ev] = append(own[ev], b)
		}
	}
	b, _ := json.Marshal(own)
	s["hooks"] = b
	return json.MarshalIndent(s, "", "  ")
}

// secureForGemini says why Gemini CLI 0.61.0 would skip a system settings
// file at path ("" when it would read it): it and every directory above
// it must be owned by root and writable by neither group nor others.
func secureForGemini(path string) string {
	p, err := filepath.Abs(path)
	if err != nil {
		return err.Error()
	}
	for {
		fi, err := os.Stat(p)
		if err != nil {
			return err.Error()
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return "its owner cannot be read here"
		}
		if st.Uid != 0 {
			return fmt.Sprintf("%s is not owned by root", p)
		}
		if fi.Mode().Perm()&0o022 != 0 {
			return fmt.Sprintf("%s is writable by group or others", p)
		}
		up := filepath.Dir(p)
		if up == p {
			return ""
		}
		p = up
	}
}

// runDir makes a private directory where Gemini CLI reads a settings
// file lcwrap writes: under the first of the places it tries whose every
// directory root owns and no one else may write.
func runDir() (string, error) {
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("gemini reads a settings file named for one run only when root owns it and every directory above it, and lcwrap runs as uid %d", os.Geteuid())
	}
	var places []string
	if d, err := os.UserCacheDir(); err == nil {
		places = append(places, d)
	}
	places = append(places, os.Getenv("XDG_RUNTIME_DIR"), "/run")
	for _, p := range places {
		if p == "" || secureForGemini(p) != "" {
			continue
		}
		d, err := os.MkdirTemp(p, "lcwrap-gemini-*") // 0700
		if err != nil {
			continue
		}
		if secureForGemini(d) != "" {
			os.Remove(d)
			continue
		}
		return d, nil
	}
	return "", errors.New("no directory where gemini would read a settings file lcwrap writes (it wants root's, writable by no one else: tried the cache directory, $XDG_RUNTIME_DIR and /run)")
}

// systemDefaults returns the system-defaults file gemini would read for
// this run (its path, and its content: nil when there is none or gemini
// would skip it as insecure, as gemini does).
func systemDefaults() (path string, content []byte, err error) {
	path = os.Getenv(EnvSystemDefaults)
	if path == "" {
		path = defaultSystemDefaults
	}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return path, nil, nil
	case err != nil:
		return path, nil, err
	case secureForGemini(path) != "":
		return path, nil, nil // gemini skips it (and warns)
	}
	return path, b, nil
}
