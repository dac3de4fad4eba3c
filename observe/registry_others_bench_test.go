package observe

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkOtherEntries is what one assessment's observation pays to know
// the other entries naming its tree, in a registry of 1,000 entries: every
// gitdir read and every named path stat'ed once (one tree's inventory, as
// apply observes), and the lookup alone once the entries are read (plan's
// share per tree, the read being shared by all its trees).
func BenchmarkOtherEntries(b *testing.B) {
	root := b.TempDir()
	repo := Repo{CommonDir: filepath.Join(root, "repo", ".git"), MainCheckout: filepath.Join(root, "repo")}
	for i := range 1000 {
		tree := filepath.Join(root, "trees", "t"+strconv.Itoa(i))
		admin := repo.AdminDir("t" + strconv.Itoa(i))
		for _, d := range []string{tree, admin} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(admin, "gitdir"), []byte(filepath.Join(tree, ".git")+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	tree := filepath.Join(root, "trees", "t500")
	pi := Lstat(tree)
	id := Identity{Dev: pi.Dev, Ino: pi.Ino}
	b.Run("read-and-look-up", func(b *testing.B) {
		for b.Loop() {
			inv := Inventory{names: newAdminNames(repo), partial: true}
			if got := inv.OtherEntries(tree, "t500", "t500", true, id, true); len(got) != 0 {
				b.Fatal(got)
			}
		}
	})
	b.Run("look-up", func(b *testing.B) {
		inv := Inventory{names: newAdminNames(repo), partial: true}
		for b.Loop() {
			if got := inv.OtherEntries(tree, "t500", "t500", true, id, true); len(got) != 0 {
				b.Fatal(got)
			}
		}
	})
}
