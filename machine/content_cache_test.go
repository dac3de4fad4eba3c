package machine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestHashCacheable: a blob id is cached only for a file both of whose
// stamps are older than the walk's start by more than the margin; one
// stamped within the margin, at the start or after it (a clock set back)
// is read again every time.
func TestHashCacheable(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	old := start.Add(-HashCacheMargin - time.Nanosecond)
	edge := start.Add(-HashCacheMargin)
	cases := []struct {
		name         string
		ctime, mtime time.Time
		want         bool
	}{
		{"both old", old, old, true},
		{"both an hour old", start.Add(-time.Hour), start.Add(-time.Hour), true},
		{"ctime at the margin", edge, old, false},
		{"mtime at the margin", old, edge, false},
		{"ctime within the margin", start.Add(-time.Second), old, false},
		{"mtime within the margin (touch -d cannot make ctime old)", old, start.Add(-time.Millisecond), false},
		{"stamped at the start", start, start, false},
		{"stamped in the future", start.Add(time.Hour), old, false},
		{"mtime set far back, ctime now", start, start.Add(-24 * time.Hour), false},
	}
	got := map[string]bool{}
	want := map[string]bool{}
	for _, c := range cases {
		got[c.name] = HashCacheable(c.ctime, c.mtime, start)
		want[c.name] = c.want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("HashCacheable (-want +got):\n%s", diff)
	}
}

// TestHashCacheClockBack: a cache written by a walk later than the clock
// now says, by more than the margin, is not trusted.
func TestHashCacheClockBack(t *testing.T) {
	written := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	got := map[string]bool{
		"later":             HashCacheClockBack(written, written.Add(time.Hour)),
		"same":              HashCacheClockBack(written, written),
		"within the margin": HashCacheClockBack(written, written.Add(-time.Second)),
		"a day back":        HashCacheClockBack(written, written.Add(-24*time.Hour)),
	}
	want := map[string]bool{"later": false, "same": false, "within the margin": false, "a day back": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("HashCacheClockBack (-want +got):\n%s", diff)
	}
}
