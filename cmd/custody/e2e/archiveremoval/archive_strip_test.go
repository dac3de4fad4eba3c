//go:build unix

package archiveremoval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/archive"
)

// asStrippable archives a tree holding a person's work beside build
// output the tree's classification does not recognise when it is captured
// (a coverage report, a log), a person's build/ beside an untracked
// pubspec.yaml, and a Cargo target with a staged note in it, then removes
// the tree and approves [cleanup] disposable patterns that match the
// report and the log: what a strip then takes is what the tree's
// classification takes with those patterns. It returns the archive and
// the tree as it was.
func asStrippable(t *testing.T, r *fixtures.Repo) (archive.ArchiveCreated, map[string]clitest.DiskEntry) {
	t.Helper()
	id, wt := clitest.NewTree(t, r, "rusty")
	r.WriteFile(wt, "Cargo.toml", "[package]\nname = \"rusty\"\n")
	r.WriteFile(wt, "src/main.rs", "fn main() {}\n")
	r.CommitAll(wt, "crate")
	r.WriteFile(wt, "target/CACHEDIR.TAG", machine.CacheDirSignature+"\n# cargo\n")
	r.WriteFile(wt, "target/debug/.fingerprint/rusty-1/bin", "fp\n")
	if err := os.WriteFile(filepath.Join(wt, "target", "debug", "rusty"), []byte{0x7f, 'E', 'L', 'F', 0, 1, 2}, 0o755); err != nil {
		t.Fatal(err)
	}
	r.WriteFile(wt, "target/NOTES.md", "staged by hand\n")
	r.GitIn(wt, "add", "target")
	r.WriteFile(wt, "app/pubspec.yaml", "name: app\n")
	r.WriteFile(wt, "app/build/RELEASE-NOTES.md", "1.2: what changed\n")
	r.WriteFile(wt, "app/build/deploy.sh", "#!/bin/sh\nscp app.apk host:\n")
	r.WriteFile(wt, "coverage/index.html", "<html>\n")
	r.WriteFile(wt, "coverage/lcov.info", "TN:\n")
	if err := os.Mkdir(filepath.Join(wt, "coverage", "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.WriteFile(wt, "debug.log", "log\n")
	r.WriteFile(wt, "build/notes.txt", "a person's build notes\n")
	r.WriteFile(wt, "notes.md", "only here\n")
	before := clitest.SnapDisk(t, wt)
	a := clitest.CreateArchive(t, r, id)
	if m := arManifest(t, a.Dir); len(m.BuildOutput) != 0 || m.Status == nil {
		t.Fatalf("the capture left out %+v and recorded status %+v; want nothing left out, the status recorded", m.BuildOutput, m.Status)
	}
	r.Git("worktree", "remove", "--force", wt)
	clitest.WriteTrusted(t, r, "[cleanup]\ndisposable = [\"/coverage/\", \"*.log\"]\n")
	return a, before
}

func asStrip(t *testing.T, r *fixtures.Repo, want int, args ...string) archive.ArchiveStripResult {
	t.Helper()
	return clitest.DecodeResult[archive.ArchiveStripResult](t, clitest.MustCustody(t, r, want, append([]string{"--json", "archive", "prune", "--strip-build-output"}, args...)...), "archive prune")
}

// asStripped checks the archive a after a strip: its patch without the
// coverage report and the log, its manifest listing them, verifying,
// finished, and restoring to the tree before without them; the person's
// build/ beside the untracked pubspec.yaml and the staged Cargo target are
// still in it.
func asStripped(t *testing.T, r *fixtures.Repo, a archive.ArchiveCreated, before map[string]clitest.DiskEntry) {
	t.Helper()
	want := []machine.DiscardedDir{
		{Path: "coverage", Kind: machine.BuildDisposable, Bytes: int64(len("<html>\n") + len("TN:\n"))},
		{Path: "debug.log", Kind: machine.BuildDisposable, Bytes: int64(len("log\n"))},
	}
	if diff := cmp.Diff(want, arManifest(t, a.Dir).BuildOutput); diff != "" {
		t.Errorf("build_output after the strip (-want +got):\n%s", diff)
	}
	patch := string(mustRead(t, filepath.Join(a.Dir, machine.ArchivePatchName)))
	for _, gone := range []string{"coverage/", "debug.log"} {
		if strings.Contains(patch, " b/"+gone) {
			t.Errorf("the stripped patch still holds %s", gone)
		}
	}
	for _, kept := range []string{"notes.md", "build/notes.txt", "app/pubspec.yaml", "app/build/RELEASE-NOTES.md", "app/build/deploy.sh", "target/NOTES.md", "target/debug/rusty"} {
		if !strings.Contains(patch, " b/"+kept) {
			t.Errorf("the stripped patch lost %s", kept)
		}
	}
	if c := arVerify(t, r, a.ID); len(c.Problems) != 0 || c.State != machine.StateFinished {
		t.Errorf("archive verify after the strip: %+v, want finished, no problems", c)
	}
	dst := filepath.Join(t.TempDir(), "restored")
	clitest.MustCustody(t, r, 0, "archive", "restore", a.ID, dst)
	exp := before
	for _, d := range want {
		exp = withoutBelow(exp, filepath.FromSlash(d.Path))
	}
	if diff := cmp.Diff(exp, clitest.SnapDisk(t, dst)); diff != "" {
		t.Errorf("restored after the strip (-want +got):\n%s", diff)
	}
}

// TestArchiveStripBuildOutput: --strip-build-output lists what the tree's
// classification takes (here what approved disposable patterns match) and
// deletes nothing; --apply rewrites the patch (strip, then verify, then
// restore); an archive whose tree is present is kept; a second strip finds
// nothing.
func TestArchiveStripBuildOutput(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	a, before := asStrippable(t, r)
	id, wt := clitest.NewTree(t, r, "present")
	r.Commit(wt, "a.txt", "one\n")
	present := clitest.CreateArchive(t, r, id)
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
	if !cmp.Equal(got, []string{"coverage", "debug.log"}) {
		t.Errorf("strippable = %v, want the coverage report and the log the patterns match", got)
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
			r := clitest.InitSpacedRepo(t, fixtures.Options{})
			a, before := asStrippable(t, r)
			killed := clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, []string{"CUSTODY_FAILPOINT=" + point}, "archive", "prune", "--strip-build-output", "--apply", a.ID)
			if killed.Code != -1 {
				t.Fatalf("strip was not killed at %s:\n%s", point, killed)
			}
			rs := clitest.DecodeResult[steps.ResumeResult](t, clitest.MustCustody(t, r, 0, "--json", "resume"), "resume")
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
			if rs := clitest.DecodeResult[steps.ResumeResult](t, clitest.MustCustody(t, r, 0, "--json", "resume"), "resume"); len(rs.Items) != 0 {
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
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	a, _ := asStrippable(t, r)
	patch := mustRead(t, filepath.Join(a.Dir, machine.ArchivePatchName))
	killed := clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, []string{"CUSTODY_FAILPOINT=archive/strip-after-scratch"}, "archive", "prune", "--strip-build-output", "--apply", a.ID)
	if killed.Code != -1 {
		t.Fatalf("strip was not killed:\n%s", killed)
	}
	p := filepath.Join(a.Dir, machine.ArchiveManifestName)
	changed := strings.Replace(string(mustRead(t, p)), `"created_at": "`, `"created_at": "1`, 1)
	if err := os.WriteFile(p, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := clitest.DecodeResult[steps.ResumeResult](t, clitest.MustCustody(t, r, 3, "--json", "resume"), "resume")
	if len(rs.Items) != 1 || rs.Items[0].Refusal == nil || rs.Items[0].Refusal.Code != machine.CodeArchiveDigestMismatch {
		t.Fatalf("resume after the manifest changed: %+v, want archive-digest-mismatch", rs.Items)
	}
	if got := mustRead(t, filepath.Join(a.Dir, machine.ArchivePatchName)); string(got) != string(patch) {
		t.Errorf("the strip swapped its patch in over a changed manifest")
	}
}

// TestArchiveStripKeepsWhatTheTreeKeeps: one rule decides build output for
// a tree and for its archive. An untracked app/pubspec.yaml beside a
// person's app/build/ (release notes, a deploy script), Flutter output
// whose pubspec.yaml was removed from the index, and a Cargo target
// holding a staged note: the tree on disk keeps each (plan keeps it, and
// discards none of them), its archive holds each (build_output is what
// the plan discards), a strip of the archive once the tree is gone finds
// nothing, and a restore gives every byte back.
func TestArchiveStripKeepsWhatTheTreeKeeps(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	type tree struct {
		id, wt string
		keep   []string
		before map[string]clitest.DiskEntry
	}
	var trees []*tree
	add := func(name string, build func(wt string), keep ...string) {
		id, wt := clitest.NewTree(t, r, name)
		build(wt)
		trees = append(trees, &tree{id: id, wt: wt, keep: keep, before: clitest.SnapDisk(t, wt)})
	}
	add("untracked-pubspec", func(wt string) {
		r.WriteFile(wt, "app/pubspec.yaml", "name: app\n")
		r.WriteFile(wt, "app/build/RELEASE-NOTES.md", "1.2: what changed\n")
		r.WriteFile(wt, "app/build/deploy.sh", "#!/bin/sh\nscp app.apk host:\n")
	}, "app/build/RELEASE-NOTES.md", "app/build/deploy.sh")
	add("unindexed-pubspec", func(wt string) {
		r.WriteFile(wt, "app/pubspec.yaml", "name: app\n")
		r.CommitAll(wt, "app")
		r.GitIn(wt, "rm", "-q", "--cached", "app/pubspec.yaml")
		r.WriteFile(wt, "app/build/app.dill", "compiled\n")
		r.WriteFile(wt, "app/.dart_tool/package_config.json", "{}\n")
	}, "app/build/app.dill", "app/.dart_tool/package_config.json")
	add("staged-in-target", func(wt string) {
		r.WriteFile(wt, "Cargo.toml", "[package]\n")
		r.CommitAll(wt, "crate")
		r.WriteFile(wt, "target/.rustc_info.json", "{}\n")
		r.WriteFile(wt, "target/NOTES.md", "staged by hand\n")
		r.GitIn(wt, "add", "-f", "target/NOTES.md")
	}, "target/.rustc_info.json", "target/NOTES.md")
	for _, tr := range trees {
		clitest.MustCustody(t, r, 0, "finish", tr.id)
	}
	plan := clitest.PlanTo(t, r, filepath.Join(r.Root, "plan.json"), 0)
	archives := map[string]*tree{}
	for _, tr := range trees {
		it := clitest.PlanItem(t, plan, tr.id)
		if it.Action != machine.ActionKeep || len(it.Discarded) != 0 {
			t.Errorf("%s on disk: %s, discarding %+v; want it kept, discarding nothing", tr.id, it.Action, it.Discarded)
		}
		a := clitest.CreateArchive(t, r, tr.id)
		m := arManifest(t, a.Dir)
		if len(m.BuildOutput) != 0 {
			t.Errorf("%s: the archive left out %+v; the tree on disk discards nothing", tr.id, m.BuildOutput)
		}
		patch := string(mustRead(t, filepath.Join(a.Dir, machine.ArchivePatchName)))
		for _, k := range tr.keep {
			if !strings.Contains(patch, " b/"+k) {
				t.Errorf("%s: the archive's patch lacks %s", tr.id, k)
			}
		}
		archives[a.ID] = tr
		r.Git("worktree", "remove", "--force", tr.wt)
	}
	res := asStrip(t, r, 0)
	for _, it := range res.Items {
		if archives[it.Name] != nil && (len(it.Strip) != 0 || it.Refusal != nil) {
			t.Errorf("strip of %s (%s): %+v, want nothing to strip", it.Name, archives[it.Name].id, it)
		}
	}
	for aid, tr := range archives {
		res := asStrip(t, r, 0, "--apply", aid)
		if it := res.Items[len(res.Items)-1]; it.Outcome != machine.OutcomeAlreadyDone || len(it.Strip) != 0 {
			t.Errorf("strip --apply of %s (%s): %+v, want already-done", aid, tr.id, it)
		}
		dst := filepath.Join(t.TempDir(), "restored")
		clitest.MustCustody(t, r, 0, "archive", "restore", aid, dst)
		if diff := cmp.Diff(tr.before, clitest.SnapDisk(t, dst)); diff != "" {
			t.Errorf("%s restored (-archived +restored):\n%s", tr.id, diff)
		}
	}
}
