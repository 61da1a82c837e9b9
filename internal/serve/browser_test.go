package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	pt "github.com/lcwrap/lcwrap/internal/projection/projectiontest"
	"github.com/lcwrap/lcwrap/internal/serve"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// cdp drives headless Chromium over --remote-debugging-pipe (the DevTools
// protocol as NUL-separated JSON on fds 3 and 4): no library, no port.
type cdp struct {
	t       *testing.T
	cmd     *exec.Cmd
	w       *os.File
	mu      sync.Mutex
	next    int
	waiting map[int]chan cdpReply
	session string
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func chromium(t *testing.T, url string) *cdp {
	t.Helper()
	bin := testtool.Need(t, "chromium", "apt-get install chromium")
	toChrome, ours, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	theirs, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir="+t.TempDir(),
		"--window-size=1280,800", "--hide-scrollbars", "--remote-debugging-pipe", url)
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toChrome.Close()
	fromChrome.Close()
	c := &cdp{t: t, cmd: cmd, w: ours, waiting: map[int]chan cdpReply{}}
	t.Cleanup(func() {
		ours.Close()
		cmd.Process.Kill()
		cmd.Wait()
		cancel()
		if t.Failed() {
			t.Logf("chromium's stderr:\n%s", stderr.String())
		}
	})
	go func() {
		r := bufio.NewReader(theirs)
		for {
			b, err := r.ReadBytes(0)
			if err != nil {
				return
			}
			var m struct {
				ID int `json:"id"`
				cdpReply
			}
			if json.Unmarshal(b[:len(b)-1], &m) != nil || m.ID == 0 {
				continue // an event
			}
			c.mu.Lock()
			ch := c.waiting[m.ID]
			delete(c.waiting, m.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- m.cdpReply
			}
		}
	}()
	var targets struct {
		TargetInfos []struct{ TargetID, Type, URL string } `json:"targetInfos"`
	}
	eventuallyOK(t, 60*time.Second, "a page target", func() bool {
		c.call("Target.getTargets", nil, &targets)
		for _, ti := range targets.TargetInfos {
			if ti.Type == "page" {
				var at struct{ SessionID string }
				c.call("Target.attachToTarget", map[string]any{"targetId": ti.TargetID, "flatten": true}, &at)
				c.session = at.SessionID
				return c.session != ""
			}
		}
		return false
	})
	return c
}

// call sends one command (to the page once attached) and decodes its result.
func (c *cdp) call(method string, params any, out any) {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan cdpReply, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if params == nil {
		msg["params"] = map[string]any{}
	}
	if c.session != "" && method != "Target.getTargets" && method != "Target.attachToTarget" {
		msg["sessionId"] = c.session
	}
	b, _ := json.Marshal(msg)
	if _, err := c.w.Write(append(b, 0)); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			c.t.Fatalf("%s: %s", method, r.Error.Message)
		}
		if out != nil {
			json.Unmarshal(r.Result, out)
		}
	case <-time.After(60 * time.Second):
		c.t.Fatalf("%s: no answer", method)
	}
}

// eval evaluates expr in the page and returns its value as JSON text.
func (c *cdp) eval(expr string) string {
	c.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
	}
	c.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r)
	return string(r.Result.Value)
}

func eventuallyOK(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	eventually(t, d, what, cond)
}

const stateOf = `(() => { const r = document.querySelector('tr[data-child="%s"]'); return r ? r.dataset.state : null })()`

// The live page in headless Chromium: the token in the URL fragment (gone
// from the address bar once read), the tree drawn from the API, and a
// child turning waiting shown as waiting — the banner, the amber row —
// without a reload, from the event stream, while the test appends.
func TestLivePageInChromium(t *testing.T) {
	j := pt.WriteJournal(t, events("build-7", 1, 4)...)
	sub := events("build-7-tests", 1, 3)
	for i := range sub {
		sub[i].Lineage.ParentChildID = "build-7"
		sub[i].Lineage.RootChildID = "build-7"
	}
	pt.AppendJournal(t, j, sub...)
	pt.AppendJournal(t, j, events("lint", 1, 3)...)
	pt.AppendJournal(t, j, pt.Ev("lint", 4, event.KindTerminal, event.StateCompleted))
	ts := start(t, serve.Config{Journal: j})
	c := chromium(t, ts.URL+"/#token="+token)
	eventually(t, 60*time.Second, "build-7-tests shown running", func() bool {
		return c.eval(fmt.Sprintf(stateOf, "build-7-tests")) == `"running"`
	})
	if h := c.eval(`location.hash`); h != `""` {
		t.Errorf("the fragment is still in the address bar: %s", h)
	}
	if c.eval(`document.getElementById('waiting').hidden`) != "true" {
		t.Error("the waiting banner shows while nothing waits")
	}
	c.eval(`window.notReloaded = true`)
	pt.AppendJournal(t, j, pt.WithActivity(pt.Ev("build-7-tests", 4, event.KindStateChanged, event.StateWaiting), "Bash: rm -rf build/ — approve?"))
	for deadline := time.Now().Add(30 * time.Second); c.eval(fmt.Sprintf(stateOf, "build-7-tests")) != `"waiting"`; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("build-7-tests not shown waiting within 30s; the page says %s; timeline %s", c.eval(`document.getElementById('conn').textContent`), c.eval(`document.getElementById('timeline').textContent`))
		}
	}
	if c.eval(`window.notReloaded === true`) != "true" {
		t.Fatal("the page was reloaded")
	}
	if c.eval(`document.getElementById('waiting').hidden`) != "false" {
		t.Error("no waiting banner")
	}
	if got := c.eval(`getComputedStyle(document.querySelector('tr[data-child="build-7-tests"] .badge')).backgroundColor`); got != `"rgb(240, 180, 0)"` {
		t.Errorf("the waiting badge's colour: %s", got)
	}
	var newest string
	json.Unmarshal([]byte(c.eval(`document.querySelector('#timeline li').textContent`)), &newest)
	if got := newest; !bytes.Contains([]byte(got), []byte("build-7-tests  state_changed → waiting")) {
		t.Errorf("the timeline's newest line: %s", got)
	}
	var shot struct{ Data string }
	c.call("Page.captureScreenshot", map[string]any{"format": "png"}, &shot)
	b, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	amber := 0
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if cr>>8 == 0xf0 && cg>>8 == 0xb4 && cb>>8 == 0 {
				amber++
			}
		}
	}
	if amber < 50 {
		t.Errorf("the screenshot shows little waiting amber: %d points", amber)
	}
	if p := os.Getenv("LCWRAP_SERVE_SHOT"); p != "" {
		os.WriteFile(p, b, 0o644)
	}
}

// Without a fragment the page asks for the token once; a wrong one is
// refused and asked again.
func TestLivePageTypedToken(t *testing.T) {
	j := pt.WriteJournal(t, events("a", 1, 3)...)
	ts := start(t, serve.Config{Journal: j})
	c := chromium(t, ts.URL+"/")
	eventually(t, 60*time.Second, "the token form", func() bool {
		return c.eval(`document.getElementById('login') && !document.getElementById('login').hidden`) == "true"
	})
	c.eval(`document.getElementById('token').value = 'wrong'; document.getElementById('login').requestSubmit()`)
	eventually(t, 30*time.Second, "the refusal", func() bool {
		return c.eval(`document.getElementById('loginerr').textContent`) == `"The token was refused."`
	})
	c.eval(fmt.Sprintf(`document.getElementById('token').value = %q; document.getElementById('login').requestSubmit()`, token))
	eventually(t, 30*time.Second, "the tree", func() bool {
		return c.eval(fmt.Sprintf(stateOf, "a")) == `"running"`
	})
}
