//go:build unix

package observe_test

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/custody-sh/custody/observe"
)

// TestExtractImageNotThroughSymlinks: an image that makes a symlink and then names
// an entry below it (or a directory over it) is refused, and nothing is
// written where the symlink points.
func TestExtractImageNotThroughSymlinks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		after tar.Header
	}{
		{"file below", tar.Header{Name: "a/f", Typeflag: tar.TypeReg, Mode: 0o644, Size: 2}},
		{"dir below", tar.Header{Name: "a/d/", Typeflag: tar.TypeDir, Mode: 0o755}},
		{"dir over", tar.Header{Name: "a/", Typeflag: tar.TypeDir, Mode: 0o777}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outside := t.TempDir()
			var b bytes.Buffer
			tw := tar.NewWriter(&b)
			if err := tw.WriteHeader(&tar.Header{Name: "a", Typeflag: tar.TypeSymlink, Linkname: outside}); err != nil {
				t.Fatal(err)
			}
			h := tc.after
			if err := tw.WriteHeader(&h); err != nil {
				t.Fatal(err)
			}
			if h.Size > 0 {
				tw.Write([]byte("x\n"))
			}
			tw.Close()
			before, _ := os.Stat(outside)
			err := observe.ExtractImage(&b, filepath.Join(t.TempDir(), "restore"))
			if err == nil || !strings.Contains(err.Error(), "a") {
				t.Fatalf("extract: %v, want a refusal", err)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Errorf("written outside the restore directory: %v", ents)
			}
			if after, _ := os.Stat(outside); after.Mode() != before.Mode() {
				t.Errorf("the symlink's target changed mode: %v → %v", before.Mode(), after.Mode())
			}
		})
	}
}

// TestScanTreeUnsupportedPath: an entry no archive can restore is named by
// its own path, whatever the name holds (" (" included), apart from why.
func TestScanTreeUnsupportedPath(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a (1)"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "a (1)", "p (2)"), 0o644); err != nil {
		t.Fatal(err)
	}
	scan, err := observe.ScanTree(root, observe.FormatSHA1)
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Unsupported) != 1 || scan.Unsupported[0].Path != "a (1)/p (2)" || scan.Unsupported[0].Why == "" {
		t.Fatalf("unsupported %+v, want the fifo named by its path", scan.Unsupported)
	}
	if got, want := scan.UnsupportedText(), scan.Unsupported[0].Path+" ("+scan.Unsupported[0].Why+")"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}
