package steps

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/observe/hostio"
)

// TestRemovalTargetByIdentity: the removal primitive knows $HOME and the
// main checkout by device and inode, so a symlink to them is refused
// whatever its path spells, and an unrelated directory is not.
func TestRemovalTargetByIdentity(t *testing.T) {
	home := t.TempDir()
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(home, alias); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	t.Setenv("HOME", home)
	if !isHome(alias) || !isHome(home) {
		t.Errorf("a symlink to $HOME (or $HOME itself) is not recognized as home")
	}
	if isHome(other) {
		t.Errorf("an unrelated directory counts as home")
	}
	t.Setenv("HOME", filepath.Join(other, "missing"))
	if isHome(other) {
		t.Errorf("with no readable home, a directory counts as home")
	}

	parent := t.TempDir()
	checkout := filepath.Join(parent, "repo")
	if err := os.Mkdir(checkout, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "parent-alias")
	if err := os.Symlink(parent, link); err != nil {
		t.Fatal(err)
	}
	if !identityMatch(hostio.Encloses, link, checkout) {
		t.Errorf("a symlink to the main checkout's parent does not enclose it")
	}
	if identityMatch(hostio.Encloses, other, checkout) {
		t.Errorf("an unrelated directory encloses the main checkout")
	}
}
