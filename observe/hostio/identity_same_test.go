package hostio

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSameFileByIdentity: a symlink, a "..", a doubled or trailing slash
// name the same directory as its real path; a sibling does not.
func TestSameFileByIdentity(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	home := filepath.Join(root, "home", "me")
	other := filepath.Join(root, "home", "you")
	for _, d := range []string{home, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "homelink")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, home + "/", filepath.Join(root, "home") + "//me", other + "/../me"} {
		if same, err := SameFile(p, home); err != nil || !same {
			t.Errorf("SameFile(%q, %q) = %v, %v; want true", p, home, same, err)
		}
	}
	if same, err := SameFile(other, home); err != nil || same {
		t.Errorf("SameFile(sibling) = %v, %v; want false", same, err)
	}
	if _, err := SameFile(filepath.Join(root, "none"), home); err == nil {
		t.Error("SameFile of a missing path gave no error: unknown must not read as different")
	}
}

// TestEnclosesByIdentity: a symlink to the checkout's parent encloses the
// checkout; a symlink to a sibling does not; the checkout encloses itself.
func TestEnclosesByIdentity(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	checkout := filepath.Join(root, "src", "repo")
	sibling := filepath.Join(root, "src", "other")
	for _, d := range []string{checkout, sibling} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	up := filepath.Join(root, "up")
	if err := os.Symlink(filepath.Join(root, "src"), up); err != nil {
		t.Fatal(err)
	}
	side := filepath.Join(root, "side")
	if err := os.Symlink(sibling, side); err != nil {
		t.Fatal(err)
	}
	for outer, want := range map[string]bool{up: true, checkout: true, filepath.Join(up, "repo"): true, side: false, sibling: false} {
		if got, err := Encloses(outer, checkout); err != nil || got != want {
			t.Errorf("Encloses(%q, checkout) = %v, %v; want %v", outer, got, err, want)
		}
	}
}
