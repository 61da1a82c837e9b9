package event

import "testing"

// TestParseWaitReason: today's journal values read as themselves, with
// the same bytes; the vocabulary's newer values too; anything else is
// other, and no reason stays no reason.
func TestParseWaitReason(t *testing.T) {
	for raw, want := range map[string]WaitReason{
		"permission": WaitPermission,
		"input":      WaitInput,
		"user":       WaitUser,
		"dialog":     WaitDialog,
		"other":      WaitOther,
		"":           "",
		"approval":   WaitOther,
		"Permission": WaitOther,
		"user ":      WaitOther,
	} {
		if got := ParseWaitReason(raw); got != want {
			t.Errorf("ParseWaitReason(%q) = %q, want %q", raw, got, want)
		}
	}
	// The bytes journals already carry never change.
	if WaitPermission != "permission" || WaitInput != "input" || WaitUser != "user" {
		t.Errorf("a journal value changed: %q %q %q", WaitPermission, WaitInput, WaitUser)
	}
}
