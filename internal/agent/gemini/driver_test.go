package gemini

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
)

// TestPrepareTelemetry: lcwrap sets Gemini's telemetry for the run by
// environment variables aimed at the run's server; when the user
// configures telemetry (here $GEMINI_TELEMETRY_ENABLED), it sets none and
// says so once.
func TestPrepareTelemetry(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv(EnvSystemDefaults, filepath.Join(t.TempDir(), "none.json"))
	t.Setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", filepath.Join(t.TempDir(), "none.json"))
	t.Chdir(t.TempDir())
	launch := agent.Launch{Argv: []string{"gemini", "-p", "x"}, ChildID: "p", RootChildID: "p"}
	prepare := func(env []string) agent.Run {
		t.Helper()
		old := environ
		environ = func() []string { return env }
		defer func() { environ = old }()
		r, err := Driver{Exe: "/bin/false"}.Prepare(context.Background(), launch)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		return r
	}
	r := prepare([]string{"PATH=/bin"})
	env := strings.Join(r.Command().Env, "\n")
	if !strings.Contains(env, "GEMINI_TELEMETRY_ENABLED=true") || !strings.Contains(env, "GEMINI_TELEMETRY_OTLP_ENDPOINT=http://127.0.0.1:") {
		t.Errorf("no telemetry set:\n%s", env)
	}
	r = prepare([]string{"GEMINI_TELEMETRY_ENABLED=false"})
	c := r.Command()
	if env := strings.Join(c.Env, "\n"); strings.Contains(env, "GEMINI_TELEMETRY_") {
		t.Errorf("the user's telemetry overridden:\n%s", env)
	}
	if w := strings.Join(c.Warnings, "\n"); strings.Count(w, "$GEMINI_TELEMETRY_ENABLED") != 1 {
		t.Errorf("warnings: %q", c.Warnings)
	}
}
