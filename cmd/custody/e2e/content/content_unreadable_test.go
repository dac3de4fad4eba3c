package content

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// TestContentUnreadable: a file in the tree that cannot be read — even by
// root — is unknown content, never clean. A file inside an uninitialised
// submodule's directory (git status does not look there) is a bind mount
// of a process's memory file, which lstat calls an empty regular file and
// every read refuses. plan keeps the tree with content-unreadable
// naming the file, and apply leaves the tree and its branch alone. It needs
// mount --bind (root, and a kernel that allows it).
func TestContentUnreadable(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepoWith(t, fixtures.Options{})
	id, path := clitest.MergedTree(t, r, "unreadable", "topic/unreadable")
	r.UninitSubmodule(path, "sub")
	name := "sub/notes.txt"
	file := filepath.Join(path, name)
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", "/proc/1/mem", file).CombinedOutput(); err != nil {
		t.Skipf("mount --bind is not available here (%v: %s)", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { _ = exec.Command("umount", file).Run() })
	if _, err := os.ReadFile(file); err == nil {
		t.Skip("the bind-mounted memory file is readable here")
	}
	head := r.Head(path)
	plan := filepath.Join(r.Root, "p.json")
	res := clitest.Custody(t, r, "plan", "-o", plan, "--json")
	if res.Code != 0 && res.Code != 3 {
		t.Fatalf("plan: %s", res)
	}
	p := clitest.DecodeResult[machine.Plan](t, res, "plan")
	it := clitest.PlanItem(t, p, id)
	var named bool
	for _, rf := range it.Refusals {
		if rf.Code == machine.CodeContentUnreadable && strings.Contains(rf.Message, name) {
			named = true
		}
	}
	if it.Action != "keep" || !named {
		t.Fatalf("action %s, refusals %v, want keep with content-unreadable naming %s: %+v", it.Action, clitest.RefusalCodes(it.Refusals), name, it.Refusals)
	}
	if res := clitest.Custody(t, r, "apply", plan, "--json"); res.Code != 0 && res.Code != 3 {
		t.Fatalf("apply: %s", res)
	}
	if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
		t.Fatalf("the tree %s is gone: %v", path, err)
	}
	if got := r.Head(path); got != head {
		t.Errorf("HEAD moved from %s to %s", head, got)
	}
	if st := clitest.State(t, r, id); st != "finished" {
		t.Errorf("kept record is %s, want finished", st)
	}
	if !slices.Contains(strings.Fields(r.Git("branch", "--format=%(refname:short)")), "custody/"+id) {
		t.Errorf("the branch custody/%s was deleted", id)
	}
}
