package gitfiles

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadIndexFileWithoutChecksum: an index whose checksum is all zeros
// (what index.skipHash writes; git does not verify the checksum as it
// reads) is read exactly as the same index with its checksum, in both
// object formats and in versions 2 and 4; one whose entries do not parse
// is still unreadable, and so is a checksum that is neither right nor
// zeros.
func TestReadIndexFileWithoutChecksum(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, format := range []ObjectFormat{FormatSHA1, FormatSHA256} {
		for _, version := range []string{"2", "4"} {
			dir := t.TempDir()
			if out, err := exec.Command("git", "init", "-q", "--object-format="+string(format), dir).CombinedOutput(); err != nil {
				t.Skipf("this git makes no %s repository: %s", format, out)
			}
			for _, f := range []string{"a.txt", "d/x.txt", "d/e/y.txt"} {
				p := filepath.Join(dir, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(f+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ctGit(t, dir, "add", ".")
			ctGit(t, dir, "commit", "-q", "-m", "one")
			ctGit(t, dir, "update-index", "--index-version", version)
			index := filepath.Join(dir, ".git", "index")
			want, err := ReadIndexFileWhole(index)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(index)
			if err != nil {
				t.Fatal(err)
			}
			n := len(want.Ents[0].OID) / 2
			zero := append(append([]byte(nil), b[:len(b)-n]...), make([]byte, n)...)
			if err := os.WriteFile(index, zero, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadIndexFileWhole(index)
			if err != nil {
				t.Fatalf("%s v%s without a checksum: %v", format, version, err)
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(IndexFile{}, cacheTree{}, cacheTreeNode{})); diff != "" {
				t.Errorf("%s v%s without a checksum (-with +without):\n%s", format, version, diff)
			}
			for name, bad := range map[string][]byte{
				"entries that do not parse": append(append([]byte(nil), zero[:12]...), append(make([]byte, len(zero)-12-n), zero[len(zero)-n:]...)...),
				"a wrong checksum":          append(append([]byte(nil), b[:len(b)-1]...), b[len(b)-1]^1),
			} {
				if err := os.WriteFile(index, bad, 0o644); err != nil {
					t.Fatal(err)
				}
				if _, err := ReadIndexFileWhole(index); !errors.Is(err, ErrIndexUnreadable) {
					t.Errorf("%s v%s, %s: %v, want errIndexUnreadable", format, version, name, err)
				}
			}
		}
	}
}
