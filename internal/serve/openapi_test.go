package serve_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	pt "github.com/lcwrap/lcwrap/internal/projection/projectiontest"
	"github.com/lcwrap/lcwrap/internal/serve"
)

// The OpenAPI document in docs/ is checked against the server: every
// route is in it and nothing else, and each answer of a set of requests
// (each route, its errors, the stream's message kinds) has a status the
// document lists, with a body its schema accepts. The schemas are checked
// by validate below: a small hand-written validator of the JSON Schema
// keywords the document uses ($ref, type, const, enum, required,
// properties, additionalProperties, items, oneOf, minimum, maximum); a
// keyword it does not know fails the test rather than passing unchecked.

type openAPI struct {
	Paths      map[string]map[string]operation `json:"paths"`
	Components struct {
		Schemas map[string]any `json:"schemas"`
	} `json:"components"`
}

type operation struct {
	Responses map[string]struct {
		Content map[string]struct {
			Schema      any            `json:"schema"`
			DataSchemas map[string]any `json:"x-data-schemas"`
		} `json:"content"`
	} `json:"responses"`
}

func loadOpenAPI(t *testing.T) (*openAPI, map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc openAPI
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	json.Unmarshal(b, &raw)
	return &doc, raw
}

// validate checks v against schema s (see the test's comment).
func validate(root map[string]any, s any, v any, at string) error {
	sm, ok := s.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: schema is not an object", at)
	}
	known := map[string]bool{"$ref": true, "type": true, "const": true, "enum": true, "required": true, "properties": true,
		"additionalProperties": true, "items": true, "oneOf": true, "minimum": true, "maximum": true, "description": true, "default": true}
	for k := range sm {
		if !known[k] {
			return fmt.Errorf("%s: the validator does not know the keyword %q", at, k)
		}
	}
	if r, ok := sm["$ref"].(string); ok {
		name := strings.TrimPrefix(r, "#/components/schemas/")
		sub, ok := root["components"].(map[string]any)["schemas"].(map[string]any)[name]
		if !ok {
			return fmt.Errorf("%s: no schema %s", at, r)
		}
		return validate(root, sub, v, at)
	}
	if ty, ok := sm["type"]; ok {
		types := []string{}
		switch ty := ty.(type) {
		case string:
			types = append(types, ty)
		case []any:
			for _, x := range ty {
				types = append(types, x.(string))
			}
		}
		if !slices.ContainsFunc(types, func(t string) bool { return typeIs(t, v) }) {
			return fmt.Errorf("%s: %v is not of type %v", at, short(v), types)
		}
	}
	if c, ok := sm["const"]; ok && fmt.Sprint(c) != fmt.Sprint(v) {
		return fmt.Errorf("%s: %v is not %v", at, short(v), c)
	}
	if e, ok := sm["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return fmt.Sprint(x) == fmt.Sprint(v) && typeIs(jsonType(x), v) }) {
		return fmt.Errorf("%s: %v is not one of %v", at, short(v), e)
	}
	if n, ok := v.(float64); ok {
		if m, ok := sm["minimum"].(float64); ok && n < m {
			return fmt.Errorf("%s: %v < %v", at, n, m)
		}
		if m, ok := sm["maximum"].(float64); ok && n > m {
			return fmt.Errorf("%s: %v > %v", at, n, m)
		}
	}
	if one, ok := sm["oneOf"].([]any); ok {
		var errs []string
		match := 0
		for i, sub := range one {
			if err := validate(root, sub, v, fmt.Sprintf("%s(oneOf %d)", at, i)); err != nil {
				errs = append(errs, err.Error())
			} else {
				match++
			}
		}
		if match != 1 {
			return fmt.Errorf("%s: %d of oneOf match: %s", at, match, strings.Join(errs, "; "))
		}
	}
	if obj, ok := v.(map[string]any); ok {
		for _, r := range asSlice(sm["required"]) {
			if _, ok := obj[r.(string)]; !ok {
				return fmt.Errorf("%s: %q is missing", at, r)
			}
		}
		props, _ := sm["properties"].(map[string]any)
		for k, x := range obj {
			if ps, ok := props[k]; ok {
				if err := validate(root, ps, x, at+"."+k); err != nil {
					return err
				}
				continue
			}
			switch ap := sm["additionalProperties"].(type) {
			case bool:
				if !ap {
					return fmt.Errorf("%s: %q is not in the document", at, k)
				}
			case map[string]any:
				if err := validate(root, ap, x, at+"."+k); err != nil {
					return err
				}
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if it, ok := sm["items"]; ok {
			for i, x := range arr {
				if err := validate(root, it, x, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func jsonType(x any) string {
	switch x.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case nil:
		return "null"
	}
	return "object"
}

func typeIs(t string, v any) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		n, ok := v.(float64)
		return ok && n == math.Trunc(n)
	}
	return false
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 120 {
		b = append(b[:120], "…"...)
	}
	return string(b)
}

// docPath maps a request path to the document's path.
func docPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "/v1/children/"); ok {
		if strings.HasSuffix(rest, "/cancel") {
			return "/v1/children/{id}/cancel"
		}
		return "/v1/children/{id}"
	}
	return p
}

// check finds the operation of method and path and checks the answer.
func (c *conformance) check(t *testing.T, method, path string, status int, ctype string, body []byte) {
	t.Helper()
	p, _, _ := strings.Cut(path, "?")
	op, ok := c.doc.Paths[docPath(p)][strings.ToLower(method)]
	if !ok {
		t.Errorf("%s %s: not in the document", method, p)
		return
	}
	resp, ok := op.Responses[strconv.Itoa(status)]
	if !ok {
		t.Errorf("%s %s: status %d is not in the document: %s", method, path, status, body)
		return
	}
	c.seen[method+" "+docPath(p)+" "+strconv.Itoa(status)] = true
	mt, _, _ := strings.Cut(ctype, ";")
	content, ok := resp.Content[mt]
	if !ok {
		t.Errorf("%s %s %d: content type %q is not in the document", method, path, status, ctype)
		return
	}
	if mt != "application/json" {
		return
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("%s %s %d: not JSON: %v", method, path, status, err)
		return
	}
	if err := validate(c.raw, content.Schema, v, method+" "+path); err != nil {
		t.Errorf("%d: %v", status, err)
	}
}

type conformance struct {
	doc  *openAPI
	raw  map[string]any
	seen map[string]bool
}

func TestOpenAPI(t *testing.T) {
	doc, raw := loadOpenAPI(t)
	c := &conformance{doc: doc, raw: raw, seen: map[string]bool{}}
	routes := serve.Routes()
	for p, m := range routes {
		if _, ok := doc.Paths[p][strings.ToLower(m)]; !ok {
			t.Errorf("route %s %s is not in docs/openapi.json", m, p)
		}
	}
	for p, ops := range doc.Paths {
		for m := range ops {
			if !strings.EqualFold(routes[p], m) {
				t.Errorf("docs/openapi.json has %s %s, which the server does not serve", m, p)
			}
		}
	}
	// The error codes the server has are the document's.
	codes := raw["components"].(map[string]any)["schemas"].(map[string]any)["ErrorAnswer"].(map[string]any)["properties"].(map[string]any)["error"].(map[string]any)["properties"].(map[string]any)["code"].(map[string]any)["enum"].([]any)
	for _, code := range []string{serve.CodeUnauthorized, serve.CodeBadHost, serve.CodeBadOrigin, serve.CodeNotFound, serve.CodeMethod, serve.CodeBadRequest, serve.CodeBadCursor,
		serve.CodeTooLarge, serve.CodeTooManyStreams, serve.CodeReadOnly, serve.CodeUnknownChild, serve.CodeNoJournal, serve.CodeJournal, serve.CodeNoAuthority,
		serve.CodeNotRunning, serve.CodeNotStarted, serve.CodeWrapperGone, serve.CodeNotRecorded, serve.CodeNotDelivered, serve.CodeInternal} {
		if !slices.Contains(codes, any(code)) {
			t.Errorf("error code %s is not in the document", code)
		}
	}

	j := filepath.Join(t.TempDir(), "journal.jsonl")
	wrapper(t, j, "job")
	pt.AppendJournal(t, j, pt.AdoptedCreated("adopted", pt.LocalIdentity(os.Getpid(), 1)))
	pt.AppendJournal(t, j, events("a", 1, 3)...)
	pt.AppendJournal(t, j, pt.WithActivity(pt.Ev("a", 4, event.KindStateChanged, event.StateWaiting), "approve?"))
	pt.AppendJournal(t, j, events("b", 1, 3)...)
	pt.AppendJournal(t, j, pt.Ev("b", 4, event.KindTerminal, event.StateFailed))
	ts := start(t, serve.Config{Journal: j, MaxStreams: 1})
	ro := start(t, serve.Config{Journal: j, ReadOnly: true})
	none := start(t, serve.Config{Journal: filepath.Join(t.TempDir(), "none.jsonl")})
	type req struct {
		srv          *testServer
		method, path string
		hdr          map[string]string
		body         string
	}
	for _, r := range []req{
		{ts, "GET", "/", nil, ""}, {ts, "GET", "/app.js", nil, ""}, {ts, "GET", "/app.css", nil, ""},
		{ts, "GET", "/", map[string]string{"Host": "evil.example"}, ""},
		{ts, "GET", "/v1/children", nil, ""}, {ts, "GET", "/v1/children?all=1", nil, ""}, {ts, "GET", "/v1/children?all=2", nil, ""}, {ts, "GET", "/v1/children?cursor=x", nil, ""}, {ts, "GET", "/v1/children?cursor=3", nil, ""},
		{ts, "GET", "/v1/children", map[string]string{"Authorization": "Bearer no"}, ""},
		{none, "GET", "/v1/children", nil, ""},
		{ts, "GET", "/v1/children/a", nil, ""}, {ts, "GET", "/v1/children/b?limit=1", nil, ""}, {ts, "GET", "/v1/children/zz", nil, ""}, {ts, "GET", "/v1/children/a?limit=-1", nil, ""},
		{ts, "GET", "/v1/snapshot", nil, ""}, {ts, "GET", "/v1/snapshot?reason=reconnect", nil, ""}, {ts, "GET", "/v1/snapshot?reason=x", nil, ""}, {none, "GET", "/v1/snapshot", nil, ""},
		{ts, "GET", "/v1/events?after=x", nil, ""},
		{ts, "POST", "/v1/children/zz/cancel", nil, ""}, {ts, "POST", "/v1/children/adopted/cancel", nil, ""}, {ts, "POST", "/v1/children/b/cancel", nil, ""},
		{ts, "POST", "/v1/children/a/cancel", map[string]string{"Origin": "http://evil.example"}, ""},
		{ts, "POST", "/v1/children/a/cancel", nil, `{"why":1}`}, {ts, "POST", "/v1/children/a/cancel", nil, strings.Repeat(" ", 20<<10)},
		{ro, "POST", "/v1/children/job/cancel", nil, ""},
		{ts, "POST", "/v1/children/job/cancel", nil, `{"reason":"conformance"}`},
	} {
		code, hdr, b := do(t, r.method, r.srv.URL+r.path, r.hdr, r.body)
		c.check(t, r.method, r.path, code, hdr.Get("Content-Type"), b)
	}
	// The stream: its messages, and a second stream past the bound.
	s := openStream(t, ts.URL+"/v1/events", nil)
	c.seen["GET /v1/events 200"] = true
	code, hdr, b := do(t, "GET", ts.URL+"/v1/events", nil, "")
	c.check(t, "GET", "/v1/events", code, hdr.Get("Content-Type"), b)
	ds := doc.Paths["/v1/events"]["get"].Responses["200"].Content["text/event-stream"].DataSchemas
	pt.AppendRaw(t, j, "not an event\n")
	kinds := map[string]bool{}
	deadline := time.Now().Add(20 * time.Second)
	for !kinds["blocked"] || !kinds["message"] {
		if time.Now().After(deadline) {
			t.Fatalf("stream kinds seen: %v", kinds)
		}
		m := s.next(t, 20*time.Second)
		name := m.Event
		if name == "" {
			name = "message"
		}
		kinds[name] = true
		var v any
		if err := json.Unmarshal([]byte(m.Data), &v); err != nil {
			t.Fatalf("%s data is not JSON: %s", name, m.Data)
		}
		if err := validate(raw, ds[name], v, "event "+name); err != nil {
			t.Error(err)
		}
		if name == "message" {
			if _, _, err := event.Parse([]byte(m.Data)); err != nil {
				t.Errorf("a message is not a valid event: %v", err)
			}
		}
	}
	// Every operation's success answer was seen.
	for p, ops := range doc.Paths {
		for m, op := range ops {
			for st := range op.Responses {
				if st[0] == '2' && !c.seen[strings.ToUpper(m)+" "+p+" "+st] {
					t.Errorf("%s %s %s: never checked", m, p, st)
				}
			}
		}
	}
}
