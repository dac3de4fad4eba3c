package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

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
