//go:build unix

package observe_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
)

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
	scan, err := observe.ScanTree(root, gitfiles.FormatSHA1)
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
