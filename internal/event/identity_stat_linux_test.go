//go:build linux && !lcwrap_gopsutil

package event

import "testing"

func TestParseStat(t *testing.T) {
	line := []byte("4242 (my (weird) prog) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615\n")
	info, err := parseStat(4242, line)
	if err != nil {
		t.Fatal(err)
	}
	if info.Comm != "my (weird) prog" || info.State != 'S' || info.PPID != 1 || info.PGID != 4242 || info.StartTime != 987654 {
		t.Fatalf("parseStat = %+v", info)
	}
	for _, bad := range []string{"", "4242 prog S 1", "4242 (x) S 1 2 3", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 nope"} {
		if _, err := parseStat(1, []byte(bad)); err == nil {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1 (init) S 0 1 1 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 5 1000 10"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseStat(1, b)
	})
}
