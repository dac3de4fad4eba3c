package observe_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// TestWorktreeInUseUnknown: a tree observed with a process scan that saw
// nothing it can vouch for (an empty proc root) carries an in-use hidden
// state naming why, so assessment keeps it; it is never "nobody inside".
func TestWorktreeInUseUnknown(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := filepath.Join(s.Root, "repo")
	s.Git(s.Root, "init", "-q", "-b", "main", dir)
	s.CommitFile(dir, "README", "x\n")
	tree := filepath.Join(s.Root, "tree")
	s.Git(dir, "worktree", "add", "-q", "-b", "custody/tree", tree)
	ctx := context.Background()
	repo, err := gitfiles.Discover(ctx, s.G, dir)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := gitfiles.TakeInventory(ctx, s.G, repo)
	if err != nil {
		t.Fatal(err)
	}
	rec := machine.Record{ID: "tree", Kind: machine.KindWorktree, State: machine.StateFinished, Path: tree, Branch: "custody/tree", AdminKey: "tree"}
	procs := observe.ProcScanner{Root: t.TempDir()}.Scan()
	o := observe.Worktree(ctx, s.G, repo, inv, rec, observe.Scope{Procs: procs})
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
