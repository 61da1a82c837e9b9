// Package claudecode is Claude Code as a source of lifecycle evidence: its
// hook payloads (Normalize), its stream-json output (Stream), its own pid
// registry (FindRegistry), its OpenTelemetry logs (ParseLogs: OTLP/HTTP
// JSON read with encoding/json, never the protobuf packages), its
// transcript's interruption marker (Interruption), and its agent.Driver:
// for a run lcwrap launches, lcwrap's own hooks and telemetry for that
// run only, served over HTTP on 127.0.0.1 with a per-run token, plus a
// command hook for the one event without HTTP hooks (Prepare); an
// adopted claude followed through its pid registry, and every session
// `claude agents` lists (ParseAgents, ReadJobState), listed again only
// when the registry's directories change (Adopt); a hook the user
// installed (Hook). It maps each payload once into
// package agent's observations and decodes only the fields it maps:
// prompts, tool output and messages are never read.
//
// It promises never to fail or slow the agent it observes and never to
// crash or guess on a payload it does not know (those are counted). It
// refuses to claim more than a hook proves: a reported end is the agent's
// report, never task success, and tokens and cost are the agent's own
// estimate, attributed to it; telemetry it could not take is dropped and
// counted, never waited for. The mapping table and what each source can
// never say are in docs/agents.md.
package claudecode
