package redact

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// Marker replaces every redacted value.
const Marker = "[REDACTED]"

// sensitiveParts are matched against a key with separators removed and
// letters lowered ("X-Api-Key" -> "xapikey").
var sensitiveParts = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey",
	"authorization", "authentication", "credential", "cookie",
	"privatekey", "accesskey", "sessionkey", "bearer", "signature",
}

// sensitiveWords must equal a whole word of the key ("basic-auth" but not
// "author").
var sensitiveWords = map[string]bool{
	"auth": true, "pwd": true, "pass": true, "pw": true, "oauth": true, "jwt": true,
}

// SensitiveKey reports whether a key or flag name ("--api-key",
// "GITHUB_TOKEN", "clientSecret") names a value that must be hidden.
func SensitiveKey(name string) bool {
	name = strings.TrimLeft(name, "-")
	if name == "" {
		return false
	}
	var compact strings.Builder
	var word strings.Builder
	found := false
	endWord := func() {
		if sensitiveWords[word.String()] {
			found = true
		}
		word.Reset()
	}
	var prev rune
	for i, r := range name {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			// camelCase boundary: a lower letter followed by an upper one.
			if i > 0 && unicode.IsUpper(r) && unicode.IsLower(prev) {
				endWord()
			}
			lr := unicode.ToLower(r)
			compact.WriteRune(lr)
			word.WriteRune(lr)
		default:
			endWord()
		}
		prev = r
	}
	endWord()
	if found {
		return true
	}
	c := compact.String()
	for _, p := range sensitiveParts {
		if strings.Contains(c, p) {
			return true
		}
	}
	return false
}

// patterns are compiled on first use: most text (a command such as
// "make test") never gets past the trigger pre-filter, and a wrapper's
// start-up time is its speed.
type patterns struct {
	scheme, formats, pem, url, kv, flag *regexp.Regexp
}

var compiled = sync.OnceValue(func() *patterns {
	return &patterns{
		// "Bearer abc", "Basic abc": keep the scheme, hide the credential.
		scheme: regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)([A-Za-z0-9._~+/=-]{6,})`),
		// Well-known key formats, anywhere in text.
		formats: regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{12,}` +
			`|\bgh[pousr]_[A-Za-z0-9]{16,}` +
			`|\bgithub_pat_[A-Za-z0-9_]{16,}` +
			`|\bxox[abposr]-[A-Za-z0-9-]{8,}` +
			`|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b` +
			`|\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`),
		// PEM private key blocks, possibly cut off before their end line.
		pem: regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`),
		// user:password@ in URLs.
		url: regexp.MustCompile(`(://[^/\s:@]+:)([^/\s@]+)(@)`),
		// key=value, key: value, "key": "value" (the quote may be cut off).
		kv: regexp.MustCompile(`("?)([A-Za-z_][A-Za-z0-9_.\-]*)("?\s*[=:]\s*)(` +
			`\[REDACTED\]` +
			`|"(?:[^"\\]|\\.)*"?` +
			`|'[^']*'?` +
			`|[^\s,;&"'}\]\)]+)`),
		// --flag value: a sensitive flag followed by a separate value.
		flag: regexp.MustCompile(`(^|\s)(--?[A-Za-z][A-Za-z0-9_-]*)(\s+)(\[REDACTED\]|"[^"]*"?|'[^']*'?|[^\s-]\S*)`),
	}
})

// headerKeys name header-style keys whose whole remaining line is the
// secret.
var headerKeys = map[string]bool{"authorization": true, "proxy-authorization": true, "cookie": true, "set-cookie": true}

// triggers is a cheap pre-filter: text containing none of these (lowered)
// cannot match any pattern above.
var triggers = []string{
	"pass", "pwd", "pw", "secret", "token", "key", "auth", "cookie", "credential",
	"bearer", "basic", "sk-", "gh", "xox", "akia", "asia", "eyj", "://", "private",
	"signature", "session", "jwt",
}

func mayContainSecret(s string) bool {
	l := strings.ToLower(s)
	for _, t := range triggers {
		if strings.Contains(l, t) {
			return true
		}
	}
	return false
}

// Text redacts secrets in free text (a log line, an activity message, a
// malformed input line kept for a diagnostic).
func Text(s string) string {
	if s == "" || !mayContainSecret(s) {
		return s
	}
	re := compiled()
	s = re.pem.ReplaceAllString(s, Marker)
	s = re.scheme.ReplaceAllString(s, "${1}${2}"+Marker)
	s = re.formats.ReplaceAllString(s, Marker)
	s = re.url.ReplaceAllString(s, "${1}"+Marker+"${3}")
	s = replaceHeaders(s)
	s = replaceSubmatches(re.kv, s, func(sub []string) string {
		key, val := sub[2], sub[4]
		if !SensitiveKey(key) || val == Marker {
			return sub[0]
		}
		return sub[1] + key + sub[3] + quoteLike(val)
	})
	s = replaceSubmatches(re.flag, s, func(sub []string) string {
		if !SensitiveKey(sub[2]) || sub[4] == Marker {
			return sub[0]
		}
		return sub[1] + sub[2] + sub[3] + quoteLike(sub[4])
	})
	return s
}

// replaceSubmatches is ReplaceAllStringFunc with the submatches at hand,
// found in one pass (matching each match again would be quadratic).
func replaceSubmatches(re *regexp.Regexp, s string, repl func(sub []string) string) string {
	all := re.FindAllStringSubmatchIndex(s, -1)
	if all == nil {
		return s
	}
	var b strings.Builder
	last := 0
	sub := make([]string, re.NumSubexp()+1)
	for _, loc := range all {
		for i := range sub {
			if loc[2*i] >= 0 {
				sub[i] = s[loc[2*i]:loc[2*i+1]]
			} else {
				sub[i] = ""
			}
		}
		b.WriteString(s[last:loc[0]])
		b.WriteString(repl(sub))
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// replaceHeaders hides everything after "Authorization:" or "Cookie:" up to
// the end of the line.
func replaceHeaders(s string) string {
	var b strings.Builder
	changed := false
	for line := range strings.Lines(s) {
		body, nl := strings.CutSuffix(line, "\n")
		if k, _, ok := strings.Cut(body, ":"); ok {
			key := strings.ToLower(strings.TrimSpace(strings.Trim(strings.TrimSpace(k), `"`)))
			if i := strings.LastIndexAny(key, " \t\""); i >= 0 {
				key = key[i+1:]
			}
			if headerKeys[key] {
				idx := strings.Index(body, ":")
				rest := strings.TrimSpace(body[idx+1:])
				if rest != Marker && rest != "" {
					body = body[:idx+1] + " " + Marker
					changed = true
				}
			}
		}
		b.WriteString(body)
		if nl {
			b.WriteByte('\n')
		}
	}
	if !changed {
		return s
	}
	return b.String()
}

// quoteLike keeps the quoting of the original value around the marker.
func quoteLike(v string) string {
	switch {
	case strings.HasPrefix(v, `"`):
		return `"` + Marker + `"`
	case strings.HasPrefix(v, `'`):
		return `'` + Marker + `'`
	}
	return Marker
}

// Argv redacts a command line: the value of a sensitive flag, given as
// --flag=value or as the next argument, and any secret inside an argument.
// The result has the same length as args.
func Argv(args []string) []string {
	out := make([]string, len(args))
	hideNext := false
	for i, a := range args {
		if hideNext {
			hideNext = false
			out[i] = Marker
			continue
		}
		if len(a) > 1 && a[0] == '-' {
			name, _, hasValue := strings.Cut(a, "=")
			if SensitiveKey(name) {
				if hasValue {
					out[i] = name + "=" + Marker
					continue
				}
				if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
					hideNext = true
				}
				out[i] = a
				continue
			}
		}
		out[i] = Text(a)
	}
	return out
}

// Value redacts a decoded JSON value (as produced by encoding/json into
// any): values under sensitive keys become the marker, strings pass through
// Text. Maps and slices are copied, never modified in place.
func Value(v any) any {
	switch t := v.(type) {
	case string:
		return Text(t)
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, val := range t {
			if SensitiveKey(k) {
				switch val.(type) {
				case nil, bool:
					m[k] = val
				default:
					m[k] = Marker
				}
				continue
			}
			m[k] = Value(val)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = Value(e)
		}
		return s
	case []string:
		s := make([]string, len(t))
		for i, e := range t {
			s[i] = Text(e)
		}
		return s
	}
	return v
}
