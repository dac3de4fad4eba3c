//go:build linux

package observe

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fakeProc is a proc file system in a directory: each process a stat line
// naming its parent and, unless cwd is "", a cwd link.
func fakeProc(t *testing.T, procs map[int]struct {
	ppid int
	cwd  string
}) string {
	t.Helper()
	root := t.TempDir()
	for pid, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := fmt.Sprintf("%d (p%d) S %d %d 0 0 -1 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, pid, p.ppid, pid, 100+pid)
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		if p.cwd != "" {
			if err := os.Symlink(p.cwd, filepath.Join(dir, "cwd")); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// TestRequesterChain: the chain is custody's parent and each parent above
// it while its working directory is the tree or below it; the first
// ancestor outside the tree, one whose cwd or stat cannot be read, a
// parent loop and init each end it.
func TestRequesterChain(t *testing.T) {
	t.Parallel()
	const tree = "/r/.worktrees/t-1"
	type proc = struct {
		ppid int
		cwd  string
	}
	for _, tc := range []struct {
		name  string
		procs map[int]proc
		want  []int
	}{
		{"shell and agent in the tree, the person's shell outside", map[int]proc{
			10: {9, tree}, 9: {8, tree + "/sub/dir"}, 8: {1, "/r"}, 1: {0, "/"}}, []int{10, 9}},
		{"a hook that execs custody: the agent alone", map[int]proc{
			10: {8, tree}, 8: {1, "/home/me"}}, []int{10}},
		{"the shell outside the tree: nobody", map[int]proc{
			10: {9, "/r"}, 9: {8, tree}}, nil},
		{"a sibling tree whose name extends the tree's is outside", map[int]proc{
			10: {9, tree + "-2"}}, nil},
		{"a deleted working directory inside the tree", map[int]proc{
			10: {9, tree + "/gone (deleted)"}, 9: {1, "/"}}, []int{10}},
		{"an unreadable cwd ends the chain", map[int]proc{
			10: {9, tree}, 9: {8, ""}, 8: {1, tree}}, []int{10}},
		{"a parent loop ends", map[int]proc{
			10: {9, tree}, 9: {10, tree}}, []int{10, 9}},
		{"init is never a requester", map[int]proc{
			10: {1, tree}, 1: {0, tree}}, []int{10}},
		{"a process gone before its stat is read", map[int]proc{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fakeProc(t, tc.procs)
			got := requesterChain(root, 10, tree)
			if d := cmp.Diff(tc.want, got.PIDs(), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("chain (-want +got):\n%s", d)
			}
		})
	}
}

// TestExcusing: a requester's working directory in the tree is excused,
// and its open handle on exactly that directory (fish keeps one); its other
// open files, root and executable there, and every other process's uses,
// are not.
func TestExcusing(t *testing.T) {
	t.Parallel()
	tree := "/r/.worktrees/t-1"
	p := &Processes{uses: []procUse{
		{PID: 10, Command: "sh", Via: "cwd", Path: tree},
		{PID: 10, Command: "sh", Via: "open file 6", Path: tree},
		{PID: 9, Command: "agent", Via: "cwd", Path: tree + "/sub"},
		{PID: 9, Command: "agent", Via: "open file 3", Path: tree + "/README"},
		{PID: 9, Command: "agent", Via: "open file 4", Path: tree + "/sub"},
		{PID: 9, Command: "agent", Via: "open file 5", Path: tree},
		{PID: 7, Command: "server", Via: "cwd", Path: tree},
		{PID: 7, Command: "server", Via: "open file 3", Path: tree},
		{PID: 8, Command: "jail", Via: "root", Path: tree},
	}}
	r := Requesters{chain: []int{10, 9, 8}}
	got, err := p.Excusing(r).Inside(tree)
	if err != nil {
		t.Fatal(err)
	}
	var gotPIDs []string
	for _, g := range got {
		gotPIDs = append(gotPIDs, fmt.Sprintf("%d %s", g.PID, g.Via))
	}
	if d := cmp.Diff([]string{"9 open file 3", "7 cwd", "8 root"}, gotPIDs); d != "" {
		t.Errorf("in use (-want +got):\n%s", d)
	}
	if before, _ := p.Inside(tree); len(before) != 4 {
		t.Errorf("Excusing changed the scan it was given: %d uses inside", len(before))
	}
	if unknown := (&Processes{Err: "no proc"}).Excusing(r); unknown.Err == "" {
		t.Errorf("an unknown scan became known by excusing requesters")
	}
}
