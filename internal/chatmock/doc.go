// Package chatmock is a scripted stand-in for an OpenAI-compatible chat
// completions API (POST …/chat/completions, streamed as server-sent events
// or answered whole) on 127.0.0.1, so that tests can drive an agent CLI in
// its bring-your-own-model mode offline (GitHub Copilot CLI's
// COPILOT_PROVIDER_BASE_URL). A conversation follows the first Script
// whose marker its user text contains; the answer to a request is that
// script's step whose index is the number of tool results in it; past the
// script, and for a request without tools or without a marker, a short
// text. It promises nothing about the real API beyond the few shapes the
// CLI reads, listens on nothing but 127.0.0.1, and is for tests only.
package chatmock
