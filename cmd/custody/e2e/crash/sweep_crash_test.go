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
