package quarantine

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
		{"gitdir: /new\nline/.git/worktrees/a\n", false}, // not the tree's own admin entry
	} {
		if got := gitdirLineOnly([]byte(c.in), "/repo/.git/worktrees/a"); got != c.want {
			t.Errorf("gitdirLineOnly(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestGitdirLineOnlyNewlineInPath: a repository under a directory whose
// name holds a newline gets .git files git writes across two lines; the
// tree's own is git's when it names exactly the tree's admin entry, and a
// person's line after it still is not.
func TestGitdirLineOnlyNewlineInPath(t *testing.T) {
	t.Parallel()
	want := "/tmp/new\nline/repo/.git/worktrees/a-1b2c3d"
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"gitdir: " + want + "\n", true},
		{"gitdir: " + want + "\r\n", true},
		{"gitdir: " + want, true},
		{"gitdir: " + want + "\n# a note\n", false},
		{"gitdir: /tmp/new\nline/repo/.git/worktrees/other\n", false},
		{"gitdir: /tmp/new\rline/repo/.git/worktrees/a-1b2c3d\n", false},
	} {
		if got := gitdirLineOnly([]byte(c.in), want); got != c.want {
			t.Errorf("gitdirLineOnly(%q) = %v, want %v", c.in, got, c.want)
		}
	}
	if gitdirLineOnly([]byte("gitdir: "+want+"\n"), "") {
		t.Error("a path with a newline is taken as git's with no admin entry to compare it with")
	}
}
