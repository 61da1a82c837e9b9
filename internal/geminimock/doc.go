// Package geminimock is a scripted stand-in for the Gemini API
// (POST /v1beta/models/MODEL:streamGenerateContent, answered as server-sent
// events, and :generateContent) on 127.0.0.1, so that tests can drive the
// real Gemini CLI offline (GOOGLE_GEMINI_BASE_URL pointing at it). The
// answer to a request is the script's step whose index is the number of
// function responses in its conversation; past the script, a short text.
// A sub-agent's conversation (one that offers complete_task) follows a
// script of its own (SubagentScript).
// A request without tools (a title, a routing question) gets a short
// text. It promises nothing about the real API beyond the few shapes the
// CLI reads, listens on nothing but 127.0.0.1, and is for tests only.
package geminimock
