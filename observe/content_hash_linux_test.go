//go:build linux && (amd64 || arm64)

package observe

import (
	"fmt"
	"github.com/custody-sh/custody/observe/gitfiles"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestHashFileDirectIsHashFileOS: reading a file with plain system calls
// gives exactly what reading it through os gives — the blob id, the error
// as worded, and the fstat after the read — for empty, small, 32 KiB
// boundary and larger files, an executable, a symlink (never followed), a
// FIFO (never blocked on), a missing file and one that cannot be opened.
func TestHashFileDirectIsHashFileOS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, size int, mode os.FileMode) {
		t.Helper()
		b := []byte(strings.Repeat("custody\n", size/8+1)[:size])
		if err := os.WriteFile(filepath.Join(dir, name), b, mode); err != nil {
			t.Fatal(err)
		}
	}
	sizes := []int{0, 1, 100, 32<<10 - 1, 32 << 10, 32<<10 + 1, 300 << 10}
	for _, n := range sizes {
		write(fmt.Sprintf("f%d", n), n, 0o644)
	}
	write("exec", 10, 0o755)
	write("locked", 10, 0)
	if err := os.Symlink("f100", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	names := []string{"exec", "locked", "link", "pipe", "missing"}
	for _, n := range sizes {
		names = append(names, fmt.Sprintf("f%d", n))
	}
	f100, err := os.Lstat(filepath.Join(dir, "f100"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		p := filepath.Join(dir, name)
		info, err := os.Lstat(p)
		if err != nil {
			info = f100 // a missing file: any identity will do
		}
		for _, format := range []gitfiles.ObjectFormat{gitfiles.FormatSHA1, gitfiles.FormatSHA256} {
			wantOID, wantThen, wantErr := hashFileOS(format, p, info, true)
			gotOID, gotThen, done, gotErr := hashFileDirect(format, p, info, true)
			if !done {
				t.Fatalf("%s: hashFileDirect did not read", name)
			}
			if gotOID != wantOID || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Errorf("%s (%s): direct %q, %v; through os %q, %v", name, format, gotOID, gotErr, wantOID, wantErr)
			}
			if (wantThen == nil) != (gotThen == nil) {
				t.Errorf("%s: fstat after the read: direct %v, through os %v", name, gotThen, wantThen)
			} else if wantThen != nil {
				wk, _ := keyOf(wantThen)
				gk, _ := keyOf(gotThen)
				if wk != gk || gotThen.Mode() != wantThen.Mode() || gotThen.Name() != wantThen.Name() {
					t.Errorf("%s: fstat after the read: direct %+v %v, through os %+v %v", name, gk, gotThen.Mode(), wk, wantThen.Mode())
				}
			}
		}
	}
}
