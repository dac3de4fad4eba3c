//go:build unix

package observe

import (
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSmallFilesAreNeverFollowedOrBlocked checks that the one-line files
// custody reads beside a tree (the tree's .git file, the admin entry's
// gitdir, the ready marker) are refused when they are a symlink to a
// device, a FIFO or too large: the read returns at once and names no key.
func TestSmallFilesAreNeverFollowedOrBlocked(t *testing.T) {
	t.Parallel()
	cases := map[string]func(t *testing.T, p string){
		"symlink to /dev/zero": func(t *testing.T, p string) {
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		},
		"FIFO": func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"too large": func(t *testing.T, p string) {
			if err := os.WriteFile(p, append([]byte("gitdir: "), make([]byte, gitfiles.SmallFileLimit)...), 0o644); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			repo := hostio.Repo{CommonDir: filepath.Join(root, "common"), MainCheckout: filepath.Join(root, "main")}
			tree := filepath.Join(root, "tree")
			admin := repo.AdminDir("k")
			for _, d := range []string{tree, admin} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			plant(t, filepath.Join(tree, ".git"))
			plant(t, filepath.Join(admin, gitfiles.MarkerName))
			done := make(chan struct{})
			go func() {
				defer close(done)
				if key := gitfiles.AdminKeyOf(repo, tree); key != "" {
					t.Errorf("AdminKeyOf = %q through a %s .git file, want none", key, name)
				}
				if id, err := gitfiles.ReadMarker(repo, "k"); err == nil || id != "" {
					t.Errorf("ReadMarker = %q, %v for a %s marker, want an error", id, err, name)
				}
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("reading a %s blocked", name)
			}
		})
	}
}
