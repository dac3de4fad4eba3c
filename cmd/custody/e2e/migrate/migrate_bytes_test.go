package migrate

// Names are bytes through the legacy migration: trees whose paths hold a
// newline, markup, table characters and bytes that are not UTF-8, on
// branches named with such bytes, are discovered, planned, disposed,
// applied and reported byte for byte, and the journal accounts for them.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps/archive"
	"github.com/custody-sh/custody/steps/migrate"
)

func TestMigrateNamesAreBytes(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{Name: "m\x80|\n<r>"})
	clitest.MustCustody(t, r, 0, "init")
	add := func(dir, branch string) string {
		p := filepath.Join(r.Root, dir)
		r.Git("worktree", "add", "-q", "-b", branch, p, "main")
		return p
	}
	trees := map[string]string{} // role → path
	branches := map[string]string{"published": "b\x82|`<i>", "dirty": "d\x84", "unpushed": "u\x87|"}
	trees["published"] = add("s\x81|<\n x", branches["published"])
	r.Commit(trees["published"], "p\x88.txt", "published\n")
	r.Push(trees["published"], branches["published"])
	trees["dirty"] = add("d\x83 `|`\n", branches["dirty"])
	untracked := "n\x85\n|.txt"
	r.WriteFile(trees["dirty"], untracked, "untracked notes\n")
	trees["unpushed"] = add("u\x86\n|", branches["unpushed"])
	unpushedHead := r.Commit(trees["unpushed"], "one.txt", "never pushed\n")

	d := clitest.DecodeResult[migrate.MigrateDiscovery](t, clitest.MustCustody(t, r, 3, "--json", "migrate", "discover"), "migrate discover")
	classes := map[string]machine.MigrateClass{}
	for _, p := range d.Places {
		classes[p.Path] = p.Class
	}
	for role, p := range trees {
		if classes[p] != machine.ClassLinked {
			t.Errorf("discover: the %s tree %q is %q, want linked (places %+v)", role, p, classes[p], d.Places)
		}
	}

	planFile := filepath.Join(r.Root, "migrate.json")
	clitest.MustCustody(t, r, 0, "migrate", "plan", "-o", planFile)
	b, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(b) {
		t.Errorf("the migrate plan is not UTF-8 text")
	}
	p, err := machine.ParseMigratePlan(b)
	if err != nil {
		t.Fatalf("the migrate plan does not read back: %v", err)
	}
	role := map[string]string{} // candidate id → role
	for _, c := range p.Candidates {
		for ro, path := range trees {
			if c.Audit.Path == path {
				role[c.Audit.ID] = ro
				if c.Audit.Branch != "refs/heads/"+branches[ro] && c.Audit.Branch != branches[ro] {
					t.Errorf("plan: the %s tree's branch is %q, want %q", ro, c.Audit.Branch, branches[ro])
				}
			}
		}
	}
	if len(role) != len(trees) {
		t.Fatalf("plan: candidates %+v do not name the trees %q byte for byte", p.Candidates, trees)
	}
	for _, c := range p.Candidates {
		clitest.MustCustody(t, r, 0, "migrate", "dispose", c.Audit.ID, "--approve", "--digest", c.Digest)
	}
	clitest.MustCustody(t, r, 0, "migrate", "apply", planFile, "--allow-external-retirement")

	st := clitest.MigrateStatus(t, r, 0)
	if !st.Complete {
		t.Fatalf("migration not complete: %+v", st)
	}
	want := map[string]machine.MigrateState{"published": machine.MigrateRemoved, "dirty": machine.MigrateRemoved, "unpushed": machine.MigrateRetained}
	for _, c := range st.Candidates {
		if ro := role[c.ID]; c.State != want[ro] || c.Path != trees[ro] {
			t.Errorf("status: %s (%q) is %s at %q, want %s at %q", c.ID, ro, c.State, c.Path, want[ro], trees[ro])
		}
	}
	for id, ro := range role {
		if ro != "unpushed" {
			continue
		}
		ref := "refs/heads/custody/review/" + id
		if got, _ := r.TryGitIn(r.Remote, "rev-parse", ref); got != unpushedHead {
			t.Errorf("review branch %q = %q, want %s", ref, got, unpushedHead)
		}
	}
	human := clitest.MustCustody(t, r, 0, "migrate", "status").Stdout
	if !utf8.ValidString(human) {
		t.Errorf("migrate status printed bytes that are not UTF-8:\n%s", human)
	}
	for _, l := range strings.Split(strings.TrimSuffix(human, "\n"), "\n") {
		if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			continue
		}
		for _, path := range trees {
			if strings.HasPrefix(path, l) && l != path {
				t.Errorf("migrate status split a name over lines: %q", l)
			}
		}
	}

	// The dirty tree's archive gives back its untracked file by name.
	lst := clitest.DecodeResult[struct {
		Archives []archive.ArchiveCheck `json:"archives"`
	}](t, clitest.MustCustody(t, r, 0, "--json", "archive", "list"), "archive list")
	restored := filepath.Join(r.Root, "restored")
	for _, a := range lst.Archives {
		if role[a.Record] == "dirty" {
			clitest.MustCustody(t, r, 0, "archive", "restore", a.ID, restored)
		}
	}
	if got, err := os.ReadFile(filepath.Join(restored, untracked)); err != nil || string(got) != "untracked notes\n" {
		t.Errorf("restored %q: %q, %v", untracked, got, err)
	}
	clitest.MigrateCheckJournal(t, r, st)
}
