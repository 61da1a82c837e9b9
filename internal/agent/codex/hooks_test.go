package codex

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// TestTrustHash: the hashes are codex's own, as codex 0.171.0's hooks
// list (app-server hooks/list, currentHash) gave them for a hook running
// the command "x" with a timeout of 3 (TestRealExecHooks shows codex
// running hooks trusted with TrustConfig's).
func TestTrustHash(t *testing.T) {
	for _, tc := range []struct {
		label, want string
	}{
		{"pre_tool_use", "sha256:e62ec9a495e8fb343a3da43552622da4706e1eff74895bdfdc0363e31d3409c9"},
		{"interrupt", "sha256:a5c004c961226f9446832ffd4713c9a952b1b2be25a24b433950f2394329255b"},
	} {
		if got := hookHash(tc.label, "x"); got != tc.want {
			t.Errorf("%s: %s, want codex's %s", tc.label, got, tc.want)
		}
	}
	if TrustHash("/a/lcwrap", HookEvents[0]) != hookHash(HookEvents[0].Label, HookCommand("/a/lcwrap")) {
		t.Errorf("TrustHash does not hash the hook's command")
	}
	if TrustHash("/a/lcwrap", HookEvents[0]) == TrustHash("/b/lcwrap", HookEvents[0]) {
		t.Errorf("two lcwrap paths, one hash")
	}
}

// TestHookArgs: one -c per event, whose TOML value carries the command
// quoted for TOML (and, inside, for the shell).
func TestHookArgs(t *testing.T) {
	args := HookArgs(`/opt/it's "lcwrap"\bin`, HookEvents[:1])
	want := []string{"-c", `hooks.SessionStart=[{hooks=[{type="command",command="'/opt/it'\\''s \"lcwrap\"\\bin' hook codex --relay",timeout=3}]}]`}
	if !slices.Equal(args, want) {
		t.Errorf("got  %q\nwant %q", args, want)
	}
	if n := len(HookArgs("/l", HookEvents)); n != 2*len(HookEvents) {
		t.Errorf("%d args", n)
	}
}

func TestHookFlags(t *testing.T) {
	for _, tc := range []struct {
		args   string
		bypass bool
		own    bool
	}{
		{"exec --json hi", false, false},
		{"--dangerously-bypass-hook-trust exec --json hi", true, false},
		{"-c model=o3 exec --json hi", false, false},
		{"-c hooks.Stop=[] exec", false, true},
		{"--config hooks.state={} exec", false, true},
		{"-chooks.Stop=[]", false, true},
		{"--config=hooks.Stop=[]", false, true},
		{"-- -c hooks.Stop=[]", false, false},
	} {
		bypass, own := hookFlags(strings.Fields(tc.args))
		if bypass != tc.bypass || (own != "") != tc.own {
			t.Errorf("%s: bypass %v, own %q", tc.args, bypass, own)
		}
	}
}

// TestUntrusted: a hook is trusted only where codex's config has both its
// key and its very hash (what codex's /hooks review writes).
func TestUntrusted(t *testing.T) {
	home := t.TempDir()
	if n := len(Untrusted(home, "/l")); n != len(HookEvents) {
		t.Errorf("no config: %d untrusted", n)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(TrustConfig("/l")), 0o600); err != nil {
		t.Fatal(err)
	}
	if u := Untrusted(home, "/l"); len(u) != 0 {
		t.Errorf("trusted config: %v untrusted", u)
	}
	if n := len(Untrusted(home, "/other/lcwrap")); n != len(HookEvents) {
		t.Errorf("another lcwrap's path: %d untrusted", n)
	}
	cfg := strings.Replace(TrustConfig("/l"), TrustHash("/l", HookEvents[2]), "sha256:00", 1)
	os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600)
	if u := Untrusted(home, "/l"); len(u) != 1 || u[0] != HookEvents[2] {
		t.Errorf("one hash changed: %v untrusted", u)
	}
}

// TestPrepareHooks: with lcwrap's path, a codex run gets the overrides of
// the hooks the user trusted right after the program, with the server's
// address and token; the others are not registered (codex would not run
// them, and its TUI would ask to review them first), said in one warning
// naming the step. A wrapper script, or a command that sets hooks
// itself, gets none.
func TestPrepareHooks(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	d := Driver{Exe: "/x/lcwrap"}
	cases := []struct {
		argv     string
		at       int // -1: the command is unchanged
		warnings int
		report   bool
	}{
		{"codex exec --json hi", -1, 1, true},
		{"codex", -1, 1, true},
		{"codex --dangerously-bypass-hook-trust exec --json hi", 1, 0, true},
		{"codex -c hooks.Stop=[] exec --json hi", -1, 1, false},
		{"codex login", -1, 0, false},
		{"wrapper.sh exec --json", -1, 0, false},
	}
	check := func(trusted string, registered []HookEvent) {
		for _, tc := range cases {
			argv := strings.Fields(tc.argv)
			at, warnings := tc.at, tc.warnings
			if trusted == "all" && tc.report && !strings.Contains(tc.argv, "bypass") {
				at, warnings = 1, 0
			}
			if trusted == "one" && tc.report && !strings.Contains(tc.argv, "bypass") {
				at = 1
			}
			for _, node := range []bool{false, true} {
				if node {
					if argv[0] != "codex" {
						continue
					}
					argv = append([]string{"node", "/x/codex.js"}, argv[1:]...)
					if at > 0 {
						at = 2
					}
				}
				r, err := d.Prepare(context.Background(), agent.Launch{Argv: argv, ChildID: "codex-1a2b3c4d"})
				if err != nil {
					t.Fatal(err)
				}
				c := r.Command()
				name := trusted + ": " + strings.Join(argv, " ")
				if len(c.Warnings) != warnings {
					t.Errorf("%s: warnings %q", name, c.Warnings)
				}
				if warnings > 0 && tc.report && !strings.Contains(c.Warnings[0], "lcwrap hook codex --print-config") {
					t.Errorf("%s: the warning names no step: %s", name, c.Warnings[0])
				}
				want := registered
				if strings.Contains(tc.argv, "bypass") {
					want = HookEvents
				}
				if at < 0 {
					if !slices.Equal(c.Argv, argv) || c.Env != nil || c.Added != nil {
						t.Errorf("%s: the command changed: %q", name, c.Argv)
					}
				} else {
					args := HookArgs("/x/lcwrap", want)
					if w := slices.Concat(argv[:at], args, argv[at:]); !slices.Equal(c.Argv, w) {
						t.Errorf("%s: argv %q", name, c.Argv)
					}
					if c.Added == nil || c.Added.AddedAt != int64(at) || !slices.Equal(c.Added.AddedArgs, args) {
						t.Errorf("%s: added %+v", name, c.Added)
					}
					if len(c.Env) != 2 || !strings.HasPrefix(c.Env[0], EnvHookURL+"=http://127.0.0.1:") || !strings.HasPrefix(c.Env[1], EnvHookToken+"=") {
						t.Errorf("%s: env %q", name, c.Env)
					}
				}
				r.Close()
				var term event.Terminal
				r.Report(&term)
				h, ok := event.Get[CodexHooks](term.Extra, KeyCodexHooks)
				if ok != tc.report {
					t.Errorf("%s: codexHooks %v, want %v", name, ok, tc.report)
					continue
				}
				if ok && (h.Payloads != 0 || len(h.Registered) != len(want) || len(h.Registered)+len(h.NotTrusted) != len(HookEvents) || h.Note == "") {
					t.Errorf("%s: codexHooks %+v", name, h)
				}
			}
		}
	}
	check("none", nil)
	cfg := TrustConfig("/x/lcwrap")
	os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600)
	check("all", HookEvents)
	i := strings.Index(cfg, "\n[hooks.state")
	one := cfg[:i] + cfg[i:i+1+strings.Index(cfg[i+1:], "\n\n")+1] // the header and the first entry
	os.WriteFile(filepath.Join(home, "config.toml"), []byte(one), 0o600)
	check("one", HookEvents[:1])
}
