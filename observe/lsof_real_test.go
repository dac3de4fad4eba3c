//go:build unix

package observe_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// TestLsofScanReal runs the lsof on PATH (as custody does on darwin) and
// finds a process working in a tree and one holding a file open in it,
// and not the caller's own children.
func TestLsofScanReal(t *testing.T) {
	t.Parallel()
	needProc(t) // spawnUser waits on /proc
	if _, err := exec.LookPath("lsof"); err != nil {
		t.Skip("no lsof on PATH")
	}
	root := inuseRoot(t)
	tree := filepath.Join(root, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(tree, "log.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := copySleep(t, filepath.Join(tree, "sleep"))
	cwd := spawnUser(t, tree, "sleep", sleeper)
	open := spawnUser(t, root, "sleep", "sleep 30 <\"$1\" >/dev/null 2>&1 & echo $!; wait", file)
	exe := spawnUser(t, root, "sleep", `"$1" 30 </dev/null >/dev/null 2>&1 & echo $!; wait`, bin)
	want := []machine.Process{
		{PID: cwd, Command: "sleep", Via: "cwd"},
		{PID: open, Command: "sleep", Via: "open file 0"},
		{PID: exe, Command: "sleep", Via: "exe"},
	}
	for _, step := range []string{"running", "its program and file deleted"} {
		p := observe.LsofScanner{}.Scan(context.Background())
		if p.Err != "" {
			t.Fatal(p.Err)
		}
		if d := cmp.Diff(want, inside(t, p, tree), cmpSortProcs); d != "" {
			t.Fatalf("%s: Inside (-want +got):\n%s", step, d)
		}
		for _, f := range []string{bin, file} {
			if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
	}
}
