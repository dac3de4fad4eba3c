package observe_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// TestWorktreeInUseUnknown: a tree observed with a process scan that saw
// nothing it can vouch for (an empty proc root) carries an in-use hidden
// state naming why, so assessment keeps it; it is never "nobody inside".
func TestWorktreeInUseUnknown(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := filepath.Join(s.root, "repo")
	s.git(s.root, "init", "-q", "-b", "main", dir)
	s.commitFile(dir, "README", "x\n")
	tree := filepath.Join(s.root, "tree")
	s.git(dir, "worktree", "add", "-q", "-b", "custody/tree", tree)
	ctx := context.Background()
	repo, err := observe.Discover(ctx, s.g, dir)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := observe.TakeInventory(ctx, s.g, repo)
	if err != nil {
		t.Fatal(err)
	}
	rec := machine.Record{ID: "tree", Kind: machine.KindWorktree, State: machine.StateFinished, Path: tree, Branch: "custody/tree", AdminKey: "tree"}
	procs := observe.ProcScanner{Root: t.TempDir()}.Scan()
	o := observe.Worktree(ctx, s.g, repo, inv, rec, observe.Scope{Procs: procs})
	var found bool
	for _, h := range o.Hidden {
		found = found || h.Code == machine.CodeInUse && strings.Contains(h.Detail, "no readable entry for custody's own process")
	}
	if !found || len(o.InUse) != 0 {
		t.Fatalf("hidden %+v, in use %+v; want an in-use hidden state naming the unreadable proc root", o.Hidden, o.InUse)
	}
	v := machine.Assess(rec, o, machine.DefaultPolicy(), time.Now())
	var inUse bool
	for _, r := range v.Refusals {
		inUse = inUse || r.Code == machine.CodeInUse
	}
	if v.Action == machine.ActionRemove || !inUse {
		t.Fatalf("assessed %s with refusals %+v; want kept as in-use", v.Action, v.Refusals)
	}
}
