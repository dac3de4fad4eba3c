package quarantine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// deleteFixture makes n files (and one non-empty directory named "full",
// which os.Remove cannot delete) under a temporary directory.
func deleteFixture(t *testing.T, n int) (string, []quarantinedFile) {
	t.Helper()
	q := t.TempDir()
	var files []quarantinedFile
	for i := range n {
		rel := fmt.Sprintf("d%d/f%03d", i%7, i)
		p := filepath.Join(q, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, quarantinedFile{path: p, rel: rel})
	}
	return q, files
}

// rels are the relative paths of files.
func rels(files []quarantinedFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.rel)
	}
	return out
}

// byPath deletes a file by its path once verify passes it.
func byPath(verify func(quarantinedFile) string) func() (func(quarantinedFile) (string, error), func()) {
	return func() (func(quarantinedFile) (string, error), func()) {
		return func(f quarantinedFile) (string, error) {
			if why := verify(f); why != "" {
				return why, nil
			}
			return "", os.Remove(f.path)
		}, func() {}
	}
}

// TestDeleteCheckedVerifiesEachFileFirst: every file is verified right
// before it is deleted and only then deleted; all of them go when each
// passes (the list sorted, afterFirst run once); the file verify objects
// to stays and is named with why; a file that cannot be deleted is named
// with its error; nothing verify objected to or did not see is ever
// deleted, and every file gone is reported deleted.
func TestDeleteCheckedVerifiesEachFileFirst(t *testing.T) {
	t.Parallel()
	exists := func(p string) bool {
		_, err := os.Lstat(p)
		return !errors.Is(err, fs.ErrNotExist)
	}

	t.Run("all", func(t *testing.T) {
		t.Parallel()
		_, files := deleteFixture(t, 100)
		var mu sync.Mutex
		verified := map[string]bool{}
		var firsts atomic.Int32
		got, halt := deleteChecked(files, byPath(func(f quarantinedFile) string {
			if !exists(f.path) {
				t.Errorf("%s verified after it was deleted", f.rel)
			}
			mu.Lock()
			verified[f.rel] = true
			mu.Unlock()
			return ""
		}), func() { firsts.Add(1) })
		deleted := rels(got)
		if halt != nil {
			t.Fatalf("stopped: %+v", halt)
		}
		var want []string
		for _, f := range files {
			want = append(want, f.rel)
			if exists(f.path) {
				t.Errorf("%s was not deleted", f.rel)
			}
			if !verified[f.rel] {
				t.Errorf("%s was deleted without being verified", f.rel)
			}
		}
		slices.Sort(want)
		if diff := cmp.Diff(want, deleted); diff != "" {
			t.Errorf("deleted (-want +got):\n%s", diff)
		}
		if n := firsts.Load(); n != 1 {
			t.Errorf("afterFirst ran %d times, want once", n)
		}
	})

	t.Run("changed", func(t *testing.T) {
		t.Parallel()
		_, files := deleteFixture(t, 100)
		bad := files[40]
		var mu sync.Mutex
		verified := map[string]bool{}
		got, halt := deleteChecked(files, byPath(func(f quarantinedFile) string {
			mu.Lock()
			verified[f.rel] = true
			mu.Unlock()
			if f == bad {
				return "its bytes differ from HEAD"
			}
			return ""
		}), func() {})
		deleted := rels(got)
		if halt == nil || halt.path != bad.path || halt.why != "its bytes differ from HEAD" || halt.err != nil {
			t.Fatalf("halt = %+v, want %s with why", halt, bad.path)
		}
		if !exists(bad.path) {
			t.Errorf("the file verify objected to was deleted")
		}
		for _, rel := range deleted {
			if !verified[rel] || rel == bad.rel {
				t.Errorf("%s deleted without passing verify", rel)
			}
		}
		gone := 0
		for _, f := range files {
			if !exists(f.path) {
				gone++
				if !slices.Contains(deleted, f.rel) {
					t.Errorf("%s is gone but not reported deleted", f.rel)
				}
			}
		}
		if gone != len(deleted) {
			t.Errorf("%d files gone, %d reported", gone, len(deleted))
		}
	})

	t.Run("undeletable", func(t *testing.T) {
		t.Parallel()
		q, files := deleteFixture(t, 20)
		full := filepath.Join(q, "full")
		if err := os.MkdirAll(filepath.Join(full, "inside"), 0o755); err != nil {
			t.Fatal(err)
		}
		files = append(files[:10:10], append([]quarantinedFile{{path: full, rel: "full"}}, files[10:]...)...)
		got, halt := deleteChecked(files, byPath(func(quarantinedFile) string { return "" }), func() {})
		deleted := rels(got)
		if halt == nil || halt.path != full || halt.err == nil {
			t.Fatalf("halt = %+v, want %s with an error", halt, full)
		}
		if slices.Contains(deleted, "full") || !exists(full) {
			t.Errorf("the undeletable entry is reported deleted or gone")
		}
	})

	t.Run("none", func(t *testing.T) {
		t.Parallel()
		got, halt := deleteChecked(nil, byPath(func(quarantinedFile) string { return "" }), func() { t.Error("afterFirst ran with nothing deleted") })
		deleted := rels(got)
		if halt != nil || len(deleted) != 0 {
			t.Errorf("deleteChecked(nil) = %v, %+v", deleted, halt)
		}
	})
}
