//go:build unix

package archiveremoval

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// arManifest reads the manifest of the archive directory dir.
func arManifest(t *testing.T, dir string) machine.ArchiveManifest {
	t.Helper()
	var m machine.ArchiveManifest
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, machine.ArchiveManifestName)), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// arNodeModules fills node_modules/ of the tree at wt with a package.
func arNodeModules(t *testing.T, r *fixtures.Repo, wt string) {
	t.Helper()
	r.WriteFile(wt, "node_modules/left-pad/index.js", "module.exports = s => s\n")
	r.WriteFile(wt, "node_modules/left-pad/package.json", `{"name":"left-pad"}`+"\n")
}

// withoutBelow is snap without dir and everything below it.
func withoutBelow(snap map[string]clitest.DiskEntry, dir string) map[string]clitest.DiskEntry {
	out := map[string]clitest.DiskEntry{}
	for p, e := range snap {
		if p != dir && !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			out[p] = e
		}
	}
	return out
}

// TestArchiveLeavesBuildOutputOut: node_modules beside a tracked lockfile
// is left out of the archive and listed in its manifest (path, kind,
// bytes); the tree, with an untracked source file, is removed via
// plan/apply on the archive (the quarantine deleting node_modules after
// classifying it again) and restored with node_modules absent and every
// other byte identical.
func TestArchiveLeavesBuildOutputOut(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, wt := clitest.NewTree(t, r, "web")
	r.WriteFile(wt, ".gitignore", "node_modules/\n")
	r.WriteFile(wt, "package.json", `{"name":"web"}`+"\n")
	r.WriteFile(wt, "package-lock.json", "{}\n")
	r.CommitAll(wt, "web app")
	arNodeModules(t, r, wt)
	r.WriteFile(wt, "src/new.js", "console.log('only here')\n")
	before := clitest.SnapDisk(t, wt)

	res := clitest.CreateArchive(t, r, id)
	m := arManifest(t, res.Dir)
	want := []machine.DiscardedDir{{Path: "node_modules", Kind: machine.BuildNodeModules, Bytes: int64(len("module.exports = s => s\n") + len(`{"name":"left-pad"}`+"\n"))}}
	if diff := cmp.Diff(want, m.BuildOutput); diff != "" {
		t.Errorf("manifest build_output (-want +got):\n%s", diff)
	}
	patch := string(mustRead(t, filepath.Join(res.Dir, machine.ArchivePatchName)))
	if strings.Contains(patch, "node_modules") || !strings.Contains(patch, "src/new.js") {
		t.Errorf("dirty.patch should hold src/new.js and nothing of node_modules:\n%s", patch)
	}
	if c := arVerify(t, r, res.ID); c.Fresh != "equal" || len(c.Problems) != 0 {
		t.Fatalf("archive verify with node_modules left out: %+v", c)
	}

	clitest.MustCustody(t, r, 0, "finish", id)
	plan := filepath.Join(r.Root, "plan.json")
	it := clitest.PlanItem(t, clitest.PlanTo(t, r, plan, 0), id)
	if it.Action != machine.ActionRemove || it.Proof == nil || it.Proof.Kind != machine.ProofArchive || it.Proof.Ref != res.ID {
		t.Fatalf("plan of the archived tree: %+v, want remove on proof archive %s", it, res.ID)
	}
	if o := clitest.ApplyOutcome(t, clitest.ApplyFile(t, r, plan, 0), id); o.Outcome != machine.OutcomeRemoved {
		t.Fatalf("apply: %+v", o)
	}
	if _, err := os.Lstat(wt); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the tree is still there: %v", err)
	}
	dst := filepath.Join(t.TempDir(), "restored")
	clitest.RunBin(t, clitest.Bin(), r, r.Root, nil, "--json", "archive", "restore", res.ID, dst)
	got := clitest.SnapDisk(t, dst)
	if _, ok := got["node_modules"]; ok {
		t.Errorf("the restored tree holds node_modules, which the archive left out")
	}
	if diff := cmp.Diff(withoutBelow(before, "node_modules"), got); diff != "" {
		t.Errorf("restored tree differs (-archived +restored):\n%s", diff)
	}
}

// TestArchiveUnrecordedBuildOutput: an archive written while node_modules
// was not recognised (its lockfile untracked) holds it in its patch and
// still verifies once it is recognised (the lockfile staged): layout is
// left out only below recorded directories. A file added below it then
// makes the archive stale, naming node_modules.
func TestArchiveUnrecordedBuildOutput(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, wt := clitest.NewTree(t, r, "web")
	r.WriteFile(wt, "package.json", `{"name":"web"}`+"\n")
	r.CommitAll(wt, "web app")
	r.WriteFile(wt, "package-lock.json", "{}\n")
	arNodeModules(t, r, wt)

	res := clitest.CreateArchive(t, r, id)
	if m := arManifest(t, res.Dir); len(m.BuildOutput) != 0 {
		t.Fatalf("build_output %+v, want none: the lockfile is not tracked", m.BuildOutput)
	}
	if patch := string(mustRead(t, filepath.Join(res.Dir, machine.ArchivePatchName))); !strings.Contains(patch, "node_modules/left-pad/index.js") {
		t.Fatalf("dirty.patch should hold node_modules:\n%s", patch)
	}
	r.GitIn(wt, "add", "package-lock.json")
	if c := arVerify(t, r, res.ID); c.Fresh != "equal" || len(c.Problems) != 0 {
		t.Fatalf("archive verify once node_modules is recognised: %+v, want equal", c)
	}
	r.WriteFile(wt, "node_modules/left-pad/extra.js", "later\n")
	c := arVerify(t, r, res.ID)
	if got := arCodes(c); !cmp.Equal(got, []string{string(machine.CodeArchiveStale)}) || !strings.Contains(c.Problems[0].Message, "node_modules is build output the archive does not leave out") {
		t.Fatalf("archive verify after a file was added below node_modules: %+v, want archive-stale naming node_modules", c)
	}
}
