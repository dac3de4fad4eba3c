package main

import (
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/google/go-cmp/cmp"
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
		{"outside, from inside the main checkout", "/r/src", "/elsewhere/t", "../../elsewhere/t"},
		{"outside, from outside the main checkout", "/home/me", "/r/.worktrees/x-1", "/r/.worktrees/x-1"},
		{"the current directory is the tree", "/r/.worktrees/x-1", "/r/.worktrees/x-1", "."},
		{"current directory unknown", "", "/r/.worktrees/x-1", "/r/.worktrees/x-1"},
	}
	for _, tt := range tests {
		if got := (pathView{cwd: tt.cwd, main: "/r"}).show(tt.at); got != tt.want {
			t.Errorf("%s: show(%q) from %q = %q, want %q", tt.name, tt.at, tt.cwd, got, tt.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	keep := func(id string, c machine.Code) machine.PlanItem {
		r := machine.Refusal{Code: c, Message: "/r/.worktrees/" + id + " says why"}
		return machine.PlanItem{ID: id, Path: "/r/.worktrees/" + id, Action: machine.ActionKeep, Refusal: &r, Refusals: []machine.Refusal{r}}
	}
	plan := machine.Plan{Items: []machine.PlanItem{
		{ID: "m-1", Action: machine.ActionRemove},
		keep("a-1", machine.CodeNotFinished),
		keep("l-1", machine.CodeLeaseLive),
		keep("f-1", machine.CodeForeign),
		keep("u-1", machine.CodeUntrackedFiles),
		keep("d-1", machine.CodeTrackedChanges),
		keep("d-2", machine.CodeTrackedChanges),
		keep("i-1", machine.CodeIgnoredFiles),
		{ID: "db", Kind: machine.KindResource, Action: machine.ActionDestroy},
	}}
	s := summarize(plan)
	want := "1 to remove, 1 orphaned resources to destroy, 4 kept (2 tracked-changes, 1 ignored-files, 1 untracked-files), 2 active, 1 foreign"
	if diff := cmp.Diff(want, s.line()); diff != "" {
		t.Errorf("summary line (-want +got):\n%s", diff)
	}
	it := keep("u-1", machine.CodeUntrackedFiles)
	if got := (pathView{cwd: "/r", main: "/r"}).message(it, it.Refusal); got != "says why" {
		t.Errorf("message = %q, want the leading path dropped", got)
	}
}
