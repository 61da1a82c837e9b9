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
	"password", "passwd", "passphrase", "passcode", "secret", "token", "apikey",
	"authorization", "authentication", "credential", "cookie",
	"privatekey", "accesskey", "sessionkey", "bearer", "signature",
	"accountkey", "clientkey", "masterkey", "signingkey", "encryptionkey", "licensekey",
}

// sensitiveWords must equal a whole word of the key ("basic-auth" but not
// "author"; "sig" of an Azure SAS URL but not "signal").
func sensitiveWords(w string) bool {
	switch w {
	case "auth", "pwd", "pass", "pw", "oauth", "jwt", "sig", "otp", "totp", "pat", "cred",
		"creds":
		return true
	}
	return false
}

// SensitiveKey reports whether a key or flag name ("--api-key",
// "GITHUB_TOKEN", "clientSecret") names a value that must be hidden.
// Counts are not secrets: a key naming tokens in the plural or ending in
// a count word ("input_tokens", "max_tokens", "token_count",
// "output_tokens_details") is not sensitive unless it also names a
// password, secret, credential or key; "refresh_tokens" names tokens, not
// a count. A key written as words with spaces is a label for people (a
// reason, a heading: the hook server's "missing or wrong token"
// rejections) and is read the same way: "token" in it is not sensitive
// unless a kind of token precedes it ("refresh token"). A key naming where a secret comes from or how it is handled
// ("--password-stdin", "--password-file", "--ask-pass", "token_type") is
// not sensitive either: its value is a switch, a path or a name.
func SensitiveKey(name string) bool {
	ws := keyWords(name)
	if len(ws) == 0 {
		return false
	}
	if len(ws) > 1 && (indirectFirst(ws[0]) || indirectLast(ws[len(ws)-1])) {
		return false
	}
	var compact strings.Builder
	for _, w := range ws {
		if sensitiveWords(w) {
			return true
		}
		compact.WriteString(w)
	}
	c := compact.String()
	count := countWords(ws) || proseLabel(name, ws)
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
func countSuffixes(w string) bool {
	switch w {
	case "count", "counts", "limit", "limits", "budget", "total", "usage", "len", "length",
		"size", "max", "min":
		return true
	}
	return false
}

// tokenKinds name kinds of credentials: "refresh_tokens" are tokens, where
// "input_tokens" is a count.
func tokenKinds(w string) bool {
	switch w {
	case "refresh", "access", "api", "auth", "bearer", "session", "id", "csrf", "xsrf", "oauth",
		"personal", "service", "client", "deploy", "device", "bot", "app", "github", "gitlab",
		"npm", "slack", "registration", "invite", "reset", "verification", "security", "push",
		"jwt", "secret", "private", "user", "runner":
		return true
	}
	return false
}

func countWords(ws []string) bool {
	if len(ws) > 1 && countSuffixes(ws[len(ws)-1]) {
		return true
	}
	for i, w := range ws {
		if w == "tokens" && !(i > 0 && tokenKinds(ws[i-1])) {
			return true
		}
	}
	return false
}

// proseLabel reports whether a key is a label written for people, words
// with spaces between them, that names no kind of token ("missing or wrong
// token" is a reason; "refresh token" names one).
func proseLabel(name string, ws []string) bool {
	if !strings.Contains(name, " ") {
		return false
	}
	for i, w := range ws {
		if (w == "token" || w == "tokens") && i > 0 && tokenKinds(ws[i-1]) {
			return false
		}
	}
	return true
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

// grammar holds the patterns of lcwrap's own grammar, compiled on first
// use: most text (a command such as "make test") never wakes them, and a
// wrapper's start-up time is its speed.
type grammar struct {
	scheme, url, kvKey, kvValue, prose, netrc, netrcValue *regexp.Regexp
}

var (
	grammarOnce sync.Once
	grammarRE   *grammar
)

func compiledGrammar() *grammar {
	grammarOnce.Do(func() { grammarRE = newGrammar() })
	return grammarRE
}

func newGrammar() *grammar {
	return &grammar{
		// "Bearer abc", "Basic abc": keep the scheme, hide the credential.
		scheme: regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)([A-Za-z0-9._~+/=-]{6,})`),
		// user:password@ in URLs, the user possibly empty (redis://:pw@host);
		// the password runs to the last @ before the host (p@ss is one).
		url: regexp.MustCompile(`(://[^/\s:@]*:)([^/\s]+)(@)`),
		// key=value, key: value, "key": "value", 'key' => 'value', key := value
		// (the quote may be cut off).
		kvKey: regexp.MustCompile(`(["']?)([A-Za-z_][A-Za-z0-9_.\-]*)(["']?\s*(?::=|=>|[=:])\s*)`),
		kvValue: regexp.MustCompile(`^(?:\[REDACTED\]` +
			`|"(?:[^"\\]|\\.)*"?` +
			`|'[^']*'?` +
			`|[^\s,;&"'}\]\){\[]+)`),
		// "the password is hunter2".
		prose: regexp.MustCompile(`(?i)\b(password|passwd|passphrase|passcode|secret|api key|token)(\s+(?:is|was|will be)\s+)(["']?)([^\s"',;.]+)`),
		// A .netrc entry: machine NAME (or default) and its members.
		netrc:      regexp.MustCompile(`(?i)(?:^|\s)(?:machine\s+\S+|default)((?:\s+(?:login|account|port|password|passwd)\s+\S+)+)`),
		netrcValue: regexp.MustCompile(`(?i)\b(password|passwd|account)(\s+)(\S+)`),
	}
}

// headerKeys name header-style keys whose whole remaining line is the
// secret.
func headerKeys(w string) bool {
	switch w {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
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

// schemeProse are words that follow "Bearer" or "Basic" in prose
// ("Bearer tokens are", "Basic authentication").
func schemeProse(w string) bool {
	switch w {
	case "token", "tokens", "auth", "authentication", "authorization", "scheme", "schemes",
		"header", "headers", "credential", "credentials", "usage", "access", "support",
		"supported", "example", "examples", "setup", "format", "string", "strings", "value",
		"values", "prefix", "type", "types", "flow", "flows", "config", "configuration",
		"version", "level", "plan", "mode", "method", "methods":
		return true
	}
	return false
}

// proseAfterScheme reports whether the word after "Bearer" or "Basic" is
// prose rather than a credential: a word of schemeProse, or, after
// "Basic", a word that does not look like base64 of user:password (no
// digit, symbol or upper-case letter after the first).
func proseAfterScheme(scheme, w string) bool {
	if schemeProse(strings.ToLower(w)) {
		return true
	}
	if !strings.EqualFold(scheme, "basic") || len(w) >= 24 {
		return false
	}
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= '0' && c <= '9', c == '+', c == '/', c == '=', c == '.', c == '_', c == '~', c == '-':
			return false
		case c >= 'A' && c <= 'Z' && i > 0:
			return false
		}
	}
	return true
}

// proseStop are words that follow "password is" without being one.
func proseStop(w string) bool {
	switch w {
	case "required", "incorrect", "invalid", "wrong", "missing", "empty", "set", "unset", "not",
		"too", "correct", "expired", "needed", "optional", "the", "a", "an", "being", "now",
		"still", "stored", "hidden", "changed", "valid", "weak", "strong", "reset", "ok",
		"mandatory", "provided", "configured", "redacted", "in", "from", "at", "only", "also",
		"never", "always", "revoked", "rotated", "refreshed", "generated", "created",
		"deleted", "sent", "saved", "used", "updated", "accepted", "rejected", "verified",
		"encrypted", "hashed", "masked", "shown", "printed", "logged", "cached", "present",
		"absent", "unknown", "null", "none", "blank", "short", "long", "known", "this", "that",
		"your", "my", "its", "their", "our", "no", "same":
		return true
	}
	return false
}

// Text redacts secrets in free text (a log line, an activity message, a
// malformed input line kept for a diagnostic). Text that is one JSON value
// is redacted in place (see jsonText): the result is still valid JSON with
// the same keys, and counts survive.
func Text(s string) string {
	if s == "" {
		return s
	}
	h, keyRun := scan(s)
	if h.empty() && !keyRun {
		return s
	}
	return textOrJSON(s, &h, keyRun)
}

// textOrJSON redacts s, which the rules in h apply to, as JSON when it is
// one JSON value and as text otherwise.
func textOrJSON(s string, h *hits, keyRun bool) string {
	if t := strings.TrimLeft(s, " \t\r\n"); t != "" && (t[0] == '{' || t[0] == '[') {
		if out, ok := jsonText(s); ok {
			return out
		}
	}
	return text(s, h, keyRun)
}

// text redacts s, whose scan found h and keyRun.
func text(s string, h *hits, keyRun bool) string {
	s = applyTokens(s, h)
	kv, tools := h.has(ruleKeyValue), h.has(ruleToolFlags)
	var g *grammar
	if kv || h.has(ruleURLUserinfo) {
		g = compiledGrammar()
	}
	if kv {
		s = replaceSubmatches(g.scheme, s, func(sub []string) string {
			if sub[3] == Marker || proseAfterScheme(sub[1], sub[3]) {
				return sub[0]
			}
			return sub[1] + sub[2] + Marker
		})
	}
	if h.has(ruleURLUserinfo) {
		s = replaceSubmatches(g.url, s, func(sub []string) string {
			if sub[2] == Marker {
				return sub[0]
			}
			return sub[1] + Marker + sub[3]
		})
	}
	if kv || tools {
		s = textCommandSecrets(s, tools)
	}
	if kv {
		s = replaceSubmatches(g.prose, s, func(sub []string) string {
			if strings.HasPrefix(sub[4], "[REDACTED") || proseStop(strings.ToLower(sub[4])) {
				return sub[0]
			}
			return sub[1] + sub[2] + sub[3] + Marker
		})
	}
	if keyRun {
		s = replaceKeyRuns(s)
	}
	if kv {
		s = replaceHeaders(s)
		s = replaceKeyValues(g, s)
		if h.has(ruleNetrc) {
			s = replaceNetrc(g, s)
		}
	}
	return s
}

// replaceKeyValues hides the value of every key=value pair whose key is
// sensitive, or names a provider with a value of its key's shape. A pair
// whose key is neither is read on from its value, so that a pair inside a
// value is found (--from-literal=password=X, --set-string=db.password=X).
// Values are matched only after a key that hides them, so the text is read
// once: a long run of a=a=a=... costs no more than its length.
func replaceKeyValues(g *grammar, s string) string {
	var b strings.Builder
	last, pos := 0, 0
	for pos < len(s) {
		loc := g.kvKey.FindStringSubmatchIndex(s[pos:])
		if loc == nil {
			break
		}
		key := s[pos+loc[4] : pos+loc[5]]
		vFrom := pos + loc[1]
		pos = vFrom
		sensitive := SensitiveKey(key)
		if !sensitive && !mayAssign(key) {
			continue
		}
		v := g.kvValue.FindStringIndex(s[vFrom:])
		if v == nil {
			continue
		}
		vTo := vFrom + v[1]
		val := s[vFrom:vTo]
		if val == Marker || !sensitive && !assignSecret(key, unquote(val)) {
			continue
		}
		b.WriteString(s[last:vFrom])
		b.WriteString(quoteLike(val))
		last, pos = vTo, vTo
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func unquote(v string) string {
	if len(v) > 0 && (v[0] == '"' || v[0] == '\'') {
		v = v[1:]
		if len(v) > 0 && (v[len(v)-1] == '"' || v[len(v)-1] == '\'') {
			v = v[:len(v)-1]
		}
	}
	return v
}

// replaceNetrc hides the passwords of .netrc entries (machine HOST login
// USER password SECRET, on one line or several); an entry names a login.
func replaceNetrc(g *grammar, s string) string {
	all := g.netrc.FindAllStringSubmatchIndex(s, -1)
	if all == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, loc := range all {
		from, to := loc[2], loc[3]
		members := s[from:to]
		if !strings.Contains(strings.ToLower(members), "login") {
			continue
		}
		b.WriteString(s[last:from])
		b.WriteString(replaceSubmatches(g.netrcValue, members, func(sub []string) string {
			if sub[3] == Marker {
				return sub[0]
			}
			return sub[1] + sub[2] + Marker
		}))
		last = to
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
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
			if i := strings.LastIndexAny(key, " \t\"'"); i >= 0 {
				key = key[i+1:]
			}
			if headerKeys(key) {
				idx := strings.Index(body, ":")
				end := len(body)
				// A quoted header (curl -H 'Authorization: X') ends at its quote.
				if kt := strings.TrimRight(k, " \t"); len(kt) > len(key) {
					if q := kt[len(kt)-len(key)-1]; q == '\'' || q == '"' {
						if j := strings.IndexByte(body[idx+1:], q); j >= 0 {
							end = idx + 1 + j
						}
					}
				}
				rest := strings.TrimSpace(body[idx+1 : end])
				if rest != Marker && rest != "" {
					body = body[:idx+1] + " " + Marker + body[end:]
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

// Argv redacts a command line: the value of a sensitive option, given as
// --flag=value or as the next argument; the password options of the tools
// in tools.txt (redis-cli -a X, mysql -pX, curl -u user:X, sqlplus
// user/X@db, htpasswd -b file user X); and any secret inside an argument
// (a keyword in one argument wakes its rules for all of them).
// The result has the same length as args.
func Argv(args []string) []string {
	out := make([]string, len(args))
	runs := make([]bool, len(args))
	var all hits
	for i, a := range args {
		var h hits
		h, runs[i] = scan(a)
		all.or(&h)
	}
	var spans []span
	if all.has(ruleKeyValue) || all.has(ruleToolFlags) {
		spans = commandSecrets(args, all.has(ruleToolFlags))
	}
	for i, a := range args {
		if len(spans) > 0 && spans[0].word == i {
			sp := spans[0]
			spans = spans[1:]
			to := len(a)
			if sp.to >= 0 {
				to = sp.to
			}
			out[i] = a[:sp.from] + Marker + a[to:]
			continue
		}
		switch {
		case all.empty() && !runs[i]:
			out[i] = a
		default:
			// The rules that any argument woke apply to every argument:
			// a keyword may stand in one argument and its key in the next
			// (gitleaks' facebook rule).
			out[i] = textOrJSON(a, &all, runs[i])
		}
	}
	return out
}

// Value redacts a decoded JSON value (as produced by encoding/json into
// any): values under sensitive keys become the marker, strings pass through
// Text, a string given to a key named after a provider is hidden when it
// has that provider's key shape. Maps and slices are copied, never
// modified in place.
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
			if s, ok := val.(string); ok && assignSecret(k, s) {
				m[k] = Marker
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

// indirectFirst and indirectLast are words that make a key name not a
// secret but where one comes from or how it is handled: --password-stdin
// and --ask-pass are switches, --password-file=PATH names a file,
// token_type is "Bearer".
func indirectFirst(w string) bool {
	switch w {
	case "no", "ask", "prompt", "with":
		return true
	}
	return false
}

func indirectLast(w string) bool {
	switch w {
	case "stdin", "file", "files", "path", "paths", "dir", "env", "fd", "prompt", "helper",
		"cmd", "command", "url", "uri", "endpoint", "name", "type", "policy", "mode", "method",
		"store", "required", "ttl", "expiry", "expires", "expire", "expiration", "source",
		"process", "format", "domain", "length", "rotation":
		return true
	}
	return false
}
