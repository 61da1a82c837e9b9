package event

import (
	"strings"
	"testing"
)

func TestNormalizeNeverClaims(t *testing.T) {
	got := Capabilities{History: Known}.Normalize()
	want := Capabilities{Known, Unknown, Unknown, Unknown, Unknown}
	if got != want {
		t.Fatalf("Normalize = %+v, want %+v", got, want)
	}
	if AllUnknown() != (Capabilities{}).Normalize() {
		t.Fatal("an empty set must normalize to all unknown")
	}
}

func TestProfiles(t *testing.T) {
	if p := AdoptedPIDOnly(); p.Set != AllUnknown() {
		t.Fatalf("adopted profile claims something: %+v", p.Set)
	}
	if p := External(); p.Set != AllUnknown() {
		t.Fatalf("external profile claims something: %+v", p.Set)
	}
	l := Launched(true).Set
	if l.History != Known || l.Heartbeat != Known || l.Cancel != Known || l.TerminalCause != Known || l.Snapshot != Unknown {
		t.Fatalf("launched: %+v", l)
	}
	if Launched(false).Set.Heartbeat != Unknown {
		t.Fatal("launched without heartbeat must not claim heartbeat")
	}
	for _, name := range ProfileNames() {
		p, err := Lookup(name)
		if err != nil || p.Name != name || p.Why == "" {
			t.Errorf("profile %s: %+v %v", name, p, err)
		}
		for _, n := range CapabilityNames {
			if v, ok := p.Set.Get(n); !ok || !v.Valid() {
				t.Errorf("profile %s: %s = %q", name, n, v)
			}
		}
	}
	if _, err := Lookup("omniscient"); err == nil || !strings.Contains(err.Error(), "adopted-pid-only") {
		t.Fatalf("Lookup of an unknown profile: %v", err)
	}
	if _, ok := (Capabilities{}).Get("colour"); ok {
		t.Fatal("Get of an unknown name")
	}
}
