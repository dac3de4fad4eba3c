//go:build unix

package resource

// Resources that outlive their repository (decision 0256): every ledger
// entry's frozen destroy is mirrored to the user-level ledger under the
// test's own XDG_STATE_HOME, and custody resource gc --gone-repos, run
// from outside any repository, destroys those of a repository deleted with
// rm -rf, once each, and keeps those of one that was only moved.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/resource"
	"github.com/google/go-cmp/cmp"
)

// grLedger is the user-level ledger of the fixture's XDG_STATE_HOME.
func grLedger(w *clitest.World) string {
	return filepath.Join(w.R.Home, ".local", "state", "custody", resource.UserLedgerName)
}

// grMirrors returns the mirror files of the ledger, read.
func grMirrors(t *testing.T, w *clitest.World) []machine.Mirror {
	t.Helper()
	var out []machine.Mirror
	repos, err := os.ReadDir(grLedger(w))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range repos {
		if !d.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(grLedger(w), d.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			p := filepath.Join(grLedger(w), d.Name(), f.Name())
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			m, err := machine.ParseMirror(b)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if fi, _ := os.Lstat(p); fi.Mode().Perm() != 0o600 {
				t.Errorf("%s has mode %v, want 0600", p, fi.Mode().Perm())
			}
			out = append(out, m)
		}
	}
	return out
}

// grGone runs resource gc --gone-repos --json (with --dry-run when dry)
// in dir, outside the repository, with bin, and returns its result.
func grGone(t *testing.T, w *clitest.World, bin, dir string, want int, dry bool, extra ...string) resource.GoneResult {
	t.Helper()
	args := []string{"resource", "gc", "--gone-repos", "--json"}
	if dry {
		args = append(args, "--dry-run")
	}
	res := clitest.RunBin(t, bin, w.R, dir, extra, args...)
	if res.Code != want {
		t.Fatalf("custody %v: want exit %d, got\n%s", args, want, res)
	}
	return clitest.DecodeResult[resource.GoneResult](t, res, "resource gc")
}

// grOutcomes reduces items to "id outcome [moved]".
func grOutcomes(items []resource.GoneItem) []string {
	var out []string
	for _, it := range items {
		s := it.ID + " " + string(it.Outcome)
		if it.MovedTo != "" {
			s += " moved"
		}
		if it.Refusal != nil {
			s += " " + string(it.Refusal.Code)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// grTwoLive makes a repository with a tree holding two live resources
// and checks both are mirrored with their frozen destroy and handle.
func grTwoLive(t *testing.T) (*clitest.World, string) {
	t.Helper()
	w := clitest.SetupResources(t, clitest.ResourceDecl("a", "", "")+clitest.ResourceDecl("b", "", ""), fixtures.Options{})
	made := w.New(t, "gone")
	ms := grMirrors(t, w)
	if len(ms) != 2 {
		t.Fatalf("want two mirrors, got %+v", ms)
	}
	for _, m := range ms {
		e := w.Entry(t, m.Resource.ID)
		if m.Resource.Destroy != e.Destroy || m.Resource.Handle != e.Handle || m.Resource.Create != "" || m.Repository.CommonDir != filepath.Join(w.R.Dir, ".git") {
			t.Errorf("mirror %+v does not mirror entry %+v", m, e)
		}
	}
	return w, made.ID
}

// TestGoneReposDestroysEachOnce: a repository with two live resources is
// deleted with rm -rf; --dry-run lists both and runs nothing; the real run
// destroys each once and leaves the user-level ledger empty; a run after
// it finds nothing.
func TestGoneReposDestroysEachOnce(t *testing.T) {
	t.Parallel()
	w, id := grTwoLive(t)
	if err := os.RemoveAll(w.R.Dir); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	dry := grGone(t, w, clitest.Bin(), elsewhere, 0, true)
	want := []string{id + "/a would-reclaim", id + "/b would-reclaim"}
	if d := cmp.Diff(want, grOutcomes(dry.Items)); d != "" {
		t.Errorf("dry run (-want +got):\n%s", d)
	}
	w.WantLog(t, "create "+w.Handle(id, "a"), "create "+w.Handle(id, "b"))

	real := grGone(t, w, clitest.Bin(), elsewhere, 0, false)
	want = []string{id + "/a destroyed", id + "/b destroyed"}
	if d := cmp.Diff(want, grOutcomes(real.Items)); d != "" {
		t.Errorf("real run (-want +got):\n%s", d)
	}
	// Reverse creation order, as teardown destroys.
	w.WantLog(t, "create "+w.Handle(id, "a"), "create "+w.Handle(id, "b"), "destroy "+w.Handle(id, "b"), "destroy "+w.Handle(id, "a"))
	if ms := grMirrors(t, w); len(ms) != 0 {
		t.Errorf("mirrors left after the destroys: %+v", ms)
	}
	if again := grGone(t, w, clitest.Bin(), elsewhere, 0, false); len(again.Items) != 0 {
		t.Errorf("a second run found %+v", again.Items)
	}
}

// TestGoneReposKilled: killed right after the destroy intent is recorded,
// or after the destroy ran and was recorded, the next run finishes: each
// resource is destroyed exactly once and no mirror is left.
func TestGoneReposKilled(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"resource/gone-after-intent", "resource/gone-after-destroy"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			if !slices.Contains(steps.Failpoints(), point) {
				t.Fatalf("%s is not a declared failpoint", point)
			}
			w, id := grTwoLive(t)
			if err := os.RemoveAll(w.R.Dir); err != nil {
				t.Fatal(err)
			}
			elsewhere := t.TempDir()
			res := clitest.RunBin(t, clitest.FailpointBin(), w.R, elsewhere, []string{"CUSTODY_FAILPOINT=" + point}, "resource", "gc", "--gone-repos")
			if res.Code != -1 {
				t.Fatalf("want SIGKILL at %s, got\n%s", point, res)
			}
			ms := grMirrors(t, w)
			if len(ms) != 2 {
				t.Fatalf("the kill left %d mirrors, want both", len(ms))
			}
			killed := slices.IndexFunc(ms, func(m machine.Mirror) bool {
				return m.Resource.Intent != nil || m.Resource.Evidence.Outcome == string(machine.TriggerDestroyed)
			})
			if killed < 0 {
				t.Fatalf("no mirror records the interrupted destroy: %+v", ms)
			}
			again := grGone(t, w, clitest.Bin(), elsewhere, 0, false)
			t.Logf("after the kill: %+v", again.Items)
			for _, n := range []string{"a", "b"} {
				h := w.Handle(id, n)
				if c := rtCount(w.LogLines(t), "destroy "+h); c != 1 || w.Exists(t, h) {
					t.Errorf("%s destroyed %d times (exists: %v), want exactly once: %q", h, c, w.Exists(t, h), w.LogLines(t))
				}
			}
			if ms := grMirrors(t, w); len(ms) != 0 {
				t.Errorf("mirrors left: %+v", ms)
			}
		})
	}
}

// TestGoneReposMovedKeeps: a repository moved to a new path (with a space)
// keeps its id; once custody has run there, gc --gone-repos finds it by
// its id, reports it moved, and destroys nothing.
func TestGoneReposMovedKeeps(t *testing.T) {
	t.Parallel()
	w, id := grTwoLive(t)
	moved := filepath.Join(w.R.Root, "moved repo")
	if err := os.Rename(w.R.Dir, moved); err != nil {
		t.Fatal(err)
	}
	// Any command in the moved repository records its new place.
	if res := clitest.RunBin(t, clitest.Bin(), w.R, moved, nil, "resource", "list"); res.Code != 0 {
		t.Fatalf("resource list in the moved repository:\n%s", res)
	}
	elsewhere := t.TempDir()
	for _, dry := range []bool{true, false} {
		got := grGone(t, w, clitest.Bin(), elsewhere, 0, dry)
		want := []string{id + "/a kept moved", id + "/b kept moved"}
		if d := cmp.Diff(want, grOutcomes(got.Items)); d != "" {
			t.Errorf("dry %v (-want +got):\n%s", dry, d)
		}
		for _, it := range got.Items {
			if it.MovedTo != moved {
				t.Errorf("%s moved to %q, want %q", it.ID, it.MovedTo, moved)
			}
		}
	}
	human := clitest.RunBin(t, clitest.Bin(), w.R, elsewhere, nil, "resource", "gc", "--gone-repos")
	if line := "moved         " + id + "/a (" + w.Handle(id, "a") + "): its repository moved to " + moved + "\n"; human.Code != 0 || !strings.Contains(human.Stdout, line) {
		t.Errorf("want the line %q, got\n%s", line, human)
	}
	w.WantLog(t, "create "+w.Handle(id, "a"), "create "+w.Handle(id, "b"))
	if ms := grMirrors(t, w); len(ms) != 2 {
		t.Errorf("the moved repository's mirrors: %+v", ms)
	}
}

// TestGoneReposMirrorFollowsTheLedger: a tree removed by custody takes
// its mirrors with it; a live repository's entries are never listed; the
// mirrors of destroyed entries that a kill would leave are removed by
// resource gc.
func TestGoneReposMirrorFollowsTheLedger(t *testing.T) {
	t.Parallel()
	w, id := grTwoLive(t)
	if got := grGone(t, w, clitest.Bin(), t.TempDir(), 0, true); len(got.Items) != 0 {
		t.Errorf("a live repository's entries listed: %+v", got.Items)
	}
	// Keep the files as a kill between the tombstone and the mirror's
	// removal would leave them.
	saved := map[string][]byte{}
	_ = filepath.WalkDir(grLedger(w), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			saved[p], _ = os.ReadFile(p)
		}
		return nil
	})
	w.RemoveTree(t, id, 0)
	if ms := grMirrors(t, w); len(ms) != 0 {
		t.Errorf("mirrors left after the tree was removed: %+v", ms)
	}
	for p, b := range saved {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if ms := grMirrors(t, w); len(ms) != 2 {
		t.Fatalf("restored %d mirrors, want 2", len(ms))
	}
	w.GC(t, 0, false)
	if ms := grMirrors(t, w); len(ms) != 0 {
		t.Errorf("resource gc left the mirrors of destroyed entries: %+v", ms)
	}
}

// grIDs is the sorted entry ids of mirrors.
func grIDs(ms []machine.Mirror) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Resource.ID)
	}
	slices.Sort(out)
	return out
}

// grLiveIDs is the sorted ids of the live ledger entries.
func grLiveIDs(t *testing.T, w *clitest.World) []string {
	t.Helper()
	var out []string
	for _, r := range w.Ledger(t, false) {
		out = append(out, r.ID)
	}
	slices.Sort(out)
	return out
}

// TestGoneReposKilledAfterMirror: custody new killed between a mirror and
// its create intent leaves a mirror of an entry never committed; resume
// and resource gc bring the user-level ledger back in line with the
// repository's (a mirror for each live entry, none else), and after rm -rf
// every resource made is destroyed once.
func TestGoneReposKilledAfterMirror(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("a", "", "")+clitest.ResourceDecl("b", "", ""), fixtures.Options{})
	w.Killed(t, "resource/after-mirror", "new", "crash")
	if ms := grMirrors(t, w); len(ms) != 1 || len(w.Ledger(t, true)) != 0 {
		t.Fatalf("want one mirror of an entry never committed, got mirrors %+v, ledger %+v", ms, w.Ledger(t, true))
	}
	clitest.MustCustody(t, w.R, 0, "resume")
	w.GC(t, 0, false)
	if d := cmp.Diff(grLiveIDs(t, w), grIDs(grMirrors(t, w))); d != "" {
		t.Errorf("mirrors against live entries (-live +mirrors):\n%s", d)
	}
	made := w.LogLines(t)
	if err := os.RemoveAll(w.R.Dir); err != nil {
		t.Fatal(err)
	}
	grGone(t, w, clitest.Bin(), t.TempDir(), 0, false)
	for _, l := range made {
		h, ok := strings.CutPrefix(l, "create ")
		if !ok {
			continue
		}
		if c := rtCount(w.LogLines(t), "destroy "+h); c < 1 || w.Exists(t, h) {
			t.Errorf("%s destroyed %d times (exists: %v): %q", h, c, w.Exists(t, h), w.LogLines(t))
		}
	}
	if ms := grMirrors(t, w); len(ms) != 0 {
		t.Errorf("mirrors left: %+v", ms)
	}
}

// TestGoneReposBackfill: entries a custody without the user-level ledger
// made (their mirrors removed here) are mirrored by resource gc.
func TestGoneReposBackfill(t *testing.T) {
	t.Parallel()
	w, _ := grTwoLive(t)
	if err := os.RemoveAll(grLedger(w)); err != nil {
		t.Fatal(err)
	}
	w.GC(t, 0, true)
	if ms := grMirrors(t, w); len(ms) != 0 {
		t.Errorf("gc --dry-run wrote mirrors: %+v", ms)
	}
	w.GC(t, 0, false)
	if d := cmp.Diff(grLiveIDs(t, w), grIDs(grMirrors(t, w))); d != "" {
		t.Errorf("mirrors against live entries (-live +mirrors):\n%s", d)
	}
}

// TestGoneReposFailedDestroyKept: a destroy that fails leaves its mirror
// with the failure recorded and no intent (exit 3, resource-failed); the
// next run, once the destroy can succeed, destroys it.
func TestGoneReposFailedDestroyKept(t *testing.T) {
	t.Parallel()
	destroy := "test ! -e {EXT}/fail && rm -rf {EXT}/@resource@ && echo destroy @resource@ >> {EXT}/log"
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", destroy), fixtures.Options{})
	made := w.New(t, "gone")
	if err := os.WriteFile(filepath.Join(w.Ext, "fail"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(w.R.Dir); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	got := grGone(t, w, clitest.Bin(), elsewhere, 3, false)
	if d := cmp.Diff([]string{made.ID + "/db failed resource-failed"}, grOutcomes(got.Items)); d != "" {
		t.Errorf("failed run (-want +got):\n%s", d)
	}
	ms := grMirrors(t, w)
	if len(ms) != 1 || ms[0].Resource.Intent != nil || ms[0].Resource.Evidence.Outcome != string(machine.TriggerDestroyFailed) {
		t.Fatalf("the failed destroy's mirror: %+v", ms)
	}
	if err := os.Remove(filepath.Join(w.Ext, "fail")); err != nil {
		t.Fatal(err)
	}
	got = grGone(t, w, clitest.Bin(), elsewhere, 0, false)
	if d := cmp.Diff([]string{made.ID + "/db destroyed"}, grOutcomes(got.Items)); d != "" {
		t.Errorf("second run (-want +got):\n%s", d)
	}
	if c := rtCount(w.LogLines(t), "destroy "+w.Handle(made.ID, "db")); c != 1 {
		t.Errorf("destroyed %d times, want once", c)
	}
}

// TestGoneReposConcurrent: two gc --gone-repos at once destroy each
// resource once, and neither exits 1.
func TestGoneReposConcurrent(t *testing.T) {
	t.Parallel()
	destroy := "sleep 1; echo destroy @resource@ >> {EXT}/log; rm -rf {EXT}/@resource@"
	w := clitest.SetupResources(t, clitest.ResourceDecl("a", "", destroy)+clitest.ResourceDecl("b", "", destroy), fixtures.Options{})
	made := w.New(t, "gone")
	if err := os.RemoveAll(w.R.Dir); err != nil {
		t.Fatal(err)
	}
	// The runs start in an empty directory where the repository was: its
	// git dir is still gone.
	if err := os.Mkdir(w.R.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	results := rtParallel(t, w.R, w.R.Env(), 2, func(int) []string { return []string{"resource", "gc", "--gone-repos", "--lock-timeout", "60s"} })
	for i, res := range results {
		if res.Code != 0 {
			t.Errorf("run #%d:\n%s", i, res)
		}
	}
	for _, n := range []string{"a", "b"} {
		h := w.Handle(made.ID, n)
		if c := rtCount(w.LogLines(t), "destroy "+h); c != 1 {
			t.Errorf("%s destroyed %d times by two runs at once, want once: %q", h, c, w.LogLines(t))
		}
	}
}

// TestGoneReposOtherHost: entries recorded on another host (a home
// directory shared between hosts) are kept and reported with their host,
// whatever this host sees at their paths.
func TestGoneReposOtherHost(t *testing.T) {
	t.Parallel()
	w, id := grTwoLive(t)
	err := filepath.WalkDir(grLedger(w), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m, err := machine.ParseMirror(b)
		if err != nil {
			return err
		}
		m.Repository.Host = "another-host"
		out, err := json.Marshal(m)
		if err != nil {
			return err
		}
		return os.WriteFile(p, out, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(w.R.Dir); err != nil {
		t.Fatal(err)
	}
	got := grGone(t, w, clitest.Bin(), t.TempDir(), 0, false)
	if d := cmp.Diff([]string{id + "/a kept", id + "/b kept"}, grOutcomes(got.Items)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, it := range got.Items {
		if it.Host != "another-host" {
			t.Errorf("%s: host %q, want another-host", it.ID, it.Host)
		}
	}
	w.WantLog(t, "create "+w.Handle(id, "a"), "create "+w.Handle(id, "b"))
}
