package main

import (
	"testing"

	"github.com/custody-sh/custody/machine"
)

func TestPathViewShow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cwd, at string
		want    string
	}{
		{"below the current directory", "/r", "/r/.worktrees/x-1", ".worktrees/x-1"},
		{"from the parent of the repository", "/", "/r/.worktrees/x-1", "r/.worktrees/x-1"},
		{"a sibling, from inside a linked tree", "/r/.worktrees/a-1", "/r/.worktrees/x-1", "../x-1"},
		{"from a subdirectory of the main checkout", "/r/src", "/r/.worktrees/x-1", "../.worktrees/x-1"},
		{"outside, from inside the main checkout, shorter absolute", "/r/src", "/elsewhere/t", "/elsewhere/t"},
		{"from inside the managed root elsewhere", "/trees/a-1", "/trees/x-1", "../x-1"},
		{"outside, from outside the main checkout", "/home/me", "/r/.worktrees/x-1", "/r/.worktrees/x-1"},
		{"the current directory is the tree", "/r/.worktrees/x-1", "/r/.worktrees/x-1", "."},
		{"a name with a leading dash", "/r/.worktrees", "/r/.worktrees/-x-1", "./-x-1"},
		{"a name with a space and a byte that is not UTF-8", "/r", "/r/.worktrees/a b\x80-1", `.worktrees/a b\x80-1`},
		{"current directory unknown", "", "/r/.worktrees/x-1", "/r/.worktrees/x-1"},
	}
	for _, tt := range tests {
		v := pathView{cwd: tt.cwd, main: "/r", near: []string{"/trees"}}
		if got := v.show(tt.at); got != tt.want {
			t.Errorf("%s: show(%q) from %q = %q, want %q", tt.name, tt.at, tt.cwd, got, tt.want)
		}
	}
}

// TestPathViewCommand: a printed command is made to paste where the
// person is: the tree's path relative wherever the command resolves it
// there, absolute where it runs elsewhere; with -C DIR, git and custody
// commands that run where custody ran get -C DIR; quoted words (a space,
// a byte that is not UTF-8, a path that looks like ours inside a longer
// word) are never rewritten.
func TestPathViewCommand(t *testing.T) {
	t.Parallel()
	const tree = "/r/.worktrees/x-1"
	odd := "/r/.worktrees/a b\x80-1"
	tests := []struct {
		name  string
		chdir string
		cwd   string
		line  string
		paths []string
		want  string
	}{
		{"git -C tree", "", "/r", machine.Command("git", "-C", tree, "stash", "push"), []string{tree},
			"git -C .worktrees/x-1 stash push"},
		{"from a subdirectory", "", "/r/src", machine.Command("git", "-C", tree, "stash", "push"), []string{tree},
			"git -C ../.worktrees/x-1 stash push"},
		{"git without -C resolves the path where the person is", "", "/r", machine.Command("git", "worktree", "unlock", tree), []string{tree},
			"git worktree unlock .worktrees/x-1"},
		{"a quoted odd path", "", "/r", machine.Command("git", "-C", odd, "stash", "push"), []string{odd},
			"git -C " + machine.QuoteArg(".worktrees/a b\x80-1") + " stash push"},
		{"a path inside a longer quoted word is left alone", "", "/r", machine.Command("git", "-C", tree, "commit", "-m", "x "+tree+" y"), []string{tree},
			"git -C .worktrees/x-1 commit -m " + machine.QuoteArg("x "+tree+" y")},
		{"a path that merely begins with the tree's", "", "/r", machine.Command("git", "-C", tree+"-2", "stash", "push"), []string{tree},
			"git -C /r/.worktrees/x-1-2 stash push"},
		{"paths of a command run in another directory stay absolute", "", "/r", machine.Command("git", "-C", tree, "worktree", "unlock", tree), []string{tree},
			"git -C .worktrees/x-1 worktree unlock /r/.worktrees/x-1"},
		{"each command of a line on its own", "", "/r", machine.Command("git", "-C", tree, "stash", "push") + " && " + machine.Command("custody", "plan"), []string{tree},
			"git -C .worktrees/x-1 stash push && custody plan"},
		{"-C given: custody gets it", "../repo", "/home/me", "custody plan", nil,
			"custody -C ../repo plan"},
		{"-C given: git without -C gets it, its paths absolute", "../repo", "/home/me", machine.Command("git", "worktree", "unlock", tree), []string{tree},
			"git -C ../repo worktree unlock /r/.worktrees/x-1"},
		{"-C given: git -C tree is relative to where the person is", "/r", "/", machine.Command("git", "-C", tree, "stash", "push") + " && " + machine.Command("custody", "reopen", "x-1"), []string{tree},
			"git -C r/.worktrees/x-1 stash push && custody -C /r reopen x-1"},
		{"-C given: a quoted -C", "my repo", "/home/me", "git worktree prune", nil,
			"git -C 'my repo' worktree prune"},
		{"--git-dir runs elsewhere", "../repo", "/home/me", machine.Command("git", "--git-dir=/r/.git", "update-ref", "refs/x", "abc"), nil,
			"git --git-dir=/r/.git update-ref refs/x abc"},
		{"a pipe", "", "/r", machine.Command("git", "-C", tree, "ls-files", "-z") + " | " + machine.Command("git", "-C", tree, "update-index", "-z", "--index-info"), []string{tree},
			"git -C .worktrees/x-1 ls-files -z | git -C .worktrees/x-1 update-index -z --index-info"},
		{"a name spelled by printf", "", "/r", machine.Command("git", "-C", tree, "stash", "push", "--", "a\nb && c"), []string{tree},
			"git -C .worktrees/x-1 stash push -- " + machine.QuoteArg("a\nb && c")},
		{"not a line custody wrote", "", "/r", "git -C '" + tree, []string{tree}, "git -C '" + tree},
	}
	for _, tt := range tests {
		v := pathView{cwd: tt.cwd, main: "/r", chdir: tt.chdir}
		if got := v.command(tt.line, tt.paths...); got != tt.want {
			t.Errorf("%s: command(%q)\n got %q\nwant %q", tt.name, tt.line, got, tt.want)
		}
	}
}

func TestShellWords(t *testing.T) {
	t.Parallel()
	for _, argv := range [][]string{
		{"git", "-C", "/a b/c", "stash"},
		{"git", "x", "it's", `back\slash`},
		{"git", "-C", "a\nb", "--", "c\x80d", "e)f", `"q"`, "$(x)"},
		{"custody", "--flag=a b", "--", "-lead"},
	} {
		line := machine.Command(argv...)
		words := shellWords(line)
		if len(words) != len(argv) {
			t.Errorf("shellWords(%q) = %q, want %d words", line, words, len(argv))
			continue
		}
		for i, w := range words {
			if w != machine.QuoteArg(argv[i]) {
				t.Errorf("shellWords(%q)[%d] = %q, want %q", line, i, w, machine.QuoteArg(argv[i]))
			}
		}
	}
}
