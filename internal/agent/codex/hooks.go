package codex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Environment of a run lcwrap launched with its hooks: where `lcwrap hook
// codex --relay` hands a payload to, and the token it must carry (the
// same names as Claude Code's: one launching lcwrap, one hook server).
const (
	EnvHookURL   = "LCWRAP_HOOK_URL"
	EnvHookToken = "LCWRAP_HOOK_TOKEN"
)

// HookEvent is one of codex's hook events lcwrap registers: its name in
// the config, and the label codex keys its trust with.
type HookEvent struct {
	Name, Label string
}

// HookEvents are the events lcwrap registers for a run, every one that
// codex 0.171.0 runs command hooks for (its hooks list; StopFailure is not
// among them, so it is read when it comes but not registered).
var HookEvents = []HookEvent{
	{"SessionStart", "session_start"}, {"UserPromptSubmit", "user_prompt_submit"},
	{"PreToolUse", "pre_tool_use"}, {"PermissionRequest", "permission_request"},
	{"PostToolUse", "post_tool_use"}, {"PreCompact", "pre_compact"}, {"PostCompact", "post_compact"},
	{"SubagentStart", "subagent_start"}, {"SubagentStop", "subagent_stop"},
	{"Stop", "stop"}, {"Interrupt", "interrupt"},
}

// hookTimeout is each hook's timeout in seconds: codex clamps an
// Interrupt hook's to 3, and the relay gives up well before it.
const hookTimeout = 3

// HookCommand is the command every hook lcwrap registers runs.
func HookCommand(exe string) string { return shellQuote(exe) + " hook codex --relay" }

// shellQuote quotes s for the shell codex runs command hooks with.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// HookArgs are the config overrides (-c, codex's session flags: for this
// run only, nothing written) that register lcwrap's hook for events.
func HookArgs(exe string, events []HookEvent) []string {
	var args []string
	for _, ev := range events {
		args = append(args, "-c", fmt.Sprintf(`hooks.%s=[{hooks=[{type="command",command=%s,timeout=%d}]}]`, ev.Name, tomlString(HookCommand(exe)), hookTimeout))
	}
	return args
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TrustKey is the key under which codex keeps the trust of lcwrap's hook
// for ev: hooks given as session flags (-c) are keyed by that layer, the
// event, and their place (the first group's first hook).
func TrustKey(ev HookEvent) string { return "/<session-flags>/config.toml:" + ev.Label + ":0:0" }

// TrustHash is the hash codex records when the user trusts lcwrap's hook
// for ev (its /hooks review writes it): sha256 of the hook's identity —
// the event's label and the matcher group with the one normalised hook —
// as JSON with sorted keys. A hook whose hash differs from the one
// trusted is "modified" to codex and does not run.
func TrustHash(exe string, ev HookEvent) string { return hookHash(ev.Label, HookCommand(exe)) }

// hookHash is codex's hash of a hook running command for the event
// labelled label.
func hookHash(label, command string) string {
	type handler struct {
		Async   bool   `json:"async"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"`
		Type    string `json:"type"`
	}
	id := struct {
		EventName string    `json:"event_name"`
		Hooks     []handler `json:"hooks"`
	}{label, []handler{{Command: command, Timeout: hookTimeout, Type: "command"}}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as serde_json writes it
	enc.Encode(id)
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TrustConfig is what `lcwrap hook codex --print-config` prints: the
// trust entries for lcwrap's hooks, as codex's /hooks review writes them
// into its config.toml.
func TrustConfig(exe string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Codex's trust for the hooks 'lcwrap -- codex' registers for its runs, each running\n#   %s\n", HookCommand(exe))
	b.WriteString("# (as codex's own /hooks review writes it). Add these lines to $CODEX_HOME/config.toml\n")
	b.WriteString("# (default ~/.codex/config.toml). Where that file has one of these keys already (an\n")
	b.WriteString("# lcwrap at another path), replace its trusted_hash instead: TOML refuses a key twice.\n")
	for _, ev := range HookEvents {
		fmt.Fprintf(&b, "\n[hooks.state.%s]\ntrusted_hash = %s\n", tomlString(TrustKey(ev)), tomlString(TrustHash(exe, ev)))
	}
	return b.String()
}

// CodexHome is codex's home as codex finds it: $CODEX_HOME, else ~/.codex.
func CodexHome() string {
	if h := os.Getenv("CODEX_HOME"); h != "" {
		return h
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".codex")
}

// maxConfig bounds the bytes of codex's config.toml lcwrap reads.
const maxConfig = 4 << 20

// Untrusted returns the events whose lcwrap hook the user's codex config
// (config.toml in codexHome) does not trust: its trust key and the hook's
// very hash are not both in the file. It reads the file as text (a hash
// is 71 characters no other line carries); it can be wrong only the
// other way — a trust entry written there yet disabled — and then the
// hook simply does not run.
func Untrusted(codexHome, exe string) []HookEvent {
	text := ""
	if f, err := os.Open(filepath.Join(codexHome, "config.toml")); err == nil {
		b, _ := io.ReadAll(io.LimitReader(f, maxConfig))
		f.Close()
		text = string(b)
	}
	var out []HookEvent
	for _, ev := range HookEvents {
		if !strings.Contains(text, TrustKey(ev)) || !strings.Contains(text, TrustHash(exe, ev)) {
			out = append(out, ev)
		}
	}
	return out
}

// hookFlags reports what a codex command line says about hooks itself:
// whether it passes --dangerously-bypass-hook-trust (codex then runs
// every enabled hook, lcwrap's too), and a config override of its own
// under hooks (which lcwrap's overrides would replace, or be replaced by).
func hookFlags(args []string) (bypass bool, own string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return bypass, own
		case a == "--dangerously-bypass-hook-trust":
			bypass = true
		case (a == "-c" || a == "--config") && i+1 < len(args):
			i++
			if strings.HasPrefix(strings.TrimSpace(args[i]), "hooks") {
				own = a + " " + args[i]
			}
		case strings.HasPrefix(a, "--config=") || strings.HasPrefix(a, "-c") && len(a) > 2:
			v := strings.TrimPrefix(strings.TrimPrefix(a, "--config="), "-c")
			if strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(v, "=")), "hooks") {
				own = a
			}
		}
	}
	return bypass, own
}
