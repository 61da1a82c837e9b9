package codex

import (
	"fmt"
	"io"
	"os"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/hookhttp"
)

// HookSettings implements agent.Hooks: the trust entries for lcwrap's
// hooks (TrustConfig), what `lcwrap hook codex --print-config` prints.
func (Driver) HookSettings(exe string) string { return TrustConfig(exe) }

// Hook implements agent.Hooks: one payload of `lcwrap hook codex
// --relay`, handed to the lcwrap that launched codex ($LCWRAP_HOOK_URL).
// Codex's hooks are recorded only so: lcwrap registers them for the runs
// it launches; without --relay nothing is recorded.
func (Driver) Hook(in io.Reader, call agent.HookCall) []string {
	raw, err := io.ReadAll(io.LimitReader(in, MaxHookPayload+1))
	io.Copy(io.Discard, in) // codex never writes into a closed pipe
	if err != nil {
		return []string{fmt.Sprintf("cannot read the payload: %v", err)}
	}
	if !call.Relay {
		return []string{"codex's hooks are recorded under 'lcwrap -- codex', which registers them itself (with --relay); not recorded"}
	}
	url := os.Getenv(EnvHookURL)
	if url == "" {
		return []string{"--relay without $" + EnvHookURL + ": nowhere to relay to; not recorded"}
	}
	if err := hookhttp.Post(url, os.Getenv(EnvHookToken), raw, call.Wait*4); err != nil {
		return []string{fmt.Sprintf("the launching lcwrap did not take the payload; not recorded: %v", err)}
	}
	return nil
}

var _ agent.Hooks = Driver{}
