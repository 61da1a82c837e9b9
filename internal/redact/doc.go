// Package redact removes secrets from command lines, free text and JSON
// values before lcwrap writes them anywhere.
//
// # What it promises
//
// Every function replaces what it recognises with the marker [REDACTED] and
// is idempotent: redacting already redacted output changes nothing. What
// it recognises is a rule table and a grammar:
//
//   - rules.txt, modelled on gitleaks' default rules (RULES.md says which
//     version, which rules are covered, tuned or dropped, and why): keys
//     with a provider's shape anywhere in a text (AIza…, ya29.…, sk_live_…,
//     glpat-…, hvs.…, SG.…, npm_…, dckr_pat_…, ghp_…, sk-…, AKIA…/ASIA…,
//     AWS session tokens, JWTs, Slack and Teams webhook URLs, Sentry DSNs,
//     PEM and PGP private key blocks, ...), and values given to a key
//     named after a provider that have its key's shape
//     (ADAFRUIT_IO_KEY=…);
//   - values of keys and options named like a password, secret, token, API
//     key, auth/authorization, cookie, credential, private, access, account
//     or client key (--api-key X, --password=X, TOKEN=X, "secret": "X",
//     Cookie: X, AccountKey=X;, sig=X), also inside an option's value
//     (--from-literal=password=X, --env=DB_PASSWORD=X); bearer and basic
//     credentials; passwords in URLs (https://user:X@host, also when X
//     holds @); .netrc entries; prose ("the password is X", with a stop
//     list); a bare 40-character AWS secret access key (mixed case and
//     digits: hex digests survive);
//   - tools.txt: tools whose password option is their own, as data (tool,
//     option, where the secret is): redis-cli -a X, ldapsearch -w X,
//     sqlcmd -P X, htpasswd -b file user X, ssh-keygen -N X, openssl -k X
//     and -passin pass:X, zip -P X, smbclient -U user%X, sqlplus user/X@db,
//     docker/az login -p X, mysql -pX, sshpass -p X, curl -u user:X, ...
//
// The same command-line grammar reads an argv (Argv) and a command line
// inside a text (Text), so a secret is caught whether it reaches the
// journal as the recorded command, as activity or inside details.
//
// Look-alikes stay: counts (input_tokens, max_tokens, token_count and, in
// JSON, a number under a key written as words with spaces, such as the
// hook server's "missing or wrong token" rejections), the neighbour of a
// switch or a place named like a secret (--password-stdin, --ask-pass,
// --password-file PATH, token_type), prose ("Bearer tokens are"), git
// SHAs, UUIDs, digests and paths. Text that is one JSON value is redacted
// in place, token by token: keys, numbers, punctuation and layout stay;
// string values are redacted as text; scalars under a sensitive key (or
// nested under one) become "[REDACTED]". The result is valid JSON with the
// same keys; Argv's result has the length of its input (tested and
// fuzzed).
//
// A keyword pre-filter, one pass over the bytes, decides which rules can
// apply; each rule's pattern is compiled on its first use, so a command
// line without anything suspicious (lcwrap -- make test) compiles nothing.
// Keys and values are read once: the cost is linear in the input.
//
// It never panics on any input, including invalid UTF-8. testdata/redact
// holds the planted secrets and the look-alikes, by category
// (testdata/redact/corpus), run in every position.
//
// # What it refuses to claim
//
// Redaction is pattern matching: it cannot prove a string holds no secret
// (a password given to an option no rule knows, a key of a shape no rule
// has). It errs on the side of hiding too much (a flag called --tokenizer
// loses its value). lcwrap therefore never records the environment at all.
//
// Where it sits among the other packages: docs/design.md.
package redact
