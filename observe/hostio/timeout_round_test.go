package hostio

import (
	"testing"
	"time"
)

// TestRoundDeadline: a deadline read a moment after it was set (a context
// made before the command started) reads as the person set it.
func TestRoundDeadline(t *testing.T) {
	for _, tc := range []struct{ in, want time.Duration }{
		{59*time.Second + 999800*time.Microsecond, 60 * time.Second},
		{999 * time.Millisecond, time.Second},
		{962 * time.Millisecond, time.Second},
		{299 * time.Millisecond, 300 * time.Millisecond},
		{251 * time.Millisecond, 300 * time.Millisecond},
		{1500 * time.Millisecond, 1500 * time.Millisecond},
		{99 * time.Millisecond, 99 * time.Millisecond},
		{1500 * time.Microsecond, 2 * time.Millisecond},
		{500 * time.Microsecond, 500 * time.Microsecond},
	} {
		if got := RoundDeadline(tc.in); got != tc.want {
			t.Errorf("RoundDeadline(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
