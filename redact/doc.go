// Package redact removes secrets from command lines, free text and JSON
// values before lcwrap writes them anywhere.
//
// # What it promises
//
// Every function replaces what it recognises with the marker [REDACTED] and
// is idempotent: redacting already redacted output changes nothing. It
// recognises
//
//   - values of keys and flags named like a password, secret, token, API key,
//     auth/authorization, cookie, credential, private or access key
//     (--api-key X, --password=X, TOKEN=X, "secret": "X", Cookie: X);
//   - bearer and basic credentials (Authorization: Bearer X);
//   - well-known key formats: sk-…, ghp_…/gho_…/ghs_…, github_pat_…,
//     xox?-…, AKIA…/ASIA…, JSON Web Tokens (eyJ….….…), PEM private keys,
//     and passwords in URLs (https://user:X@host).
//
// It never panics on any input, including invalid UTF-8.
//
// # What it refuses to claim
//
// Redaction is pattern matching: it cannot prove a string holds no secret.
// It errs on the side of hiding too much (a flag called --tokenizer loses its
// value). lcwrap therefore never records the environment at all.
package redact
