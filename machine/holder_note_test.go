package machine

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestHolderNote: a holder note is one line of valid UTF-8 whatever the
// arguments hold, each argument shown exactly, and a long command is cut
// at a character boundary.
func TestHolderNote(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	got := HolderNote(7, "h", []string{"custody", "-C", "/r\nx\x80 y", "new", `a\b`}, at)
	want := `pid 7 on h (custody -C /r\nx\x80 y new a\\b) since 2026-01-02T03:04:05Z` + "\n"
	if got != want {
		t.Errorf("HolderNote = %q, want %q", got, want)
	}
	long := HolderNote(1, "h", []string{"custody", strings.Repeat("é", 150)}, at)
	if !utf8.ValidString(long) || strings.Count(long, "\n") != 1 || !strings.HasSuffix(long, "since 2026-01-02T03:04:05Z\n") || !strings.Contains(long, "é…)") {
		t.Errorf("a long command's note %q is not one line of UTF-8 cut at a character", long)
	}
}
