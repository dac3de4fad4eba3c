package archive_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/steps/archive"
	"github.com/google/go-cmp/cmp"
)

// TestArchiveNames: the archive directories' names under every
// repository's folder, sorted and each once; a capture's scratch (a name
// starting with "."), a file, and a root that does not exist give none.
func TestArchiveNames(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, d := range []string{"repo-a/b-2", "repo-a/a-1", "repo-b/a-1", "repo-b/.scratch", ".hidden/c-3"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "repo-a", "note"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := archive.ArchiveNames(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a-1", "b-2"}, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if got, err := archive.ArchiveNames(filepath.Join(root, "absent")); err != nil || len(got) != 0 {
		t.Errorf("a root that does not exist: %v, %v", got, err)
	}
}
