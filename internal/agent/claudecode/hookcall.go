package claudecode

import (
	"fmt"
	"io"
	"os"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/hookhttp"
)

// HookSettings implements agent.Hooks: UserSettings.
func (Driver) HookSettings(exe string) string { return UserSettings(exe) }

// Hook implements agent.Hooks: one payload of `lcwrap hook claude-code`.
// Under the lcwrap that launched the agent ($LCWRAP_HOOK_URL set), that
// lcwrap owns the events: with call.Relay the payload is handed to it,
// else nothing is recorded. Otherwise (a hook the user installed) it is
// appended to the journal, the session's state kept beside it.
func (Driver) Hook(in io.Reader, call agent.HookCall) []string {
	raw, err := io.ReadAll(io.LimitReader(in, MaxPayload+1))
	io.Copy(io.Discard, in) // the agent never writes into a closed pipe
	if err != nil {
		return []string{fmt.Sprintf("cannot read the payload: %v", err)}
	}
	url := os.Getenv(EnvHookURL)
	switch {
	case call.Relay:
		if url == "" {
			return []string{"--relay without $" + EnvHookURL + ": nowhere to relay to; not recorded"}
		}
		if err := hookhttp.Post(url, os.Getenv(EnvHookToken), raw, call.Wait*4); err != nil {
			return []string{fmt.Sprintf("the launching lcwrap did not take the payload; not recorded: %v", err)}
		}
		return nil
	case url != "":
		return nil // the lcwrap that launched the agent owns its events
	}
	return call.Record(Source, ChildPrefix, Limits, Normalize(raw))
}
