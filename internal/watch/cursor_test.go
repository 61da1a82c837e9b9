package watch_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/watch"
)

func TestCursorRoundTrip(t *testing.T) {
	for _, c := range []watch.Cursor{
		{Input: "/j.jsonl"},
		{Input: "/j.jsonl", Position: watch.Position{Line: 12, EventID: "e/c/3"}, Stale: []string{"stale/c/e/c/3"}},
		{Input: "/gw", Position: watch.Position{Fleet: "gateway.jsonl:20931:3:9f3a0c1b2d4e5f60"}},
	} {
		c.Schema = watch.CursorSchema
		got, err := watch.ParseCursor(c.Marshal())
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Fatalf("ParseCursor(Marshal(%+v)) = %+v, %v", c, got, err)
		}
	}
}

func TestParseCursorRefuses(t *testing.T) {
	for in, why := range map[string]string{
		``:                                   "EOF",
		`{}`:                                 "schema",
		`[]`:                                 "cannot unmarshal",
		`{"schema":"lcwrap-watch-cursor/1"}`: "no input",
		`{"schema":"lcwrap-watch-cursor/2","input":"j"}`:                                         "schema",
		`{"schema":"lcwrap-watch-cursor/1","input":"j","extra":1}`:                               "unknown field",
		`{"schema":"lcwrap-watch-cursor/1","input":"j","position":{"line":-1}}`:                  "line -1",
		`{"schema":"lcwrap-watch-cursor/1","input":"j","position":{"eventId":"x"}}`:              "without a line",
		`{"schema":"lcwrap-watch-cursor/1","input":"j","position":{"line":1,"fleet":"a:1:1:0"}}`: "both",
		`{"schema":"lcwrap-watch-cursor/1","input":"j","position":{"fleet":"nope"}}`:             "fleet cursor",
		`{"schema":"lcwrap-watch-cursor/1","input":"j","stale":["x"]}`:                           "not a stale id",
		`{"schema":"lcwrap-watch-cursor/1","input":"j"} {}`:                                      "more than one",
	} {
		_, err := watch.ParseCursor([]byte(in))
		if !errors.Is(err, watch.ErrCursorFile) || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseCursor(%q) = %v, want an error saying %q", in, err, why)
		}
	}
}

// The cursor file is written as every file a user names is: never renamed
// over a symlink; absent is no error.
func TestSaveLoadCursor(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c")
	if _, ok, err := watch.LoadCursor(p); ok || err != nil {
		t.Fatalf("no file: %v %v", ok, err)
	}
	c := watch.Cursor{Input: "/j", Position: watch.Position{Line: 3, EventID: "e"}}
	if err := watch.SaveCursor(p, c); err != nil {
		t.Fatal(err)
	}
	got, ok, err := watch.LoadCursor(p)
	if !ok || err != nil || got.Position != c.Position {
		t.Fatalf("LoadCursor = %+v %v %v", got, ok, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	if err := watch.SaveCursor(link, c); err == nil {
		t.Fatal("a symlink was written through")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("the symlink's target changed: %q", b)
	}
	os.WriteFile(filepath.Join(dir, "bad"), []byte("{"), 0o600)
	if _, _, err := watch.LoadCursor(filepath.Join(dir, "bad")); !errors.Is(err, watch.ErrCursorFile) {
		t.Fatalf("a bad file: %v", err)
	}
}

// FuzzParseCursor: any bytes are a cursor or an error, never a panic; a
// cursor marshals to bytes that parse to itself.
func FuzzParseCursor(f *testing.F) {
	f.Add([]byte(`{"schema":"lcwrap-watch-cursor/1","input":"/j","position":{"line":12,"eventId":"e"},"stale":["stale/c/e"]}`))
	f.Add([]byte(`{"schema":"lcwrap-watch-cursor/1","input":"/gw","position":{"fleet":"gateway.jsonl:20931:3:9f3a0c1b2d4e5f60"}}`))
	f.Add([]byte(`{"schema":"lcwrap-watch-cursor/1","input":"j","position":{"line":1e3}}`))
	f.Add([]byte("\x00{"))
	f.Add([]byte(`{"schema":"lcwrap-watch-cursor/1","input":"j","stale":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := watch.ParseCursor(b)
		if err != nil {
			if !errors.Is(err, watch.ErrCursorFile) {
				t.Fatalf("an error that is not ErrCursorFile: %v", err)
			}
			return
		}
		again, err := watch.ParseCursor(c.Marshal())
		if err != nil || !reflect.DeepEqual(again, c) {
			t.Fatalf("round trip: %+v → %+v, %v", c, again, err)
		}
	})
}
