//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// asStrippable archives a tree whose patch holds a Cargo target (staged
// while captured, so the classifier of the tree did not leave it out) and
// Flutter output (beside a pubspec.yaml that is not committed), a build/
// by name alone and a person's note, then removes the tree. It returns
// the archive and the tree as it was.
func asStrippable(t *testing.T, r *fixtures.Repo) (steps.ArchiveCreated, map[string]arEntry) {
	t.Helper()
	id, wt := newTree(t, r, "rusty")
	r.WriteFile(wt, "Cargo.toml", "[package]\nname = \"rusty\"\n")
	r.WriteFile(wt, "src/main.rs", "fn main() {}\n")
	r.CommitAll(wt, "crate")
	r.WriteFile(wt, "target/CACHEDIR.TAG", machine.CacheDirSignature+"\n# cargo\n")
	r.WriteFile(wt, "target/debug/.fingerprint/rusty-1/bin", "fp\n")
	if err := os.WriteFile(filepath.Join(wt, "target", "debug", "rusty"), []byte{0x7f, 'E', 'L', 'F', 0, 1, 2}, 0o755); err != nil {
		t.Fatal(err)
	}
	r.GitIn(wt, "add", "target")
	r.WriteFile(wt, "app/pubspec.yaml", "name: app\n")
	r.WriteFile(wt, "app/build/app.dill", "compiled\n")
	r.WriteFile(wt, "app/.dart_tool/package_config.json", "{}\n")
	r.WriteFile(wt, "build/notes.txt", "a person's build notes\n")
	r.WriteFile(wt, "notes.md", "only here\n")
	before := arSnapshot(t, wt)
	a := arCreate(t, r, id)
	r.Git("worktree", "remove", "--force", wt)
	return a, before
}

func asStrip(t *testing.T, r *fixtures.Repo, want int, args ...string) steps.ArchiveStripResult {
	t.Helper()
	return decodeResult[steps.ArchiveStripResult](t, mustCustody(t, r, want, append([]string{"--json", "archive", "prune", "--strip-build-output"}, args...)...), "archive prune")
}

// asStripped checks the archive a after a strip: its patch without the
// Cargo target and Flutter output, its manifest listing them, verifying,
// finished, and restoring to the tree before without them.
func asStripped(t *testing.T, r *fixtures.Repo, a steps.ArchiveCreated, before map[string]arEntry) {
	t.Helper()
	want := []machine.DiscardedDir{
		{Path: "app/.dart_tool", Kind: machine.BuildFlutterOutput, Bytes: 3},
		{Path: "app/build", Kind: machine.BuildFlutterOutput, Bytes: 9},
		{Path: "target", Kind: machine.BuildCargoTarget, Bytes: int64(len(machine.CacheDirSignature+"\n# cargo\n") + 3 + 7)},
	}
	if diff := cmp.Diff(want, arManifest(t, a.Dir).BuildOutput); diff != "" {
		t.Errorf("build_output after the strip (-want +got):\n%s", diff)
	}
	patch := string(mustRead(t, filepath.Join(a.Dir, machine.ArchivePatchName)))
	for _, gone := range []string{"target/", "app/build/", "app/.dart_tool/"} {
		if strings.Contains(patch, " b/"+gone) {
			t.Errorf("the stripped patch still holds %s", gone)
		}
	}
	for _, kept := range []string{"notes.md", "build/notes.txt", "app/pubspec.yaml"} {
		if !strings.Contains(patch, " b/"+kept) {
			t.Errorf("the stripped patch lost %s", kept)
		}
	}
	if c := arVerify(t, r, a.ID); len(c.Problems) != 0 || c.State != machine.StateFinished {
		t.Errorf("archive verify after the strip: %+v, want finished, no problems", c)
	}
	dst := filepath.Join(t.TempDir(), "restored")
	mustCustody(t, r, 0, "archive", "restore", a.ID, dst)
	exp := before
	for _, d := range want {
		exp = withoutBelow(exp, filepath.FromSlash(d.Path))
	}
	if diff := cmp.Diff(exp, arSnapshot(t, dst)); diff != "" {
		t.Errorf("restored after the strip (-want +got):\n%s", diff)
	}
}

// TestArchiveStripBuildOutput: --strip-build-output lists what it would
// strip and deletes nothing; --apply rewrites the patch (strip, then
// verify, then restore); an archive whose tree is present is kept; a
// second strip finds nothing.
func TestArchiveStripBuildOutput(t *testing.T) {
	t.Parallel()
	r := rtRepo(t, fixtures.Options{})
	a, before := asStrippable(t, r)
	id, wt := newTree(t, r, "present")
	r.Commit(wt, "a.txt", "one\n")
	present := arCreate(t, r, id)
	patchBefore := mustRead(t, filepath.Join(a.Dir, machine.ArchivePatchName))

	res := asStrip(t, r, 0)
	var got []string
	for _, it := range res.Items {
		if it.Name == a.ID {
			for _, d := range it.Strip {
				got = append(got, d.Path)
			}
		}
		if it.Name == present.ID && (it.Refusal == nil || it.Refusal.Code != machine.CodeArchiveTreePresent) {
			t.Errorf("strip of an archive whose tree is present: %+v, want archive-tree-present", it)
		}
	}
	if !cmp.Equal(got, []string{"app/.dart_tool", "app/build", "target"}) {
		t.Errorf("strippable = %v, want the Flutter output and the Cargo target", got)
	}
	if b := mustRead(t, filepath.Join(a.Dir, machine.ArchivePatchName)); string(b) != string(patchBefore) {
		t.Fatalf("a strip without --apply rewrote the patch")
	}

	res = asStrip(t, r, 0, "--apply", a.ID)
	if len(res.Items) != 2 || res.Items[1].Outcome != machine.OutcomeRelocated {
		t.Fatalf("strip --apply: %+v", res.Items)
	}
	asStripped(t, r, a, before)
	if _, err := os.Lstat(filepath.Join(filepath.Dir(a.Dir), ".scratch-"+a.ID)); err == nil {
		t.Errorf("the strip left its scratch directory")
	}
	res = asStrip(t, r, 0, "--apply", a.ID)
	if it := res.Items[len(res.Items)-1]; it.Outcome != machine.OutcomeAlreadyDone || len(it.Strip) != 0 {
		t.Errorf("a second strip: %+v, want already-done with nothing to strip", it)
	}
	res = asStrip(t, r, 3, "--apply", present.ID)
	if it := res.Items[len(res.Items)-1]; it.Outcome != machine.OutcomeRefused || it.Refusal == nil || it.Refusal.Code != machine.CodeArchiveTreePresent {
		t.Errorf("strip --apply of an archive whose tree is present: %+v", it)
	}
}

// TestArchiveStripCrash kills a strip at each of its failpoints: resume
// converges (the swap finished, or the strip stepped back with the archive
// as it was), the archive verifies, and a strip run again ends stripped.
func TestArchiveStripCrash(t *testing.T) {
	t.Parallel()
	for _, point := range steps.Failpoints() {
		if !strings.HasPrefix(point, "archive/strip-") {
			continue
		}
		t.Run(strings.ReplaceAll(point, "/", "_"), func(t *testing.T) {
			t.Parallel()
			r := rtRepo(t, fixtures.Options{})
			a, before := asStrippable(t, r)
			killed := runBin(t, failpointBin, r, r.Dir, []string{"CUSTODY_FAILPOINT=" + point}, "archive", "prune", "--strip-build-output", "--apply", a.ID)
			if killed.Code != -1 {
				t.Fatalf("strip was not killed at %s:\n%s", point, killed)
			}
			rs := decodeResult[steps.ResumeResult](t, mustCustody(t, r, 0, "--json", "resume"), "resume")
			if len(rs.Items) != 1 || (rs.Items[0].Outcome != machine.OutcomeRelocated && rs.Items[0].Outcome != machine.OutcomeSteppedBack) {
				t.Fatalf("resume after %s: %+v", point, rs.Items)
			}
			if c := arVerify(t, r, a.ID); len(c.Problems) != 0 {
				t.Fatalf("after %s and resume the archive does not verify: %+v", point, c)
			}
			if rs.Items[0].Outcome == machine.OutcomeSteppedBack {
				asStrip(t, r, 0, "--apply", a.ID)
			}
			asStripped(t, r, a, before)
			if rs := decodeResult[steps.ResumeResult](t, mustCustody(t, r, 0, "--json", "resume"), "resume"); len(rs.Items) != 0 {
				t.Errorf("a second resume still found work: %+v", rs.Items)
			}
		})
	}
}

// TestArchiveStripRefusesChangedManifest: a strip killed after its scratch
// was written, whose archive's manifest then changed, is not swapped in on
// resume (archive-digest-mismatch): the patch stays as it was.
func TestArchiveStripRefusesChangedManifest(t *testing.T) {
	t.Parallel()
	r := rtRepo(t, fixtures.Options{})
	a, _ := asStrippable(t, r)
	patch := mustRead(t, filepath.Join(a.Dir, machine.ArchivePatchName))
	killed := runBin(t, failpointBin, r, r.Dir, []string{"CUSTODY_FAILPOINT=archive/strip-after-scratch"}, "archive", "prune", "--strip-build-output", "--apply", a.ID)
	if killed.Code != -1 {
		t.Fatalf("strip was not killed:\n%s", killed)
	}
	p := filepath.Join(a.Dir, machine.ArchiveManifestName)
	changed := strings.Replace(string(mustRead(t, p)), `"created_at": "`, `"created_at": "1`, 1)
	if err := os.WriteFile(p, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := decodeResult[steps.ResumeResult](t, mustCustody(t, r, 3, "--json", "resume"), "resume")
	if len(rs.Items) != 1 || rs.Items[0].Refusal == nil || rs.Items[0].Refusal.Code != machine.CodeArchiveDigestMismatch {
		t.Fatalf("resume after the manifest changed: %+v, want archive-digest-mismatch", rs.Items)
	}
	if got := mustRead(t, filepath.Join(a.Dir, machine.ArchivePatchName)); string(got) != string(patch) {
		t.Errorf("the strip swapped its patch in over a changed manifest")
	}
}
