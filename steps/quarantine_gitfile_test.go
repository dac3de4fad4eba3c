package steps

import "testing"

func TestGitdirLineOnly(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"gitdir: /repo/.git/worktrees/a-1b2c3d\n", true},
		{"gitdir: ../.git/modules/sub\n", true},
		{"gitdir: /repo/.git/worktrees/a\r\n", true},
		{"gitdir: /repo/.git/worktrees/a", true},
		{"gitdir: /repo/.git/worktrees/a\n# a person's note\n", false},
		{"gitdir: /repo/.git/worktrees/a\n\nmore", false},
		{"gitdir: \n", false},
		{"gitdir:/x\n", false},
		{" gitdir: /x\n", false},
		{"gitdir: /x\x00y\n", false},
		{"", false},
	} {
		if got := gitdirLineOnly([]byte(c.in)); got != c.want {
			t.Errorf("gitdirLineOnly(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}
