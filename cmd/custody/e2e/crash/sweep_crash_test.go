//go:build unix

package crash

// A sweep killed at each sweep/* failpoint (after its intent entry, midway
// through a build directory's deletion), then run again, ends where an
// uninterrupted sweep ends: the idle tree's build output gone and every
// other file of it there, the record still active with no intent, a
// journal that verifies and holds the interrupted intent, and a clean
// doctor.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/steps"
)

func TestSweepCrash(t *testing.T) {
	points := 0
	for _, point := range steps.Failpoints() {
		if !strings.HasPrefix(point, "sweep/") {
			continue
		}
		points++
		t.Run(strings.ReplaceAll(point, "/", "_"), func(t *testing.T) {
			t.Parallel()
			r := clitest.InitSpacedRepo(t, fixtures.Options{})
			id, path := clitest.NewTree(t, r, "built")
			r.WriteFile(path, "Cargo.toml", "[package]\nname = \"x\"\n")
			r.CommitAll(path, "crate")
			r.WriteFile(path, "target/.rustc_info.json", "{}\n")
			for _, f := range []string{"a", "b", "c", "deps/d", "deps/e"} {
				r.WriteFile(path, "target/debug/"+f, strings.Repeat("x", 100))
			}
			r.WriteFile(path, "notes.txt", "the person's, untracked\n")
			time.Sleep(1100 * time.Millisecond) // idle for --idle 1s
			killed := clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, []string{"CUSTODY_FAILPOINT=" + point}, "sweep", "--idle", "1s")
			if killed.Code != -1 {
				t.Fatalf("custody sweep with CUSTODY_FAILPOINT=%s was not killed:\n%s", point, killed)
			}
			if _, err := os.Stat(filepath.Join(path, "target")); err != nil {
				t.Fatalf("killed at %s, target/ is gone whole: the point was not midway (%v)", point, err)
			}
			// The deletion that was cut short changed the directories it
			// emptied: the tree is idle again only after --idle.
			time.Sleep(1100 * time.Millisecond)
			again := clitest.MustCustody(t, r, 0, "sweep", "--idle", "1s")
			if _, err := os.Lstat(filepath.Join(path, "target")); !os.IsNotExist(err) {
				t.Errorf("the sweep after the kill left target/ (%v):\n%s", err, again)
			}
			for _, keep := range []string{"Cargo.toml", "notes.txt"} {
				if _, err := os.Stat(filepath.Join(path, keep)); err != nil {
					t.Errorf("%s is gone: %v", keep, err)
				}
			}
			show := clitest.MustCustody(t, r, 0, "list", "--json")
			if !strings.Contains(show.Stdout, `"id": "`+id+`"`) || !strings.Contains(show.Stdout, `"state": "active"`) {
				t.Errorf("the record is not active after the sweeps:\n%s", show.Stdout)
			}
			exp := filepath.Join(r.Root, "journal.jsonl")
			clitest.MustCustody(t, r, 0, "journal", "export", "-o", exp)
			clitest.MustCustody(t, r, 0, "journal", "verify", exp)
			b, err := os.ReadFile(exp)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(b), `"event":"sweep-discard"`); n != 2 {
				t.Errorf("%d sweep-discard intents journaled; want 2 (the killed one and the one that finished)", n)
			}
			clitest.MustCustody(t, r, 0, "doctor")
		})
	}
	if points == 0 {
		t.Fatal("steps.Failpoints() lists no sweep/ failpoint")
	}
}

// TestSweepRechecksBeforeDeleting holds a sweep after its snapshots, just
// before it looks at the trees again, and meanwhile: a session leases one
// tree, a file is written into another's build directory, and a third's
// directory stops being build output (its .rustc_info.json removed and a
// note put there). Released, the sweep deletes nothing of the leased tree,
// deletes the second tree's build output but the new file (and the
// directories holding it), and leaves the third's directory whole.
func TestSweepRechecksBeforeDeleting(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	paths := map[string]string{}
	ids := map[string]string{}
	for _, name := range []string{"leased", "written", "changed"} {
		id, path := clitest.NewTree(t, r, name)
		r.WriteFile(path, "Cargo.toml", "[package]\nname = \"x\"\n")
		r.CommitAll(path, "crate")
		r.WriteFile(path, "target/.rustc_info.json", "{}\n")
		r.WriteFile(path, "target/debug/app", "compiled\n")
		r.WriteFile(path, "target/debug/deps/lib.rlib", "compiled\n")
		paths[name], ids[name] = path, id
	}
	time.Sleep(1100 * time.Millisecond) // idle for --idle 1s
	release, wait := clitest.Paused(t, r, "sweep/before-recheck", "sweep", "--idle", "1s")
	// While it is held:
	lease := clitest.RunBin(t, clitest.Bin(), r, paths["leased"], nil, "hook", "session-start", "--session", "s1")
	if lease.Code != 0 || !strings.Contains(lease.Stdout, `"outcome":"acquired"`) {
		t.Fatalf("session-start:\n%s", lease)
	}
	r.WriteFile(paths["written"], "target/debug/deps/late.rlib", "written after the check\n")
	if err := os.Remove(filepath.Join(paths["changed"], "target", ".rustc_info.json")); err != nil {
		t.Fatal(err)
	}
	r.WriteFile(paths["changed"], "target/NOTES.md", "mine now\n")
	release()
	res := wait()
	if res.Code != 0 {
		t.Fatalf("the held sweep:\n%s", res)
	}
	for _, f := range []string{"target/debug/app", "target/debug/deps/lib.rlib"} {
		if _, err := os.Stat(filepath.Join(paths["leased"], f)); err != nil {
			t.Errorf("the leased tree lost %s: %v\n%s", f, err, res)
		}
	}
	if !strings.Contains(res.Stdout, "kept target: leased by s1 since it was checked") {
		t.Errorf("the output does not say the leased tree's target/ was kept:\n%s", res)
	}
	if b, err := os.ReadFile(filepath.Join(paths["written"], "target", "debug", "deps", "late.rlib")); err != nil || string(b) != "written after the check\n" {
		t.Errorf("the file written after the check: %q, %v\n%s", b, err, res)
	}
	for _, f := range []string{"target/.rustc_info.json", "target/debug/app", "target/debug/deps/lib.rlib"} {
		if _, err := os.Lstat(filepath.Join(paths["written"], f)); !os.IsNotExist(err) {
			t.Errorf("%s of the written tree was unchanged since the check and is still there (%v)", f, err)
		}
	}
	for _, f := range []string{"target/NOTES.md", "target/debug/app", "target/debug/deps/lib.rlib"} {
		if _, err := os.Stat(filepath.Join(paths["changed"], f)); err != nil {
			t.Errorf("the tree whose target/ is no longer build output lost %s: %v\n%s", f, err, res)
		}
	}
	if !strings.Contains(res.Stdout, "kept target: it is no longer recognised as cargo-target build output") {
		t.Errorf("the output does not say why the changed tree's target/ was kept:\n%s", res)
	}
}

// TestSweepLeavesWhatWasWrittenAfterTheCheck holds a sweep after the check
// that found a tree idle, before its snapshots, and meanwhile writes a file
// into the tree's build directory, appends to another there and rewrites
// a third in place with its size and times kept. Released,
// the sweep deletes the rest of the build output and leaves the three files
// and the directories holding them: they are in its snapshot, but changed
// after the check.
func TestSweepLeavesWhatWasWrittenAfterTheCheck(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	_, path := clitest.NewTree(t, r, "written")
	r.WriteFile(path, "Cargo.toml", "[package]\nname = \"x\"\n")
	r.CommitAll(path, "crate")
	r.WriteFile(path, "target/.rustc_info.json", "{}\n")
	r.WriteFile(path, "target/debug/app", "compiled\n")
	r.WriteFile(path, "target/debug/deps/lib.rlib", "compiled\n")
	r.WriteFile(path, "target/debug/deps/same.rlib", "compiled\n")
	time.Sleep(1100 * time.Millisecond) // idle for --idle 1s
	release, wait := clitest.Paused(t, r, "sweep/before-snapshot", "sweep", "--idle", "1s")
	// Rewritten in place, its size and modification time as they were:
	// only its change time, and the watch, say so.
	same := filepath.Join(path, "target", "debug", "deps", "same.rlib")
	before, err := os.Lstat(same)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(same, []byte("COMPILED\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(same, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	r.WriteFile(path, "target/debug/deps/late.rlib", "written after the check\n")
	f, err := os.OpenFile(filepath.Join(path, "target", "debug", "app"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("relinked\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	release()
	res := wait()
	if res.Code != 0 {
		t.Fatalf("the held sweep:\n%s", res)
	}
	for f, want := range map[string]string{"target/debug/deps/late.rlib": "written after the check\n", "target/debug/app": "compiled\nrelinked\n",
		"target/debug/deps/same.rlib": "COMPILED\n"} {
		if b, err := os.ReadFile(filepath.Join(path, filepath.FromSlash(f))); err != nil || string(b) != want {
			t.Errorf("%s, written after the check: %q, %v\n%s", f, b, err, res)
		}
	}
	for _, f := range []string{"target/.rustc_info.json", "target/debug/deps/lib.rlib"} {
		if _, err := os.Lstat(filepath.Join(path, filepath.FromSlash(f))); !os.IsNotExist(err) {
			t.Errorf("%s was unchanged since the check and is still there (%v)\n%s", f, err, res)
		}
	}
}
