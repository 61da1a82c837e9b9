// Package mockresponses is a scripted stand-in for the OpenAI Responses API
// (POST /v1/responses, answered as server-sent events) on 127.0.0.1, so that
// tests can drive the real codex CLI offline. It promises nothing about the
// real API beyond the few event shapes codex reads; it is for tests only.
package mockresponses
