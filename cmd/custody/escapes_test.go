package main

import "testing"

func TestEscapesAllowed(t *testing.T) {
	for _, tc := range []struct {
		tty     bool
		term    string
		noColor string
		want    bool
	}{
		{true, "xterm-256color", "", true},
		{true, "screen", "", true},
		{false, "xterm-256color", "", false}, // a pipe, a file
		{true, "dumb", "", false},
		{true, "", "", false}, // TERM unset
		{true, "xterm-256color", "1", false},
		{true, "xterm-256color", "0", false}, // any value but empty
		{false, "dumb", "1", false},
	} {
		env := map[string]string{"TERM": tc.term, "NO_COLOR": tc.noColor}
		if got := escapesAllowed(tc.tty, func(k string) string { return env[k] }); got != tc.want {
			t.Errorf("escapesAllowed(tty %v, TERM=%q, NO_COLOR=%q) = %v, want %v", tc.tty, tc.term, tc.noColor, got, tc.want)
		}
	}
}
