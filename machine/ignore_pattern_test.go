package machine

import "testing"

func TestIgnorePattern(t *testing.T) {
	t.Parallel()
	for rel, want := range map[string]string{
		".worktrees":  "/.worktrees/",
		"build*":      `/build\*/`,
		"w?/[x]":      `/w\?/\[x]/`,
		`a\b`:         `/a\\b/`,
		"!neg":        "/!neg/",
		"#hash":       "/#hash/",
		"trail ":      "/trail /",
		"c\rd":        "/c\rd/",
		"caf\xe9 ok]": "/caf\xe9 ok]/",
	} {
		if got, ok := IgnorePattern(rel); !ok || got != want {
			t.Errorf("IgnorePattern(%q) = %q, %v; want %q", rel, got, ok, want)
		}
	}
	for _, rel := range []string{"a\nb", "\n", "x/\n/y"} {
		if got, ok := IgnorePattern(rel); ok {
			t.Errorf("IgnorePattern(%q) = %q: no exclude line names a path with a newline", rel, got)
		}
	}
}
