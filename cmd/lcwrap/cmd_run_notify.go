package main

import (
	"time"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/supervise"
)

// notifyRestartFlagDefs define run's sd_notify and restart flags (see
// journalFlagDefs).
var notifyRestartFlagDefs = []cli.Flag{
	&cli.BoolFlag{Name: "notify", Usage: "give the command a NOTIFY_SOCKET and record what it says there (sd_notify: READY=1, STATUS=, WATCHDOG=1, STOPPING=1, BARRIER=1, LCWRAP_STATE=waiting|running)"},
	&cli.StringFlag{Name: "ready", Value: "exec", Usage: "when the command counts as running: exec (once it started) or notify (once it sends READY=1; needs --notify)"},
	&cli.DurationFlag{Name: "ready-timeout", Usage: "with --ready notify: cancel the command (SIGTERM to its process group) if it has not sent READY=1 after this long; lcwrap then exits 124"},
	&cli.DurationFlag{Name: "watchdog", Usage: "with --notify: the command's WATCHDOG_USEC; its WATCHDOG=1 pings are the heartbeats (lcwrap writes none), so a command silent for 3 times this long shows as stale (at least 100ms)"},
	&cli.StringFlag{Name: "restart", Value: "no", Usage: "start the command again when it has ended: no, on-failure (until it ends completed) or always; each attempt is a new child id with the same root"},
	&cli.IntFlag{Name: "max-attempts", Usage: "with --restart: at most this many attempts, the first included (0: no limit)"},
	&cli.DurationFlag{Name: "backoff", Value: time.Second, Usage: "with --restart: the wait before the second attempt, doubling for each next one up to 30 times this, with jitter (at least 100ms without --max-attempts)"},
}

// notifyRestartConfig reads the sd_notify and restart flags into cfg;
// every mistake is a usage error.
func notifyRestartConfig(cmd flagReader, cfg *supervise.Config) error {
	for _, d := range []string{"ready-timeout", "watchdog", "backoff"} {
		if cmd.Duration(d) < 0 {
			return usagef(cmd, "--%s must not be negative", d)
		}
	}
	if err := checkRate(cmd, "watchdog", "0 for none"); err != nil {
		return err
	}
	if b := cmd.Duration("backoff"); b < minEventInterval && cmd.Int("max-attempts") == 0 && cmd.String("restart") != "no" {
		// Each attempt is a lifecycle of events; bounded, a short wait
		// cannot flood the journal.
		return usagef(cmd, "--backoff %v with no --max-attempts restarts too often: give at least %v, or bound the attempts with --max-attempts", b, minEventInterval)
	}
	cfg.Notify = cmd.Bool("notify")
	cfg.ReadyTimeout = cmd.Duration("ready-timeout")
	cfg.Watchdog = cmd.Duration("watchdog")
	switch cmd.String("ready") {
	case "exec":
	case "notify":
		cfg.ReadyNotify = true
	default:
		return usagef(cmd, "--ready %q: use exec or notify", cmd.String("ready"))
	}
	switch {
	case cfg.ReadyNotify && !cfg.Notify:
		return usagef(cmd, "--ready notify needs --notify (the command sends READY=1 on the notify socket)")
	case cfg.Watchdog > 0 && !cfg.Notify:
		return usagef(cmd, "--watchdog needs --notify (the command sends WATCHDOG=1 on the notify socket)")
	case cfg.ReadyTimeout > 0 && !cfg.ReadyNotify:
		return usagef(cmd, "--ready-timeout needs --ready notify")
	}
	policy, err := supervise.ParseRestartPolicy(cmd.String("restart"))
	if err != nil {
		return usagef(cmd, "--restart %q: use no, on-failure or always", cmd.String("restart"))
	}
	if policy == supervise.RestartNo {
		for _, f := range []string{"max-attempts", "backoff"} {
			if cmd.IsSet(f) {
				return usagef(cmd, "--%s needs --restart on-failure or --restart always", f)
			}
		}
	}
	if cmd.Int("max-attempts") < 0 {
		return usagef(cmd, "--max-attempts must be 0 (no limit) or more")
	}
	cfg.Restart = supervise.Restart{Policy: policy, MaxAttempts: int(cmd.Int("max-attempts")), Backoff: cmd.Duration("backoff")}
	return nil
}
