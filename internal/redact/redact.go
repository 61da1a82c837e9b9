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
// Counts are not secrets: a key naming tokens in the plural or ending in
// a count word ("input_tokens", "max_tokens", "token_count",
// "output_tokens_details") is not sensitive unless it also names a
// password, secret, credential or key.
func SensitiveKey(name string) bool {
	ws := keyWords(name)
	if len(ws) == 0 {
		return false
	}
	var compact strings.Builder
	for _, w := range ws {
		if sensitiveWords[w] {
			return true
		}
		compact.WriteString(w)
	}
	c := compact.String()
	count := countWords(ws)
	for _, p := range sensitiveParts {
		if strings.Contains(c, p) && !(count && (p == "token" || p == "bearer" || p == "signature")) {
			return true
		}
	}
	return false
}

// countKey reports whether a key names a count or a limit.
func countKey(name string) bool { return countWords(keyWords(name)) }

// countSuffixes end a key that names an amount ("token_count", "tokenLimit").
var countSuffixes = map[string]bool{"count": true, "counts": true, "limit": true, "limits": true, "budget": true, "total": true, "usage": true, "len": true, "length": true, "size": true, "max": true, "min": true}

func countWords(ws []string) bool {
	for _, w := range ws {
		if w == "tokens" {
			return true
		}
	}
	return len(ws) > 1 && countSuffixes[ws[len(ws)-1]]
}

// keyWords splits a key into lower-case words at separators and camelCase
// boundaries ("X-Api-Key" -> x api key, "inputTokens" -> input tokens).
func keyWords(name string) []string {
	name = strings.TrimLeft(name, "-")
	var ws []string
	var word strings.Builder
	end := func() {
		if word.Len() > 0 {
			ws = append(ws, word.String())
			word.Reset()
		}
	}
	var prev rune
	for i, r := range name {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if i > 0 && unicode.IsUpper(r) && unicode.IsLower(prev) {
				end()
			}
			word.WriteRune(unicode.ToLower(r))
		default:
			end()
		}
		prev = r
	}
	end()
	return ws
}

// patterns are compiled on first use: most text (a command such as
// "make test") never gets past the trigger pre-filter, and a wrapper's
// start-up time is its speed.
type patterns struct {
	scheme, formats, pem, url, kv, flag  *regexp.Regexp
	userFlag, mysql, sshpass, prose, aws *regexp.Regexp
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
		// user:password@ in URLs, the user possibly empty (redis://:pw@host).
		url: regexp.MustCompile(`(://[^/\s:@]*:)([^/\s@]+)(@)`),
		// key=value, key: value, "key": "value" (the quote may be cut off).
		kv: regexp.MustCompile(`("?)([A-Za-z_][A-Za-z0-9_.\-]*)("?\s*[=:]\s*)(` +
			`\[REDACTED\]` +
			`|"(?:[^"\\]|\\.)*"?` +
			`|'[^']*'?` +
			`|[^\s,;&"'}\]\){\[]+)`),
		// --flag value: a sensitive flag followed by a separate value.
		flag: regexp.MustCompile(`(^|\s)(--?[A-Za-z][A-Za-z0-9_-]*)(\s+)(\[REDACTED\]|"[^"]*"?|'[^']*'?|[^\s-]\S*)`),
		// curl -u user:password, --user, --proxy-user.
		userFlag: regexp.MustCompile(`(^|\s)(-u|-U|--user|--proxy-user)(\s+|=)(["']?[^\s:'"]*:)([^\s'"]+)`),
		// mysql -pPASSWORD (the password glued to -p), in a mysql-family command.
		mysql: regexp.MustCompile(`(?i)(\b(?:mysql|mariadb)[a-z-]*\b[^\n]*?\s-p)([^\s'"]\S*)`),
		// sshpass -p PASSWORD.
		sshpass: regexp.MustCompile(`(\bsshpass\b[^\n]*?\s-p)(\s*)([^\s'"]\S*)`),
		// "the password is hunter2".
		prose: regexp.MustCompile(`(?i)\b(password|passwd|passphrase|passcode|secret|api key|token)(\s+(?:is|was|will be)\s+)(["']?)([^\s"',;.]+)`),
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
	"signature", "session", "jwt", "-u", "--user", "mysql", "mariadb",
}

func mayContainSecret(s string) bool {
	l := strings.ToLower(s)
	for _, t := range triggers {
		if strings.Contains(l, t) {
			return true
		}
	}
	return hasBase64Run(s, 40)
}

// hasBase64Run reports whether s holds a run of exactly n base64
// characters (the shape of an AWS secret access key).
func hasBase64Run(s string, n int) bool {
	run := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isB64(s[i]) {
			run++
			continue
		}
		if run == n {
			return true
		}
		run = 0
	}
	return false
}

func isB64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '/' || c == '+'
}

// replaceKeyRuns hides every run of exactly 40 base64 characters (not
// next to a '=') that looks random: a bare AWS secret access key.
func replaceKeyRuns(s string) string {
	var b strings.Builder
	last, start := 0, -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isB64(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start == 40 && (i == len(s) || s[i] != '=') && (start == 0 || s[start-1] != '=') && looksRandom(s[start:i]) {
			b.WriteString(s[last:start])
			b.WriteString(Marker)
			last = i
		}
		start = -1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// looksRandom reports whether a 40-character run mixes upper case, lower
// case and digits, as a random key does and a hex digest, a word or an
// identifier does not.
func looksRandom(s string) bool {
	var up, low, dig bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		up = up || c >= 'A' && c <= 'Z'
		low = low || c >= 'a' && c <= 'z'
		dig = dig || c >= '0' && c <= '9'
	}
	return up && low && dig
}

// proseStop are words that follow "password is" without being one.
var proseStop = map[string]bool{
	"required": true, "incorrect": true, "invalid": true, "wrong": true, "missing": true, "empty": true,
	"set": true, "unset": true, "not": true, "too": true, "correct": true, "expired": true, "needed": true,
	"optional": true, "the": true, "a": true, "an": true, "being": true, "now": true, "still": true,
	"stored": true, "hidden": true, "changed": true, "valid": true, "weak": true, "strong": true,
	"reset": true, "ok": true, "mandatory": true, "provided": true, "configured": true, "redacted": true,
	"in": true, "from": true, "at": true, "only": true, "also": true, "never": true, "always": true,
}

// Text redacts secrets in free text (a log line, an activity message, a
// malformed input line kept for a diagnostic). Text that is one JSON value
// is redacted in place (see jsonText): the result is still valid JSON with
// the same keys, and counts survive.
func Text(s string) string {
	if s == "" || !mayContainSecret(s) {
		return s
	}
	if t := strings.TrimLeft(s, " \t\r\n"); t != "" && (t[0] == '{' || t[0] == '[') {
		if out, ok := jsonText(s); ok {
			return out
		}
	}
	re := compiled()
	s = re.pem.ReplaceAllString(s, Marker)
	s = re.scheme.ReplaceAllString(s, "${1}${2}"+Marker)
	s = re.formats.ReplaceAllString(s, Marker)
	s = re.url.ReplaceAllString(s, "${1}"+Marker+"${3}")
	s = replaceSubmatches(re.userFlag, s, func(sub []string) string {
		if sub[5] == Marker {
			return sub[0]
		}
		return sub[1] + sub[2] + sub[3] + sub[4] + Marker
	})
	s = replaceSubmatches(re.mysql, s, func(sub []string) string {
		if sub[2] == Marker {
			return sub[0]
		}
		return sub[1] + Marker
	})
	s = replaceSubmatches(re.sshpass, s, func(sub []string) string {
		if sub[3] == Marker {
			return sub[0]
		}
		return sub[1] + sub[2] + Marker
	})
	s = replaceSubmatches(re.prose, s, func(sub []string) string {
		if sub[4] == "[REDACTED]" || strings.HasPrefix(sub[4], "[REDACTED") || proseStop[strings.ToLower(sub[4])] {
			return sub[0]
		}
		return sub[1] + sub[2] + sub[3] + Marker
	})
	if hasBase64Run(s, 40) {
		s = replaceKeyRuns(s)
	}
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
	hideNext, userNext := false, false
	var tool string // a mysql-family command or sshpass seen so far
	for i, a := range args {
		if hideNext {
			hideNext = false
			out[i] = Marker
			continue
		}
		if userNext {
			userNext = false
			if u, _, ok := strings.Cut(a, ":"); ok && !strings.HasPrefix(a, "-") {
				out[i] = u + ":" + Marker
				continue
			}
		}
		if t := passwordTool(a); t != "" {
			tool = t
		}
		if len(a) > 1 && a[0] == '-' {
			name, _, hasValue := strings.Cut(a, "=")
			switch {
			case tool == "sshpass" && a == "-p":
				if i+1 < len(args) {
					hideNext = true
				}
				out[i] = a
				continue
			case tool != "" && strings.HasPrefix(a, "-p") && len(a) > 2 && !strings.HasPrefix(a, "--") && a[2:] != Marker:
				out[i] = "-p" + Marker // mysql -pPASSWORD, sshpass -pPASSWORD
				continue
			case name == "-u" || name == "-U" || name == "--user" || name == "--proxy-user":
				if hasValue {
					out[i] = Text(a)
				} else {
					out[i], userNext = a, true
				}
				continue
			case SensitiveKey(name):
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

// passwordTool names commands whose -p option takes a password.
func passwordTool(arg string) string {
	base := arg[strings.LastIndexByte(arg, '/')+1:]
	switch {
	case base == "sshpass":
		return "sshpass"
	case strings.HasPrefix(base, "mysql"), strings.HasPrefix(base, "mariadb"):
		return "mysql"
	}
	return ""
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
