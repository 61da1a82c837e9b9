package supervise

import (
	"bytes"
	"os"
	"testing"
)

// Interpose is the one place that decides which output streams get a
// Stream: those events share, those with a tap, those Run must see; one
// Stream for stdout and stderr that are one file.
func TestInterposeDecides(t *testing.T) {
	dir := t.TempDir()
	a, err := os.Create(dir + "/a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := os.Create(dir + "/b")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	a2, err := os.OpenFile(dir+"/a", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close()
	tap := &bytes.Buffer{}
	cases := []struct {
		name             string
		o                Outputs
		streams, sinks   int
		direct, messages [2]bool // stdout, stderr: the real file given; messages on the stream
		merged           bool
	}{
		{"nothing to see", Outputs{Stdout: Output{File: a}, Stderr: Output{File: b}}, 0, 0, [2]bool{true, true}, [2]bool{}, false},
		{"events on stdout", Outputs{Stdout: Output{File: a, Events: true}, Stderr: Output{File: b}}, 1, 1, [2]bool{false, true}, [2]bool{}, false},
		{"events on stderr", Outputs{Stdout: Output{File: a}, Stderr: Output{File: b, Events: true}}, 1, 1, [2]bool{true, false}, [2]bool{false, true}, false},
		{"events, 2>&1", Outputs{Stdout: Output{File: a}, Stderr: Output{File: a2, Events: true}}, 1, 1, [2]bool{}, [2]bool{false, true}, true},
		{"a tap on stdout", Outputs{Stdout: Output{File: a, Via: tap}, Stderr: Output{File: b}}, 1, 0, [2]bool{false, true}, [2]bool{}, false},
		{"watched", Outputs{Stdout: Output{File: a}, Stderr: Output{File: b}, Watch: true}, 2, 0, [2]bool{}, [2]bool{}, false},
		{"watched, 2>&1", Outputs{Stdout: Output{File: a}, Stderr: Output{File: a2}, Watch: true}, 1, 0, [2]bool{}, [2]bool{}, true},
		{"pty", Outputs{Stdout: Output{File: a}, Stderr: Output{File: b}, PTY: true, Watch: true}, 1, 0, [2]bool{false, true}, [2]bool{}, false},
		{"pty, stdout closed", Outputs{Stderr: Output{File: b}, PTY: true}, 1, 0, [2]bool{false, true}, [2]bool{}, false},
		{"left as it is", Outputs{Stdout: Output{File: a, Leave: true}, Stderr: Output{File: b}, Watch: true}, 1, 0, [2]bool{false, false}, [2]bool{}, false},
	}
	for _, c := range cases {
		ip, err := Interpose(c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(ip.Streams) != c.streams || len(ip.Sinks) != c.sinks {
			t.Errorf("%s: %d streams, %d sinks; want %d, %d", c.name, len(ip.Streams), len(ip.Sinks), c.streams, c.sinks)
		}
		for i, got := range []*os.File{ip.Stdout, ip.Stderr} {
			want := []Output{c.o.Stdout, c.o.Stderr}[i].File
			if (got == want) != c.direct[i] && !(want == nil && got == nil) {
				t.Errorf("%s: stream %d direct = %v, want %v", c.name, i, got == want, c.direct[i])
			}
		}
		if (ip.Messages != nil) != c.messages[1] {
			t.Errorf("%s: messages %v", c.name, ip.Messages != nil)
		}
		if c.merged && (ip.Stdout != ip.Stderr || ip.Stdout == nil) {
			t.Errorf("%s: not one Stream for both", c.name)
		}
		if c.o.Stdout.Leave && ip.Stdout != nil {
			t.Errorf("%s: a stream left as it is was given a file", c.name)
		}
		ip.Close()
	}
}

// TestInterposeOncePerRun: a caller that applied its own Interpose for
// the run's Activity and PTY leaves Run nothing to decide; one that did
// not cover what Run must see still gets it from Run.
func TestInterposeOncePerRun(t *testing.T) {
	dir := t.TempDir()
	a, err := os.Create(dir + "/a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := os.Create(dir + "/b")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, c := range []struct {
		name  string
		watch bool // what the caller's decision covered
		own   int  // Streams Run makes itself
	}{
		{"covered", true, 0},
		{"not covered", false, 1}, // stderr: stdout has the events' Stream already
	} {
		cfg := Config{Stdout: a, Stderr: b, Activity: ActivityOutput}
		ip, err := Interpose(Outputs{Stdout: Output{File: a, Events: true}, Stderr: Output{File: b}, Watch: c.watch})
		if err != nil {
			t.Fatal(err)
		}
		ip.Apply(&cfg)
		if cfg.Stdout != ip.Stdout || cfg.Stderr != ip.Stderr || len(cfg.Streams) != len(ip.Streams) {
			t.Fatalf("%s: Apply gave %+v", c.name, cfg)
		}
		mine := len(cfg.Streams)
		own, err := interposeFor(&cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(own) != c.own || len(cfg.Streams) != mine+c.own {
			t.Errorf("%s: Run made %d Streams (%d in all), want %d", c.name, len(own), len(cfg.Streams), c.own)
		}
		closeStreams(own)
		ip.Close()
	}
}
