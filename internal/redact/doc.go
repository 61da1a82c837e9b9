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
//     a bare 40-character AWS secret access key (mixed case and digits:
//     hex digests survive), and passwords in URLs (https://user:X@host,
//     redis://:X@host);
//   - command-line passwords: curl -u user:X (--user, --proxy-user),
//     mysql-family -pX, sshpass -p X, and prose ("the password is X",
//     with a stop list: "the password is required" survives).
//
// Counts are not secrets: input_tokens, max_tokens, token_count and other
// keys naming an amount are not sensitive. Text that is one JSON value is
// redacted in place, token by token: keys, numbers, punctuation and
// layout stay; string values are redacted as text; scalars under a
// sensitive key (or nested under one) become "[REDACTED]". The result is
// valid JSON with the same keys (tested and fuzzed). Patterns compile on
// first use, behind a keyword pre-filter, so a command line without
// anything suspicious costs a few string searches.
//
// It never panics on any input, including invalid UTF-8. The rules are
// hand-written (docs/journal.md, "Redaction", says why no secret scanner
// is a dependency); testdata/redact holds the planted secrets and the
// look-alikes that must survive.
//
// # What it refuses to claim
//
// Redaction is pattern matching: it cannot prove a string holds no secret.
// It errs on the side of hiding too much (a flag called --tokenizer loses its
// value). lcwrap therefore never records the environment at all.
//
// Where it sits among the other packages: docs/design.md.
package redact
